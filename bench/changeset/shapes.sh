#!/usr/bin/env bash
# rascal's own peak memory on the two hostile shapes of a change (issue 27,
# item 6): one file of MB MiB of one-byte lines (`a\n` repeated: 50 M lines
# for 100 MiB), and FILES small new files. For each shape: `rascal check`
# on the change in the working tree, and `rascal run --headless` of one
# `command` agent that writes it (process launcher). Prints wall seconds
# and peak RSS (/usr/bin/time -v) of each; BEFORE=path runs an older build
# side by side. The guardrails are the ones that read every added line
# (secret scan, a banned pattern, forbidden imports).
#
#   bench/changeset/shapes.sh                       # MB=100, FILES=100000
#   MB=32 FILES=20000 bench/changeset/shapes.sh
#   BEFORE=/tmp/rascal-before bench/changeset/shapes.sh
#   SHAPES=lines RUN= bench/changeset/shapes.sh     # one shape, check only
set -euo pipefail

MB=${MB:-100}
FILES=${FILES:-100000}
SHAPES=${SHAPES:-lines files}
RUN=${RUN-1}
BEFORE=${BEFORE:-}
here=$(cd "$(dirname "$0")/../.." && pwd)
RASCAL=${RASCAL:-${CARGO_TARGET_DIR:-$here/target}/release/rascal}
TIME=/usr/bin/time
if [[ ! -x $TIME ]]; then
    echo "error: /usr/bin/time is missing: install it (Debian: apt-get install time)" >&2
    exit 2
fi
if [[ ! -x $RASCAL ]]; then
    echo "error: $RASCAL is missing: cargo build --release (or set RASCAL=)" >&2
    exit 2
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/rascal-shapes.XXXXXX")
if [[ -z ${KEEP:-} ]]; then trap 'rm -rf "$work"' EXIT; fi
export XDG_STATE_HOME=$work/state

builds=("$RASCAL")
names=(after)
if [[ -n $BEFORE ]]; then builds=("$BEFORE" "$RASCAL"); names=(before after); fi

# `name: wall s, peak MiB` of one command (its output in $work/out).
measure() {
    local name=$1
    shift
    $TIME -v -o "$work/time" "$@" > "$work/out" 2>&1 || true
    local wall kib
    wall=$(awk -F': ' '/Elapsed \(wall clock\)/ { print $2 }' "$work/time")
    kib=$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$work/time")
    printf '  %-28s wall %8s  peak RSS %7.1f MiB\n' "$name" "$wall" "$(echo "$kib / 1024" | bc -l)"
}

for shape in $SHAPES; do
    repo=$work/$shape
    rm -rf "$repo" "$XDG_STATE_HOME"
    mkdir -p "$repo/.rascal"
    cd "$repo"
    git init -q .
    git config user.email bench@localhost
    git config user.name bench
    echo "# bench" > README.md
    case $shape in
        lines) cat > gen.sh <<SH
yes a | head -c $((MB * 1024 * 1024)) > big.txt
SH
            what="one file of $MB MiB of one-byte lines ($((MB * 1024 * 1024 / 2)) lines)" ;;
        files) cat > gen.sh <<SH
awk -v n=$FILES 'BEGIN { for (i = 0; i < n; i++) { d = sprintf("d%03d", i % 500); if (i < 500) system("mkdir -p " d); p = sprintf("%s/f%06d.rs", d, i); print "fn f" i "() {}" > p; close(p) } }'
SH
            what="$FILES new files of one line" ;;
        *) echo "unknown shape $shape (lines, files)" >&2; exit 2 ;;
    esac
    cat > .rascal/config.yaml <<'YAML'
agents:
  gen: { runtime: command, command: ["sh", "gen.sh"] }
launcher: process
strategy: { mode: single, agents: [gen] }
YAML
    cat > .rascal/guardrails.yaml <<'YAML'
guardrails:
  - { name: secrets, builtin: secrets }
  - { name: banned-patterns, patterns: ['dbg!\('], scope: diff-only }
YAML
    cat > .rascal/permissions.yaml <<'YAML'
permissions:
  mode: strict
  forbidden_imports: ["std::process"]
YAML
    git add -A && git commit -qm base
    echo "$shape: $what"
    sh gen.sh
    for b in "${!builds[@]}"; do
        measure "${names[$b]} rascal check" "${builds[$b]}" check
    done
    git clean -qfdx -e .rascal
    if [[ -n $RUN ]]; then
        for b in "${!builds[@]}"; do
            rm -rf "$XDG_STATE_HOME"
            measure "${names[$b]} rascal run --headless" "${builds[$b]}" run bench --headless --agent gen
            grep -q verdict "$work/out" || { echo "  (no verdict printed:)"; tail -5 "$work/out"; }
        done
    fi
    cd "$work"
done
