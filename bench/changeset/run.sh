#!/usr/bin/env bash
# The ChangeSet side by side with git: `rascal check` on a change of many new
# source files against the floor — `git status --porcelain -uall`, reading
# every changed file and counting its lines — on the same repository, in
# alternating rounds. Prints both medians, the ratio and rascal's peak RSS.
#
#   bench/changeset/run.sh                 # 6,000 files, ~102 MB, 2.5 M lines
#   FILES=600 ROUNDS=5 bench/changeset/run.sh
#   RASCAL=path/to/rascal KEEP=1 bench/changeset/run.sh
#   RUN=1 bench/changeset/run.sh           # also `rascal run --headless`
#   RUN=1 BEFORE=path/to/old/rascal bench/changeset/run.sh   # old and new side by side
#
# FILES (6000), LINES per file (417), ROUNDS (3), RASCAL (target/release/rascal,
# built when missing), KEEP=1 keeps the generated repository, CONFIG=secrets
# adds a `.rascal/guardrails.yaml` with the secret scan, a banned pattern and
# diff-size, and forbidden imports in permissions (the layers that read every
# added line), to measure them on the same stream.
#
# RUN=1 also times `rascal run --headless` of one `command` agent that writes
# the same files into its workspace (process launcher, bubblewrap when
# installed), against the same floor. A run has costs a check has not (the
# agent itself, the sandbox, the store, the workspace): they are measured
# apart — the generator alone, and a run whose agent writes one small file
# (the fixed cost) — and the run's ChangeSet cost is the run's time minus
# both, next to the floor. BEFORE=path runs an older build in the same
# rounds, for a before/after side by side.
set -euo pipefail

FILES=${FILES:-6000}
LINES=${LINES:-417}
ROUNDS=${ROUNDS:-3}
CONFIG=${CONFIG:-}
RUN=${RUN:-}
BEFORE=${BEFORE:-}
here=$(cd "$(dirname "$0")/../.." && pwd)
RASCAL=${RASCAL:-$here/target/release/rascal}

if [[ ! -x $RASCAL ]]; then
    echo "building $RASCAL (release)…" >&2
    (cd "$here" && cargo build --release --bin rascal >&2)
fi
TIME=/usr/bin/time
if [[ ! -x $TIME ]]; then
    echo "error: /usr/bin/time is missing: install it (Debian: apt-get install time) to measure peak RSS" >&2
    exit 2
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/rascal-changeset-bench.XXXXXX")
if [[ -z ${KEEP:-} ]]; then trap 'rm -rf "$work"' EXIT; fi
repo=$work/repo
mkdir "$repo"

cd "$repo"
git init -q .
git config user.email bench@localhost
git config user.name bench
echo "# bench" > README.md
export XDG_STATE_HOME=$work/state
if [[ $CONFIG == secrets ]]; then
    mkdir -p .rascal
    cat > .rascal/guardrails.yaml <<'YAML'
guardrails:
  - { name: secrets, builtin: secrets }
  - { name: banned-patterns, patterns: ['dbg!\('], scope: diff-only }
  - { name: diff-size, max_lines: 100000000, max_files: 1000000 }
YAML
    cat > .rascal/permissions.yaml <<'YAML'
permissions:
  mode: strict
  forbidden_imports: ["std::process"]
YAML
fi

# The change: FILES new Rust-like source files of LINES lines each, not
# added to the index (an agent's untracked files), in 60 directories. The
# generator is committed with the base (outside it, a sandboxed agent would
# not see it) and left out of the ChangeSet's count.
cat > gen.sh <<'SH'
awk -v files="$1" -v lines="$2" 'BEGIN {
    for (f = 0; f < files; f++) {
        dir = sprintf("src/m%02d", f % 60)
        if (f < 60) system("mkdir -p " dir)
        path = sprintf("%s/file_%05d.rs", dir, f)
        print "use std::collections::HashMap;" > path
        for (l = 1; l < lines; l++) {
            if (l % 7 == 0)      printf "    // step %d of file %d\n", l, f > path
            else if (l % 7 == 3) printf "fn f_%d_%d(x: u64) -> u64 { x * %d }\n", f, l, l > path
            else                 printf "    let v%d = table.get(&%d).copied();\n", l, f * l > path
        }
        close(path)
    }
}'
SH
if [[ -n $RUN ]]; then
    mkdir -p .rascal
    cat > .rascal/config.yaml <<YAML
agents:
  gen: { runtime: command, command: ["sh", "gen.sh", "$FILES", "$LINES"] }
  tiny: { runtime: command, command: ["sh", "-c", "echo one > one.txt"] }
launcher: process
strategy: { mode: single, agents: [gen] }
YAML
fi
git add -A && git commit -qm base
sh gen.sh "$FILES" "$LINES"

bytes=$(du -sb --exclude=.git . | cut -f1)
printf 'change: %d new files, %s bytes, %s lines\n' "$FILES" "$bytes" \
    "$(git status --porcelain -uall -z | tr '\0' '\n' | sed 's/^?? //' | xargs cat | wc -l)"

floor() {
    git status --porcelain -uall -z | tr '\0' '\n' | sed 's/^.. //' | xargs -d '\n' cat | wc -l > /dev/null
}
export -f floor
# What git itself needs to write the same files as a tree, as a run must
# (its id is the candidate's fingerprint): `git add -A` into a scratch index
# and object store, then `git write-tree`.
tree_floor() {
    rm -rf "$TREE_OBJS" "$TREE_INDEX"
    mkdir -p "$TREE_OBJS"
    export GIT_INDEX_FILE=$TREE_INDEX GIT_OBJECT_DIRECTORY=$TREE_OBJS
    export GIT_ALTERNATE_OBJECT_DIRECTORIES=$PWD/.git/objects
    git add -A . && git write-tree > /dev/null
}
export -f tree_floor
export TREE_OBJS=$work/tree-objects TREE_INDEX=$work/tree-index
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
# Run a command under /usr/bin/time: "wall-seconds cpu-seconds peak-KiB" in
# $work/m (CPU: user + system of it and every child it waited for — on a
# loaded machine the steadier figure; a run's includes its agent's).
measure() {
    $TIME -f '%e %U %S %M' -o "$work/time" "$@" > "$work/out" 2>&1 || true
    awk '{ printf "%s %.2f %s\n", $1, $2 + $3, $4 }' "$work/time" | tail -1 > "$work/m"
}

# Warm the page cache and git's own caches for both.
floor
"$RASCAL" check > /dev/null 2>&1 || true

# One `rascal run --headless` of agent $2 with build $1.
run_once() {
    rm -rf "$XDG_STATE_HOME"
    measure "$1" run "bench" --headless --agent "$2"
    if ! grep -q "verdict" "$work/out"; then
        echo "error: rascal run printed no verdict:" >&2
        tail -20 "$work/out" >&2
        exit 1
    fi
}
# The generator alone, on a scratch copy of the base.
gen_once() {
    local d=$work/gen
    rm -rf "$d" && mkdir "$d" && cp gen.sh "$d/"
    (cd "$d" && measure sh gen.sh "$FILES" "$LINES")
    rm -rf "$d"
}

builds=("$RASCAL")
names=(rascal)
if [[ -n $BEFORE ]]; then builds=("$BEFORE" "$RASCAL"); names=(before after); fi

# Each figure's rounds, as "wall cpu KiB" lines, in $work/fig.NAME.
fig() { cat "$work/m" >> "$work/fig.$1"; }
col() { awk -v c="$2" '{ print $c }' "$work/fig.$1" | median; }
peak() { awk '{ print $3 }' "$work/fig.$1" | sort -n | tail -1; }
for ((i = 1; i <= ROUNDS; i++)); do
    measure bash -c floor; fig floor
    measure "$RASCAL" check; fig check
    printf 'round %d: floor %s · rascal check %s (wall s, cpu s, KiB)\n' "$i" "$(tail -1 "$work/fig.floor")" "$(tail -1 "$work/fig.check")"
    if [[ -n $RUN ]]; then
        measure bash -c tree_floor; fig tree
        gen_once; fig gen
        for b in "${!builds[@]}"; do
            run_once "${builds[$b]}" tiny; fig "tiny$b"
            run_once "${builds[$b]}" gen; fig "run$b"
            printf '         %s: rascal run %s · one-file run %s\n' "${names[$b]}" "$(tail -1 "$work/fig.run$b")" "$(tail -1 "$work/fig.tiny$b")"
        done
        printf '         generator alone %s · git add + write-tree %s\n' "$(tail -1 "$work/fig.gen")" "$(tail -1 "$work/fig.tree")"
    fi
done
ratio() { echo "$1 / $2" | bc -l; }
fw=$(col floor 1) fc=$(col floor 2)
cw=$(col check 1) cc=$(col check 2)
printf 'medians of %d rounds; wall s (cpu s)\n' "$ROUNDS"
printf 'floor (git status -uall + read + count lines): %.3f (%.2f)\n' "$fw" "$fc"
printf 'rascal check: %.3f (%.2f) = %.2fx the floor (cpu %.2fx) · peak RSS %.1f MiB\n' \
    "$cw" "$cc" "$(ratio "$cw" "$fw")" "$(ratio "$cc" "$fc")" "$(echo "$(peak check) / 1024" | bc -l)"
if [[ -n $RUN ]]; then
    gw=$(col gen 1) gc=$(col gen 2)
    printf 'generator alone (the agent'"'"'s own work): %.3f (%.2f)\n' "$gw" "$gc"
    tw=$(col tree 1) tc=$(col tree 2)
    pw=$(echo "$fw + $tw" | bc -l) pc=$(echo "$fc + $tc" | bc -l)
    printf 'git add -A + write-tree (git writing the change as a tree): %.3f (%.2f); with the floor: %.3f (%.2f)\n' "$tw" "$tc" "$pw" "$pc"
    for b in "${!builds[@]}"; do
        rw=$(col "run$b" 1) rc=$(col "run$b" 2)
        xw=$(col "tiny$b" 1) xc=$(col "tiny$b" 2)
        nw=$(echo "$rw - $xw - $gw" | bc -l) nc=$(echo "$rc - $xc - $gc" | bc -l)
        printf '%s: rascal run --headless %.3f (%.2f) · fixed cost (one-file run) %.3f (%.2f) · the change'"'"'s part (run - fixed - generator) %.3f (%.2f) = %.2fx the floor (cpu %.2fx), %.2fx floor + git'"'"'s tree (cpu %.2fx) · peak RSS %.1f MiB\n' \
            "${names[$b]}" "$rw" "$rc" "$xw" "$xc" "$nw" "$nc" "$(ratio "$nw" "$fw")" "$(ratio "$nc" "$fc")" \
            "$(ratio "$nw" "$pw")" "$(ratio "$nc" "$pc")" \
            "$(echo "$(peak "run$b") / 1024" | bc -l)"
    done
fi
if [[ -n ${KEEP:-} ]]; then echo "repository kept at $repo"; fi
