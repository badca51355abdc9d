"""Measure the secret scan with the real `rascal` binary.

    recognition.py providers BIN          documented formats of issue 20's providers, 5 samples each
    recognition.py gitleaks BIN TOML      5 samples per prefixed rule of a gitleaks config
    recognition.py fps BIN JSONL          gitleaks' false-positive examples (gitleaks_fps.py)
    recognition.py corpus BIN DIR         real code: every finding is a false alarm

Each writes the lines into a fresh git repository whose base commit has
`.rascal/guardrails.yaml` with the secrets builtin, runs `rascal check
--json` on the uncommitted files, and counts the lines with a finding
(warning or worse). Tokens sit in neutral code: `client.connect("<token>")`.
"""

import json
import random
import subprocess
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))

SEVERE = {"warning", "error", "critical"}
NOT_FINDINGS = {"secrets/unscanned", "secrets/config", "secrets/binary"}


def check(binary, files, base_files=None):
    """{path: {line: [rules]}} of the findings in `files` (path → text)."""
    with tempfile.TemporaryDirectory() as d:
        repo = Path(d)
        git = lambda *a: subprocess.run(["git", "-C", d, *a], check=True, capture_output=True)
        git("init", "-q")
        (repo / ".rascal").mkdir()
        (repo / ".rascal/guardrails.yaml").write_text(
            "guardrails:\n  - { name: secrets, builtin: secrets, max_file_bytes: 100000000 }\n"
        )
        for p, t in (base_files or {}).items():
            (repo / p).parent.mkdir(parents=True, exist_ok=True)
            (repo / p).write_text(t)
        git("add", ".")
        git("-c", "user.email=a@b", "-c", "user.name=a", "commit", "-qm", "base")
        for p, t in files.items():
            (repo / p).parent.mkdir(parents=True, exist_ok=True)
            (repo / p).write_text(t)
        out = subprocess.run([binary, "-C", d, "check", "--json"], capture_output=True, text=True)
        if out.returncode not in (0, 1):
            sys.exit(f"rascal check failed ({out.returncode}): {out.stderr}")
        doc = json.loads(out.stdout)
        found = defaultdict(lambda: defaultdict(list))
        for layer in doc["layers"]:
            for i in layer.get("issues", []):
                if i["severity"] in SEVERE and i["rule"] not in NOT_FINDINGS:
                    found[i.get("path")][i.get("line")].append(i["rule"])
        return found


def check_lines(binary, lines):
    """{line number (1-based, over all lines): rules}: five lines a file,
    so the per-file cap on findings never hides one."""
    files = {}
    for start in range(0, len(lines), 5):
        files[f"tokens/t{start // 5:04}.py"] = "\n".join(lines[start : start + 5]) + "\n"
    found = check(binary, files)
    out = {}
    for start in range(0, len(lines), 5):
        for line, rules in found.get(f"tokens/t{start // 5:04}.py", {}).items():
            out[start + line] = rules
    return out


def neutral(token):
    return f'client.connect("{token}")'


def providers(binary):
    from providers import NAMED, PREFIXED, expand

    rnd = random.Random(20)
    lines, keys = [], []
    for prov, fmt, tpl in PREFIXED:
        for _ in range(5):
            lines.append(neutral(expand(tpl, rnd)))
            keys.append((prov, fmt))
    named_start = len(lines)
    for prov, fmt, tpl in NAMED:
        for _ in range(5):
            lines.append(expand(tpl, rnd))
            keys.append((prov, fmt + " (named)"))
    found = check_lines(binary, lines)
    by_format = defaultdict(int)
    for n, key in enumerate(keys, 1):
        by_format[key] += 1 if found.get(n) else 0
    formats = [(p, f) for p, f, _ in PREFIXED]
    seen_formats = sum(1 for k in formats if by_format[k] == 5)
    provs = sorted({p for p, _ in formats})
    seen_provs = sum(1 for p in provs if all(by_format[(q, f)] == 5 for q, f in formats if q == p))
    any_provs = sum(1 for p in provs if any(by_format[(q, f)] for q, f in formats if q == p))
    lines_found = sum(1 for n in range(1, named_start + 1) if found.get(n))
    print(f"prefixed formats: {seen_formats}/{len(formats)} recognised in all 5 samples")
    print(f"prefixed sample lines: {lines_found}/{named_start}")
    print(f"providers: {seen_provs}/{len(provs)} with every format recognised, {any_provs}/{len(provs)} with at least one")
    for p, f, _ in NAMED:
        print(f"named {p} {f}: {by_format[(p, f + ' (named)')]}/5")
    for k in formats:
        if by_format[k] < 5:
            print(f"  missed: {k[0]} {k[1]} ({by_format[k]}/5)")


# gitleaks rules whose tokens do not carry their own prefix: the value needs
# a telling name or other context (or the rule is not a token format).
CONTEXT_RULES = {
    "curl-auth-header", "curl-auth-user", "kubernetes-secret-yaml", "nuget-config-password",
    "freemius-secret-key", "pkcs12-file", "private-key", "facebook-access-token",
    "sourcegraph-access-token", "generic-api-key",
}


def gitleaks(binary, toml_path):
    import tomllib

    from regex_sample import sample

    rules = tomllib.load(open(toml_path, "rb"))["rules"]
    chosen = [
        r for r in rules
        if r.get("regex") and "[\\w.-]{0,50}?" not in r["regex"] and r["id"] not in CONTEXT_RULES
    ]
    rnd = random.Random(20)
    lines, ids = [], []
    for r in chosen:
        for _ in range(5):
            lines.append(neutral(sample(r["regex"], rnd)))
            ids.append(r["id"])
    found = check_lines(binary, lines)
    per = defaultdict(int)
    for n, rid in enumerate(ids, 1):
        per[rid] += 1 if found.get(n) else 0
    full = sum(1 for r in chosen if per[r["id"]] == 5)
    some = sum(1 for r in chosen if per[r["id"]] > 0)
    print(f"gitleaks prefixed rules: {len(chosen)}; recognised in all 5 samples: {full}, in at least one: {some}")
    print(f"sample lines: {sum(per.values())}/{len(lines)}")
    for r in chosen:
        if per[r["id"]] < 5:
            print(f"  {r['id']}: {per[r['id']]}/5")


def fps(binary, jsonl):
    examples = [json.loads(l) for l in open(jsonl)]
    files = {f"fp/{n:04}.txt": e["text"] + "\n" for n, e in enumerate(examples)}
    found = check(binary, files)
    flagged = [(p, found[p]) for p in sorted(found)]
    print(f"gitleaks false-positive examples flagged: {len(flagged)}/{len(examples)}")
    for p, lines in flagged:
        n = int(p.split("/")[1].split(".")[0])
        rules = sorted({r for rs in lines.values() for r in rs})
        print(f"  {examples[n]['file']}: {examples[n]['text'][:100]!r} {rules}")


def corpus(binary, root):
    root = Path(root)
    files = {}
    for p in sorted(root.rglob("*")):
        if p.is_file() and p.suffix in {".rs", ".py", ".go", ".js", ".ts", ".mjs"}:
            files["corpus/" + str(p.relative_to(root))] = p.read_text(errors="replace")
    lines = sum(t.count("\n") for t in files.values())
    found = check(binary, files)
    n = sum(len(v) for v in found.values())
    print(f"corpus: {len(files)} files, {lines} lines; lines with a finding: {n}")
    for p in sorted(found):
        for line, rules in sorted(found[p].items()):
            text = files[p].split("\n")[line - 1].strip() if line else ""
            print(f"  {p}:{line} {rules} {text[:110]}")


if __name__ == "__main__":
    mode, binary, *rest = sys.argv[1:]
    {"providers": providers, "gitleaks": gitleaks, "fps": fps, "corpus": corpus}[mode](binary, *rest)
