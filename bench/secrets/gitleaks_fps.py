"""The false-positive examples of gitleaks' rule tests (`fps` in
cmd/generate/config/rules/*.go of a gitleaks checkout), as JSON lines.

Only literal examples are taken: an element built by calling a generator is
generated here from its regex where that is simple (`secrets.NewSecret`,
`newPlausibleSecret`, `utils.AlphaNumeric`/`Hex`/`Numeric`), else skipped.
"""

import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from regex_sample import sample  # noqa: E402


def go_strings(src: str, i: int):
    """Parse one Go expression of string literals and `+` from src[i:];
    returns (value or None when not literal, index after it)."""
    parts, ok = [], True
    while True:
        while src[i] in " \t\n":
            i += 1
        if src[i] == "`":
            j = src.index("`", i + 1)
            parts.append(src[i + 1 : j])
            i = j + 1
        elif src[i] == '"':
            j = i + 1
            while src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            parts.append(json.loads(src[i : j + 1].replace("\\'", "'")))
            i = j + 1
        else:
            # a call: take its balanced parentheses
            m = re.match(r"[\w.]+\(", src[i:])
            if not m:
                return None, i
            depth, j = 0, i + m.end() - 1
            while True:
                if src[j] == "(":
                    depth += 1
                elif src[j] == ")":
                    depth -= 1
                    if depth == 0:
                        break
                elif src[j] == "`":
                    j = src.index("`", j + 1)
                elif src[j] == '"':
                    j += 1
                    while src[j] != '"':
                        j += 2 if src[j] == "\\" else 1
                j += 1
            call = src[i : j + 1]
            parts.append(generate(call))
            if parts[-1] is None:
                ok = False
            i = j + 1
        k = i
        while src[k] in " \t":
            k += 1
        if src[k] == "+":
            i = k + 1
            continue
        return ("".join(parts) if ok else None), i


RND = random.Random(20)


def generate(call: str):
    m = re.fullmatch(r"utils\.(AlphaNumeric|Hex|Numeric|AlphaNumericExtendedShort|AlphaNumericExtended)\(\"(\d+)\"\)", call)
    if m:
        cls = {"AlphaNumeric": "[a-z0-9]", "Hex": "[a-f0-9]", "Numeric": "[0-9]",
               "AlphaNumericExtendedShort": "[a-z0-9_-]", "AlphaNumericExtended": "[a-z0-9=_-]"}[m.group(1)]
        return sample(f"{cls}{{{m.group(2)}}}", RND)
    m = re.fullmatch(r"(?:secrets\.NewSecret|newPlausibleSecret)\((.*)\)", call, re.S)
    if m:
        inner = m.group(1).strip()
        if inner.startswith("`") and inner.endswith("`"):
            return sample(inner[1:-1], RND)
        sub = generate(inner)
        if sub is not None:
            return sub
        val, _ = go_strings(inner + ")", 0)
        return None if val is None else val
    return None


def fps(path: Path):
    src = path.read_text()
    for m in re.finditer(r"fps\s*(?::=\s*\[\]string\{|=\s*append\(fps,)", src):
        i = m.end()
        while True:
            while src[i] in " \t\n,":
                i += 1
            if src[i:i + 2] == "//":
                i = src.index("\n", i)
                continue
            if src[i] in "})":
                break
            val, i = go_strings(src, i)
            if val is None:
                # skip this element
                depth = 0
                while not (depth == 0 and src[i] in ",}"):
                    if src[i] == "(":
                        depth += 1
                    elif src[i] == ")":
                        if depth == 0:
                            break
                        depth -= 1
                    i += 1
                yield path.stem, None
                continue
            yield path.stem, val


if __name__ == "__main__":
    root = Path(sys.argv[1]) / "cmd/generate/config/rules"
    n = skipped = 0
    for f in sorted(root.glob("*.go")):
        for rule, val in fps(f):
            if val is None:
                skipped += 1
                continue
            n += 1
            print(json.dumps({"file": rule, "text": val}))
    print(f"{n} examples, {skipped} skipped", file=sys.stderr)
