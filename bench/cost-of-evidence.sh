#!/bin/sh
# The cost of evidence (issue 52): what rascal's verification costs against
# the crate's own `cargo test`, on a real public crate — semver 1.0.28 from
# the local cargo registry (offline; its benches dropped, as they need
# criterion) — cold and warm, for 1 and 4 candidates. Each candidate adds
# one small function and one unit test of its own; the guardrail is
# `cargo test --offline -q`; process launcher (bubblewrap).
#
#   own cargo test   the crate's tests with a fresh target dir (cold), then
#                    again (warm)
#   rascal, 1 / 4    `rascal run --headless` with a fresh state directory
#                    (cold: no base results, no build seed), then the same
#                    task again (warm: the agents make the same change, so
#                    the test judgement is reused), then again with
#                    RASCAL_FRESH=1 (warm, nothing reused)
#
# Usage: bench/cost-of-evidence.sh [RASCAL]   (default: target/release/rascal)
set -e
RASCAL=${1:-$(pwd)/target/release/rascal}
SRC=$(ls -d "$HOME"/.cargo/registry/src/*/semver-1.0.28 2>/dev/null | head -1)
[ -n "$SRC" ] || { echo "semver 1.0.28 is not in the cargo registry cache (cargo fetch it once)"; exit 2; }
W=$(mktemp -d /tmp/cost-of-evidence-XXXX)
[ -n "$KEEP" ] || trap 'rm -rf "$W"' EXIT
R=$W/repo
cp -r "$SRC" "$R"; cd "$R"
rm -rf benches Cargo.toml.orig
python3 - <<'P'
import re
s = open("Cargo.toml").read()
s = re.sub(r'\n\[\[bench\]\]\n(?:[^\[\n][^\n]*\n)*', '\n', s)
s = re.sub(r'\n\[target\."cfg\(not\(miri\)\)"\.dev-dependencies\.criterion\]\n(?:[^\[\n][^\n]*\n)*', '\n', s)
open("Cargo.toml", "w").write(s)
P
printf '/target\n' > .gitignore
mkdir -p .rascal agents
for n in 1 2 3 4; do
  cat > agents/a$n.sh <<A
cat >> src/lib.rs <<'R'

/// How many parts a version has, as candidate $n counts them.
pub fn parts_$n(v: &Version) -> usize {
    3 + usize::from(!v.pre.is_empty()) + usize::from(!v.build.is_empty())
}

#[cfg(test)]
mod parts_${n}_tests {
    #[test]
    fn counts_the_parts() {
        let v = crate::Version::parse("1.2.3-alpha+b").unwrap();
        assert_eq!(crate::parts_$n(&v), 5);
    }
}
R
A
done
cat > .rascal/config.yaml <<'R'
agents:
  a1: { runtime: command, command: ["sh", "agents/a1.sh"] }
  a2: { runtime: command, command: ["sh", "agents/a2.sh"] }
  a3: { runtime: command, command: ["sh", "agents/a3.sh"] }
  a4: { runtime: command, command: ["sh", "agents/a4.sh"] }
strategy: { agents: [a1, a2, a3, a4], max_parallel: 4 }
R
printf 'guardrails:\n  - { name: tests, command: "cargo test --offline -q", timeout: 600s }\n' > .rascal/guardrails.yaml
git init -q; git config user.email bench@example.com; git config user.name bench
git add -A; git commit -qm base
secs() { /usr/bin/time -f "%e" "$@" >"$W/out" 2>"$W/time" || true; cat "$W/out" "$W/time" >> "$W/log"; tail -1 "$W/time"; }
own_cold=$(CARGO_TARGET_DIR=$W/own secs cargo test --offline -q)
own_warm=$(CARGO_TARGET_DIR=$W/own secs cargo test --offline -q)
run() { XDG_STATE_HOME=$W/state-$1 secs "$RASCAL" run "add a parts function with a test" --agent "$2" --headless; }
one_cold=$(run 1 a1); one_warm=$(run 1 a1); one_fresh=$(RASCAL_FRESH=1 run 1 a1)
four_cold=$(run 4 a1,a2,a3,a4); four_warm=$(run 4 a1,a2,a3,a4); four_fresh=$(RASCAL_FRESH=1 run 4 a1,a2,a3,a4)
ratio() { python3 -c "print(f'{$1/$2:.1f}')"; }
echo "semver 1.0.28, $(nproc) cores, $("$RASCAL" --version 2>/dev/null | head -1)"
echo "| | own cargo test | rascal, 1 candidate | rascal, 4 candidates |"
echo "|---|---|---|---|"
echo "| cold | ${own_cold} s | ${one_cold} s ($(ratio "$one_cold" "$own_cold")× own) | ${four_cold} s ($(ratio "$four_cold" "$one_cold")× one) |"
echo "| warm, reused | ${own_warm} s | ${one_warm} s ($(ratio "$one_warm" "$own_warm")× own) | ${four_warm} s ($(ratio "$four_warm" "$one_warm")× one) |"
echo "| warm, RASCAL_FRESH=1 | ${own_warm} s | ${one_fresh} s ($(ratio "$one_fresh" "$own_warm")× own) | ${four_fresh} s ($(ratio "$four_fresh" "$one_fresh")× one) |"
