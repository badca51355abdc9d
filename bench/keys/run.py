#!/usr/bin/env python3
"""A key's latency to the screen while agents flood their logs (issue 32).

`rascal run` in a real terminal (tmux, 200x50) with N command agents (default
8) each printing LINES lines (default 1,000,000) as fast as they can. While
they print, `?` is sent SAMPLES times (default 100); each time the clock runs
from `tmux send-keys` returning to the help overlay's title reaching the
terminal's output (read from `tmux pipe-pane`, so no screen polling adds to
it), then `?` closes the overlay again. Prints the median and p99.

Usage: bench/keys/run.py [AGENTS] [LINES] [SAMPLES]
Needs a release build (`cargo build --release`) and tmux; RASCAL=path
overrides the binary.
"""

import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RASCAL = os.environ.get("RASCAL", os.path.join(ROOT, "target", "release", "rascal"))
SESSION = "rascal-keys-bench"
# A word of the help overlay's title (src/tui/draw/help.rs), never in the
# agents' logs. Words, not phrases: the terminal skips blanks by moving the
# cursor, so only a word arrives whole.
MARKER = b"closes"


class Output:
    """The terminal's output as it arrives, with the time of each chunk."""

    def __init__(self, fifo):
        self.lock = threading.Lock()
        self.chunks = []  # (time, bytes)
        self.fifo = fifo
        threading.Thread(target=self.read, daemon=True).start()

    def read(self):
        with open(self.fifo, "rb", buffering=0) as f:
            while True:
                data = f.read(65536)
                if not data:
                    return
                t = time.perf_counter()
                with self.lock:
                    self.chunks.append((t, data))

    def mark(self):
        with self.lock:
            return len(self.chunks)

    def wait_for(self, needle, since, timeout=5.0):
        """The time the output after chunk `since` first held `needle`."""
        deadline = time.perf_counter() + timeout
        tail = b""
        i = since
        while time.perf_counter() < deadline:
            with self.lock:
                new = self.chunks[i:]
            for t, data in new:
                tail = (tail + data)[-(len(data) + len(needle)) :]
                i += 1
                if needle in tail:
                    return t
            time.sleep(0.0005)
        return None


def tmux(*args):
    return subprocess.run(["tmux", *args], check=True, capture_output=True, text=True)


def main():
    agents = int(sys.argv[1]) if len(sys.argv) > 1 else 8
    lines = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    samples = int(sys.argv[3]) if len(sys.argv) > 3 else 100
    if not os.access(RASCAL, os.X_OK):
        sys.exit("build first: cargo build --release")
    if shutil.which("tmux") is None:
        sys.exit("needs tmux")
    work = tempfile.mkdtemp(prefix="rascal-keys-")
    try:
        repo = os.path.join(work, "repo")
        os.makedirs(os.path.join(repo, ".rascal"))
        names = [f"a{i}" for i in range(1, agents + 1)]
        producer = f"seq {lines} | sed 's/^/log line number /'"
        with open(os.path.join(repo, ".rascal", "config.yaml"), "w") as f:
            f.write("agents:\n")
            for a in names:
                f.write(f'  {a}: {{ runtime: command, command: ["sh", "-c", "{producer}"] }}\n')
            f.write("launcher: process\n")
            f.write(f"strategy: {{ agents: [{', '.join(names)}], max_parallel: {agents} }}\n")
        with open(os.path.join(repo, "README.md"), "w") as f:
            f.write("x\n")
        for argv in (
            ["git", "init", "-q"],
            ["git", "add", "-A"],
            ["git", "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "base"],
        ):
            subprocess.run(argv, cwd=repo, check=True)
        fifo = os.path.join(work, "out.fifo")
        os.mkfifo(fifo)
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
        state = os.path.join(work, "state")
        tmux(
            "new-session", "-d", "-s", SESSION, "-x", "200", "-y", "50",
            f"cd {repo} && XDG_STATE_HOME={state} {RASCAL} run keys-bench; sleep 600",
        )
        tmux("pipe-pane", "-O", "-t", SESSION, f"cat > {fifo}")
        out = Output(fifo)
        if out.wait_for(b"number", 0, timeout=60) is None:
            sys.exit("the agents' output never reached the screen")
        time.sleep(0.2)  # into the flood
        latencies, after = [], []
        missed = 0

        def flooding():
            """The producers still run: the key was answered under the flood."""
            seq = subprocess.run(["pgrep", "-f", f"seq {lines}"], capture_output=True)
            return seq.returncode == 0

        for _ in range(samples):
            since = out.mark()
            t0 = time.perf_counter()
            tmux("send-keys", "-t", SESSION, "?")
            t1 = out.wait_for(MARKER, since)
            if t1 is None:
                missed += 1
            elif flooding():
                latencies.append((t1 - t0) * 1000)
            else:
                after.append((t1 - t0) * 1000)
            time.sleep(0.02)
            tmux("send-keys", "-t", SESSION, "?")
            time.sleep(0.02 + random.random() * 0.02)
        if not latencies:
            sys.exit("the flood ended before the first key: raise LINES")
        latencies.sort()
        p99 = latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))]
        print(
            f"keys under a flood of {agents} agents x {lines:,} lines: "
            f"median {statistics.median(latencies):.1f} ms, p99 {p99:.1f} ms, "
            f"max {latencies[-1]:.1f} ms over {len(latencies)} keys sent while they printed"
            + (f", {missed} never answered within 5 s" if missed else "")
            + (f"; after the flood: median {statistics.median(after):.1f} ms over {len(after)} keys" if after else "")
        )
    finally:
        subprocess.run(["tmux", "kill-session", "-t", SESSION], capture_output=True)
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
