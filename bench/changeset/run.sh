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
now() { date +%s.%N; }
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }

# Warm the page cache and git's own caches for both.
floor
"$RASCAL" check > /dev/null 2>&1 || true

# One `rascal run --headless` of agent $2 with build $1: "seconds KiB" into
# $work/result.
run_once() {
    local t0 t1
    rm -rf "$XDG_STATE_HOME"
    t0=$(now)
    $TIME -f '%M' -o "$work/rss" "$1" run "bench" --headless --agent "$2" > "$work/run.out" 2>&1 || true
    t1=$(now)
    if ! grep -q "verdict" "$work/run.out"; then
        echo "error: rascal run printed no verdict:" >&2
        tail -20 "$work/run.out" >&2
        exit 1
    fi
    printf '%s %s\n' "$(echo "$t1 - $t0" | bc -l)" "$(tail -1 "$work/rss")" > "$work/result"
}
# The generator alone, on a scratch copy of the base.
gen_once() {
    local t0 t1 d=$work/gen
    rm -rf "$d" && mkdir "$d" && cp gen.sh "$d/"
    t0=$(now); (cd "$d" && sh gen.sh "$FILES" "$LINES"); t1=$(now)
    rm -rf "$d"
    echo "$t1 - $t0" | bc -l
}

builds=("$RASCAL")
names=(rascal)
if [[ -n $BEFORE ]]; then builds=("$BEFORE" "$RASCAL"); names=(before after); fi

fl=() rs=() rss=() gen=()
declare -A runs runrss tiny
for ((i = 1; i <= ROUNDS; i++)); do
    t0=$(now); floor; t1=$(now)
    fl+=("$(echo "$t1 - $t0" | bc -l)")
    t0=$(now)
    $TIME -f '%M' -o "$work/rss" "$RASCAL" check > "$work/out" 2>&1 || true
    t1=$(now)
    rs+=("$(echo "$t1 - $t0" | bc -l)")
    rss+=("$(tail -1 "$work/rss")")
    printf 'round %d: floor %.3f s · rascal check %.3f s · peak RSS %d KiB\n' "$i" "${fl[-1]}" "${rs[-1]}" "${rss[-1]}"
    if [[ -n $RUN ]]; then
        gen+=("$(gen_once)")
        for b in "${!builds[@]}"; do
            run_once "${builds[$b]}" tiny
            read -r t m < "$work/result"
            tiny[$b]+="$t "
            run_once "${builds[$b]}" gen
            read -r t m < "$work/result"
            runs[$b]+="$t "
            runrss[$b]+="$m "
            printf '         %s: rascal run %.3f s (peak RSS %d KiB) · fixed cost %s s\n' \
                "${names[$b]}" "$t" "$m" "$(echo "${tiny[$b]}" | awk '{print $NF}')"
        done
        printf '         generator alone %.3f s\n' "${gen[-1]}"
    fi
done
tail -1 "$work/out"
f=$(printf '%s\n' "${fl[@]}" | median)
r=$(printf '%s\n' "${rs[@]}" | median)
m=$(printf '%s\n' "${rss[@]}" | sort -n | tail -1)
printf 'floor (git status -uall + read + count lines): %.3f s (median of %d)\n' "$f" "$ROUNDS"
printf 'rascal check:                                  %.3f s (median of %d)\n' "$r" "$ROUNDS"
printf 'ratio rascal/floor: %.2fx · rascal peak RSS: %.1f MiB\n' "$(echo "$r / $f" | bc -l)" "$(echo "$m / 1024" | bc -l)"
if [[ -n $RUN ]]; then
    g=$(printf '%s\n' "${gen[@]}" | median)
    printf 'generator alone (the agent'"'"'s own work):         %.3f s (median of %d)\n' "$g" "$ROUNDS"
    for b in "${!builds[@]}"; do
        rt=$(printf '%s\n' ${runs[$b]} | median)
        ft=$(printf '%s\n' ${tiny[$b]} | median)
        rm_=$(printf '%s\n' ${runrss[$b]} | sort -n | tail -1)
        net=$(echo "$rt - $ft - $g" | bc -l)
        printf '%s: rascal run --headless %.3f s · fixed cost (one-file run) %.3f s · ChangeSet part %.3f s = %.2fx the floor · peak RSS %.1f MiB\n' \
            "${names[$b]}" "$rt" "$ft" "$net" "$(echo "$net / $f" | bc -l)" "$(echo "$rm_ / 1024" | bc -l)"
    done
fi
if [[ -n ${KEEP:-} ]]; then echo "repository kept at $repo"; fi
