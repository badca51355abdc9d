#!/usr/bin/env bash
# The log flood, measured side by side in one run (issue 17):
#
#   1. the producers alone: N agents' commands run in parallel, output
#      thrown away (the floor);
#   2. `rascal run --headless` of the same N command agents (process
#      launcher, bubblewrap when installed), output printed to a file:
#      wall time, ratio to the floor, peak RSS, the store's growth against
#      the raw log bytes;
#   3. `rascal show RUN` of that run: every line read back from the log
#      files (counted) and its time;
#   4. the TUI (in tmux, when installed): time from the run's first
#      journalled event to its last, and the TUI's peak RSS.
#
# Usage: bench/flood/run.sh [AGENTS] [LINES]   (default 8 × 200000)
# Needs a release build (`cargo build --release`); RASCAL=path overrides.
set -euo pipefail

AGENTS=${1:-8}
LINES=${2:-200000}
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
RASCAL=${RASCAL:-$ROOT/target/release/rascal}
[ -x "$RASCAL" ] || { echo "build first: cargo build --release" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "needs /usr/bin/time (apt-get install time)" >&2; exit 2; }

WORK=$(mktemp -d /tmp/rascal-flood.XXXXXX)
trap 'tmux kill-session -t rascal-flood 2>/dev/null || true; rm -rf "$WORK"' EXIT
export XDG_STATE_HOME="$WORK/state"
REPO="$WORK/repo"
mkdir -p "$REPO/.rascal"
PRODUCER="seq $LINES | sed 's/^/log line number /'"
{
  echo "agents:"
  names=""
  for i in $(seq 1 "$AGENTS"); do
    echo "  a$i: { runtime: command, command: [\"sh\", \"-c\", \"$PRODUCER\"] }"
    names="$names${names:+, }a$i"
  done
  echo "launcher: process"
  echo "strategy: { agents: [$names], max_parallel: $AGENTS }"
} > "$REPO/.rascal/config.yaml"
echo x > "$REPO/README.md"
git -C "$REPO" init -q
git -C "$REPO" add -A
git -C "$REPO" -c user.name=bench -c user.email=bench@example.com commit -qm init

now() { date +%s.%N; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", a / b }'; }

# 1. The floor.
t0=$(now)
for i in $(seq 1 "$AGENTS"); do sh -c "$PRODUCER" > /dev/null & done
wait
t1=$(now)
floor=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
raw=$(( $(sh -c "$PRODUCER" | wc -c) * AGENTS ))
total=$(( LINES * AGENTS ))

# 2. Headless.
cd "$REPO"
t0=$(now)
/usr/bin/time -f '%M' -o "$WORK/rss" "$RASCAL" run "flood" --headless > "$WORK/out.txt" 2> "$WORK/err.txt" || true
t1=$(now)
headless=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
rss=$(( $(tail -1 "$WORK/rss") / 1024 ))
printed=$(grep -c '│ log line number' "$WORK/out.txt" || true)
run=$(grep -o 'r-[0-9]*-[0-9a-f]*' "$WORK/out.txt" | head -1)
db=$(stat -c %s "$REPO/.git/rascal/rascal.db")
wal=$(stat -c %s "$REPO/.git/rascal/rascal.db-wal" 2>/dev/null || echo 0)
logs=$(du -sb "$XDG_STATE_HOME" | cut -f1)

# 3. show.
t0=$(now)
"$RASCAL" show "$run" > "$WORK/show.txt" || true
t1=$(now)
show=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }')
shown=$(grep -c '│ log line number' "$WORK/show.txt" || true)

echo "flood: $AGENTS agents × $LINES lines ($total lines, $((raw / 1024 / 1024)) MiB raw)"
echo "  producers alone      ${floor}s"
echo "  rascal --headless    ${headless}s   ratio $(ratio "$headless" "$floor")×   peak RSS ${rss} MiB   printed $printed/$total lines"
echo "  store growth         db $((db / 1024)) KiB + wal $((wal / 1024)) KiB + log files and run files $((logs / 1024 / 1024)) MiB = $(awk -v a="$((db + wal + logs))" -v b="$raw" 'BEGIN { printf "%.3f", a / b }')× the raw log bytes"
echo "  rascal show          ${show}s   printed $shown/$total lines"

# 4. The TUI.
if command -v tmux > /dev/null; then
  tmux kill-session -t rascal-flood 2>/dev/null || true
  tmux new-session -d -s rascal-flood -x 200 -y 50 \
    "cd $REPO && XDG_STATE_HOME=$XDG_STATE_HOME /usr/bin/time -f '%M' -o $WORK/tui-rss $RASCAL run flood-tui; sleep 30"
  # Wait for the run to finish (its last event journalled), then quit.
  for _ in $(seq 1 600); do
    sleep 0.5
    n=$(sqlite3 "$REPO/.git/rascal/rascal.db" "SELECT count(*) FROM events e JOIN runs r ON r.id = e.run_id WHERE r.instruction = 'flood-tui' AND e.kind = 'run_finished'" 2>/dev/null || echo 0)
    [ "$n" = "1" ] && break
  done
  span=$(sqlite3 "$REPO/.git/rascal/rascal.db" "SELECT (max(e.at) - min(e.at)) / 1000.0 FROM events e JOIN runs r ON r.id = e.run_id WHERE r.instruction = 'flood-tui'" 2>/dev/null || echo "?")
  tmux send-keys -t rascal-flood q
  sleep 1
  tmux send-keys -t rascal-flood y 2>/dev/null || true
  for _ in $(seq 1 20); do [ -s "$WORK/tui-rss" ] && break; sleep 0.5; done
  trss=$(( $(tail -1 "$WORK/tui-rss" 2>/dev/null || echo 0) / 1024 ))
  echo "  rascal (TUI)         first to last event ${span}s   ratio $(ratio "$span" "$floor")×   peak RSS ${trss} MiB"
else
  echo "  rascal (TUI)         skipped: tmux is not installed"
fi
