#!/bin/sh
# What judging a `cargo test` guardrail by its evidence costs (issue 29),
# against judging it by its exit code (`tests: false`, as before): the
# runner's results, the base's listing and its failures at the base, the
# base's tests on the change and the change's new tests on the base's code.
#
#   demo  the demo's sample repository: `rascal run --spec shout` on its
#         four scripted agents (the same run `rascal demo` makes);
#   own   this repository's own unit tests (`cargo test --workspace --lib`)
#         on a clone of it, with one command agent that adds a comment to
#         crates/core (so every crate above it builds again).
#
# Each configuration runs cold (a fresh state directory: no base results
# cached, no build seed), then warm (the base's results and seed kept).
# Usage: bench/test-guardrail-cost.sh [RASCAL] [demo|own|both]
set -e
RASCAL=${1:-$(pwd)/target/release/rascal}
WHICH=${2:-both}
SRC=$(git rev-parse --show-toplevel)
W=$(mktemp -d /tmp/test-cost-XXXX)
trap 'rm -rf "$W"' EXIT

t() { /usr/bin/time -f "%e" "$RASCAL" run --headless "$@" >"$W/out" 2>"$W/time" || true; tail -1 "$W/time"; }
# measure NAME GUARDRAIL-LINE RUN-ARGS…: cold then warm, in the current repository.
measure() {
  name=$1; line=$2; shift 2
  printf 'guardrails:\n%s\n' "$line" > .rascal/guardrails.yaml
  git add -A; git commit -qm "$name" --allow-empty
  export XDG_STATE_HOME="$W/state-$name-$(basename "$(pwd)")"
  cold=$(t "$@"); warm=$(t "$@")
  echo "  $name: cold $cold s; warm $warm s ($(grep -c . "$W/out") lines of output, last: $(grep -E 'pick|verdict' "$W/out" | tail -1))"
}

if [ "$WHICH" != own ]; then
  echo "demo repository (4 scripted agents, --spec shout):"
  D=$W/demo
  mkdir -p "$D"; cd "$D"
  "$RASCAL" demo --headless --fast --keep >"$W/demo.out" 2>&1 || true
  REPO=$(sed -n 's/^kept the sample repository at //p' "$W/demo.out" | tail -1)
  [ -d "$REPO" ] || { echo "the demo kept no repository:"; cat "$W/demo.out"; exit 1; }
  git clone -q "$REPO" "$D/repo"; rm -rf "$REPO"; cd "$D/repo"
  git config user.email a@b; git config user.name n
  # The demo's guardrails, the tests line first as a plain command.
  rest='  - { name: build, command: "CARGO_TARGET_DIR=target cargo build --offline --quiet", timeout: 120s }
  - { name: secrets, builtin: secrets }
  - { name: diff-size, max_lines: 400, max_files: 10 }'
  measure exit-code "  - { name: tests, command: \"CARGO_TARGET_DIR=target cargo test --offline --quiet\", timeout: 300s, tests: false }
$rest" --spec shout
  measure evidence "  - { name: tests, command: \"CARGO_TARGET_DIR=target cargo test --offline --quiet\", timeout: 300s }
$rest" --spec shout
fi

if [ "$WHICH" != demo ]; then
  echo "this repository's unit tests (cargo test --workspace --lib, 1 agent):"
  O=$W/own
  git clone -q "$SRC" "$O"; cd "$O"
  git config user.email a@b; git config user.name n
  mkdir -p .rascal
  cat > .rascal/config.yaml <<'R'
agents:
  note: { runtime: command, command: ["sh", "-c", "printf '\\n// A note.\\n' >> crates/core/src/digest.rs"] }
launcher: process
strategy: { agents: [note] }
compare: { cross_tests: 0 }
timeout: 60m
R
  measure exit-code '  - { name: tests, command: "cargo test --offline --workspace --lib -q", timeout: 3600s, tests: false }' "add a note"
  measure evidence '  - { name: tests, command: "cargo test --offline --workspace --lib -q", timeout: 3600s }' "add a note"
fi
