#!/usr/bin/env python3
"""A docker candidate's start, side by side with `docker run --rm` (issue 32).

Paired, interleaved runs on this machine's engine, same image (FROM scratch
+ the static busybox, built here, never pulled) and the same command
(`sh -c "echo >> src/lib.rs"` in the repository mounted at /workspace):

  1. one candidate: `rascal run --headless` (launcher docker, no
     guardrails) from its start to the line printing its verdict, and to
     its exit; against one `docker run --rm`;
  2. N candidates in parallel (default 8): one `rascal run` of N agents
     against N parallel `docker run --rm`s.

Prints the median of the paired ratios (rascal / docker run) for each.

Usage: bench/docker/run.py [ROUNDS] [N]   (default 9 rounds, 8 candidates)
Needs a release build (`cargo build --release`); RASCAL=path overrides.
"""

import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
RASCAL = os.environ.get("RASCAL", os.path.join(ROOT, "target", "release", "rascal"))
IMAGE = "rascal-bench-busybox:1"
COMMAND = "echo >> src/lib.rs"


def sh(*argv, **kw):
    return subprocess.run(argv, check=True, capture_output=True, text=True, **kw)


def build_image(work):
    if subprocess.run(["docker", "image", "inspect", IMAGE], capture_output=True).returncode == 0:
        return
    ctx = os.path.join(work, "image")
    os.makedirs(os.path.join(ctx, "bin"))
    shutil.copy("/bin/busybox", os.path.join(ctx, "bin", "busybox"))
    for applet in ["sh", "echo", "cat", "true"]:
        os.symlink("busybox", os.path.join(ctx, "bin", applet))
    with open(os.path.join(ctx, "Dockerfile"), "w") as f:
        f.write("FROM scratch\nCOPY bin /bin\n")
    env = dict(os.environ, DOCKER_BUILDKIT="0")
    sh("docker", "build", "-q", "-t", IMAGE, ctx, env=env)


def repo(work, n):
    """A repository whose config has `n` docker agents appending a line."""
    path = os.path.join(work, f"repo-{n}")
    os.makedirs(os.path.join(path, "src"))
    os.makedirs(os.path.join(path, ".rascal"))
    with open(os.path.join(path, "src", "lib.rs"), "w") as f:
        f.write("pub fn one() -> i32 {\n    1\n}\n")
    names = [f"a{i}" for i in range(1, n + 1)]
    with open(os.path.join(path, ".rascal", "config.yaml"), "w") as f:
        f.write("agents:\n")
        for a in names:
            f.write(
                f'  {a}: {{ runtime: command, command: ["sh", "-c", "{COMMAND}"], image: "{IMAGE}", network: none }}\n'
            )
        f.write("launcher: docker\n")
        f.write(f"strategy: {{ agents: [{', '.join(names)}], max_parallel: {n} }}\n")
    sh("git", "init", "-q", cwd=path)
    sh("git", "add", "-A", cwd=path)
    sh("git", "-c", "user.name=bench", "-c", "user.email=b@example.com", "commit", "-qm", "base", cwd=path)
    return path


def rascal_run(path, state):
    """Seconds to the verdict line, and to the process's exit."""
    env = dict(os.environ, XDG_STATE_HOME=state)
    t0 = time.perf_counter()
    p = subprocess.Popen(
        [RASCAL, "run", "append a line", "--headless"],
        cwd=path,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    verdict = None
    out = []
    for line in p.stdout:
        out.append(line)
        if verdict is None and "run verdict" in line:
            verdict = time.perf_counter() - t0
    code = p.wait()
    end = time.perf_counter() - t0
    if code != 0:
        sys.exit(f"rascal run exited {code}:\n{''.join(out)}")
    return (verdict if verdict is not None else end), end


def docker_runs(path, n):
    """Seconds for `n` parallel `docker run --rm` of the same command."""
    argv = [
        "docker", "run", "--rm", "--network", "none",
        "-v", f"{path}:/workspace", "-w", "/workspace",
        IMAGE, "sh", "-c", COMMAND,
    ]
    t0 = time.perf_counter()
    procs = [subprocess.Popen(argv, stdout=subprocess.DEVNULL) for _ in range(n)]
    for p in procs:
        if p.wait() != 0:
            sys.exit("docker run failed")
    return time.perf_counter() - t0


def side_by_side(label, path, n, rounds, state):
    rascal_run(path, state)  # warm the page cache and the engine
    docker_runs(path, n)
    to_verdict, to_exit, docker, r_verdict, r_exit = [], [], [], [], []
    for i in range(rounds):
        if i % 2 == 0:
            v, e = rascal_run(path, state)
            d = docker_runs(path, n)
        else:
            d = docker_runs(path, n)
            v, e = rascal_run(path, state)
        to_verdict.append(v)
        to_exit.append(e)
        docker.append(d)
        r_verdict.append(v / d)
        r_exit.append(e / d)
    med = statistics.median
    print(
        f"{label}: rascal to verdict {med(to_verdict):.3f} s, to exit {med(to_exit):.3f} s; "
        f"docker run --rm {med(docker):.3f} s; "
        f"ratio (median of {rounds} pairs) to verdict {med(r_verdict):.2f}x, to exit {med(r_exit):.2f}x"
    )


def main():
    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 9
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 8
    if not os.access(RASCAL, os.X_OK):
        sys.exit("build first: cargo build --release")
    work = tempfile.mkdtemp(prefix="rascal-bench-docker-")
    try:
        build_image(work)
        state = os.path.join(work, "state")
        side_by_side("1 candidate", repo(work, 1), 1, rounds, state)
        side_by_side(f"{n} candidates", repo(work, n), n, rounds, state)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
