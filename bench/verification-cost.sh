#!/bin/sh
# What the evidence and agreement layers cost (issue 32): a 6-candidate run
# on a small Rust crate with one dependency (regex, from the local cargo
# registry: --offline), timed as
#
#   gate only       the test guardrail is a plain command (`tests: false`),
#                   no cross-tests;
#   + evidence      the test guardrail judged by its results: the base's
#                   listing and failures, the base's tests on each change;
#   + agreement     and the passing candidates' tests run on each other
#                   (the default).
#
# Each configuration runs cold (a fresh state directory: no base results
# cached, no build seed), then warm (the base's results and build seed from
# the cold run), then warm with the seed removed before each run (each
# candidate's checks build the dependency again, as before the seed).
# Usage: bench/verification-cost.sh [RASCAL]
set -e
RASCAL=${1:-$(pwd)/target/release/rascal}
W=$(mktemp -d /tmp/verify-cost-XXXX)
trap 'rm -rf "$W"' EXIT
R=$W/repo
mkdir -p "$R/src" "$R/.rascal"; cd "$R"
git init -q; git config user.email a@b; git config user.name n
printf '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\nregex = "1"\n' > Cargo.toml
printf '/target\n' > .gitignore
cat > src/lib.rs <<'R'
/// The numbers in `text`, added.
pub fn add(text: &str) -> i64 {
    let re = regex::Regex::new(r"-?[0-9]+").unwrap();
    let n: Vec<i64> = re.find_iter(text).map(|m| m.as_str().parse().unwrap()).collect();
    n[0] - n[1]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add("2 + 2"), 4);
    }
}
R
cargo generate-lockfile --offline -q
mkdir agents
cat > agents/fix.sh <<'A'
sed -i 's/n\[0\] - n\[1\]/n[0] + n[1]/' src/lib.rs
A
cat > agents/tests.sh <<'A'
/usr/bin/python3 - <<'P'
s = open("src/lib.rs").read()
s = s.replace("    use super::*;\n", """    use super::*;

    #[test]
    fn adds_negatives() {
        assert_eq!(add("-1 + -2"), -3);
    }

    #[test]
    fn adds_zero() {
        assert_eq!(add("0 + 5"), 5);
    }
""")
open("src/lib.rs", "w").write(s)
P
A
cat > agents/wrong.sh <<'A'
sed -i 's/n\[0\] - n\[1\]/n[0] * n[1]/' src/lib.rs
/usr/bin/python3 - <<'P'
s = open("src/lib.rs").read()
s = s.replace("    use super::*;\n", """    use super::*;

    #[test]
    fn adds_threes() {
        assert_eq!(add("3 + 3"), 9);
    }
""")
open("src/lib.rs", "w").write(s)
P
A
cat > .rascal/config.yaml <<'R'
agents:
  small: { runtime: command, command: ["sh", "agents/fix.sh"] }
  many: { runtime: command, command: ["sh", "-c", "sh agents/fix.sh && sh agents/tests.sh"] }
  also: { runtime: command, command: ["sh", "-c", "sh agents/fix.sh && sed -i 's/fn adds()/fn adds_two()/' src/lib.rs"] }
  wrong: { runtime: command, command: ["sh", "agents/wrong.sh"] }
  cheat: { runtime: command, command: ["sh", "-c", "sed -i 's/, 4);/, 0);/' src/lib.rs"] }
  idle: { runtime: command, command: ["sh", "-c", "echo '// looked' >> src/lib.rs"] }
strategy: { agents: [small, many, also, wrong, cheat, idle], max_parallel: 6 }
R
git add -A; git commit -qm base
guard() { printf 'guardrails:\n  - { name: tests, command: "cargo test --offline --quiet", timeout: 600s%s }\n' "$1" > .rascal/guardrails.yaml; }
t() { /usr/bin/time -f "%e" "$RASCAL" run "make add() correct" >/dev/null 2>"$W/time" || true; tail -1 "$W/time"; }
unseeded() { find "$XDG_STATE_HOME" -name build-seed -prune -exec rm -rf {} +; t; }
measure() {
  git add -A; git commit -qm "$1" --allow-empty
  export XDG_STATE_HOME="$W/state-$1"
  echo "$1: cold $(t) s; warm $(t) s, $(t) s; warm without the build seed $(unseeded) s, $(unseeded) s"
}
guard ", tests: false"; printf 'compare: { cross_tests: 0 }\n' >> .rascal/config.yaml
measure gate-only
guard ""
measure evidence
sed -i '/^compare:/d' .rascal/config.yaml
measure agreement
