#!/bin/sh
# Cross-testing's cost: a 4-candidate Rust run like tests/it/agreement.rs
# (small fix, fix + 3 tests, a wrong fix with 2 tests of its own, a cheat),
# timed with and without cross-tests. Usage: bench/agreement.sh [RASCAL]
set -e
RASCAL=${1:-$(pwd)/target/release/rascal}
R=$(mktemp -d /tmp/agree-XXXX); cd "$R"; git init -q; git config user.email a@b; git config user.name n
mkdir -p src .rascal
printf '[package]\nname = "calc"\nversion = "0.1.0"\nedition = "2021"\n\n[dependencies]\n' > Cargo.toml
printf 'version = 3\n\n[[package]]\nname = "calc"\nversion = "0.1.0"\n' > Cargo.lock
printf '/target\n' > .gitignore
cat > src/lib.rs <<'R'
pub fn add(a: i32, b: i32) -> i32 {
    a - b
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds() {
        assert_eq!(add(2, 2), 4);
    }
}
R
cat > .rascal/config.yaml <<'R'
agents:
  small: { runtime: command, command: ["sh", "-c", "sed -i 's/a - b/a + b/' src/lib.rs"] }
  many: { runtime: command, command: ["sh", "-c", "sed -i 's/a - b/a + b/' src/lib.rs\nsed -i 's/    use super::\\*;/    use super::*;\\n    #[test]\\n    fn adds_negatives() { assert_eq!(add(-1, -2), -3); }\\n    #[test]\\n    fn adds_zero() { assert_eq!(add(0, 5), 5); }\\n    #[test]\\n    fn adds_large() { assert_eq!(add(1000, 24), 1024); }/' src/lib.rs"] }
  wrong: { runtime: command, command: ["sh", "-c", "sed -i 's/a - b/a * b/' src/lib.rs\nsed -i 's/    use super::\\*;/    use super::*;\\n    #[test]\\n    fn adds_threes() { assert_eq!(add(3, 3), 9); }\\n    #[test]\\n    fn adds_one() { assert_eq!(add(1, 5), 5); }/' src/lib.rs"] }
  cheat: { runtime: command, command: ["sh", "-c", "sed -i 's/assert_eq!(add(2, 2), 4)/assert_eq!(add(2, 2), 0)/' src/lib.rs"] }
R
printf 'guardrails:\n  - { name: tests, command: "cargo test --offline --quiet", timeout: 300s }\n' > .rascal/guardrails.yaml
git add -A; git commit -qm base
t() { /usr/bin/time -f "%e" "$RASCAL" run "make add() correct" --agent small,many,wrong,cheat >/dev/null 2>"$R/time" || true; tail -1 "$R/time"; }
t >/dev/null # warm the build caches
echo "with cross-tests: $(t) s, $(t) s"
printf 'compare: { cross_tests: 0 }\n' >> .rascal/config.yaml; git commit -qam "no cross-tests"
echo "without cross-tests: $(t) s, $(t) s"
rm -rf "$R"
