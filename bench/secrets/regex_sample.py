"""Random strings that match a (Go RE2 flavoured) regex.

Used to generate sample tokens from a rule set's regexes (e.g. gitleaks'
default config) so that recognition can be measured against rules rascal
did not write. Literals keep their case; under `(?i)` a letter drawn from a
class gets a random case.
"""

import random
import re
import re._constants as C
import re._parser as P

ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
# Boundary constructs around a token: not part of it.
BOUNDARIES = [
    r"""(?:[\x60'"\s;]|\\[nr]|$|\b)""",
    r"""(?:[\x60'"\s;]|\\[nr]|$)""",
    r"""(?:$|[\\'"\x60\s<),])""",
    r"""(?:^|[\\'"\x60\s>=:(,)])""",
    r"""(?:[^\w-]|\z)""",
]
POSIX = {
    "[:alnum:]": "a-zA-Z0-9",
    "[:alpha:]": "a-zA-Z",
    "[:digit:]": "0-9",
    "[:upper:]": "A-Z",
    "[:lower:]": "a-z",
    "[:xdigit:]": "0-9a-fA-F",
    "[:word:]": r"\w",
}


def go_to_python(rx: str) -> str:
    for b in BOUNDARIES:
        rx = rx.replace(b, "")
    for k, v in POSIX.items():
        rx = rx.replace(k, v)
    rx = rx.replace(r"\z", r"\Z")
    # Python allows global flags only at the start: turn a later `(?i)` into
    # a scoped group that closes where its enclosing group closes.
    out, stack, i = [], [0], 0
    while i < len(rx):
        c = rx[i]
        if c == "\\":
            out.append(rx[i : i + 2])
            i += 2
            continue
        if c == "[":
            j = i + 1
            if j < len(rx) and rx[j] == "^":
                j += 1
            if j < len(rx) and rx[j] == "]":
                j += 1
            while rx[j] != "]":
                j += 2 if rx[j] == "\\" else 1
            out.append(rx[i : j + 1])
            i = j + 1
            continue
        m = re.match(r"\(\?([a-z]+)\)", rx[i:])
        if m and i > 0:
            out.append(f"(?{m.group(1)}:")
            stack[-1] += 1
            i += m.end()
            continue
        if c == "(":
            stack.append(0)
        elif c == ")":
            out.append(")" * stack.pop())
        out.append(c)
        i += 1
    out.append(")" * stack.pop())
    return "".join(out)


def _chars(items, rnd):
    """The characters an IN node allows."""
    negate = False
    pool = []
    for op, av in items:
        if op is C.NEGATE:
            negate = True
        elif op is C.LITERAL:
            pool.append(chr(av))
        elif op is C.RANGE:
            pool.extend(chr(c) for c in range(av[0], av[1] + 1))
        elif op is C.CATEGORY:
            if av is C.CATEGORY_DIGIT:
                pool.extend("0123456789")
            elif av is C.CATEGORY_WORD:
                pool.extend(ALNUM + "_")
            elif av is C.CATEGORY_SPACE:
                pool.append(" ")
            elif av is C.CATEGORY_NOT_SPACE:
                pool.extend(ALNUM)
            elif av is C.CATEGORY_NOT_WORD:
                pool.append("-")
            elif av is C.CATEGORY_NOT_DIGIT:
                pool.extend("abcdef")
    if negate:
        return [c for c in ALNUM + " -_.=+/" if c not in pool] or [" "]
    return pool


def _gen(nodes, rnd, icase, groups, out):
    for op, av in nodes:
        if op is C.LITERAL:
            out.append(chr(av))
        elif op is C.NOT_LITERAL:
            out.append(rnd.choice([c for c in ALNUM if ord(c) != av]))
        elif op is C.ANY:
            out.append(rnd.choice(ALNUM))
        elif op is C.IN:
            c = rnd.choice(_chars(av, rnd))
            if icase and c.isalpha():
                c = c.upper() if rnd.random() < 0.5 else c.lower()
            out.append(c)
        elif op in (C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", None)):
            lo, hi, sub = av
            if hi is C.MAXREPEAT:
                hi = lo + 16
            for _ in range(rnd.randint(lo, min(hi, lo + 64))):
                _gen(sub, rnd, icase, groups, out)
        elif op is C.SUBPATTERN:
            gid, add, rem, sub = av
            ic = (icase or bool(add & re.IGNORECASE)) and not (rem & re.IGNORECASE)
            start = len(out)
            _gen(sub, rnd, ic, groups, out)
            if gid:
                groups[gid] = "".join(out[start:])
        elif op is C.BRANCH:
            _gen(rnd.choice(av[1]), rnd, icase, groups, out)
        elif op is C.GROUPREF:
            out.append(groups.get(av, ""))
        elif op in (C.AT, C.ASSERT, C.ASSERT_NOT):
            pass
        elif op is C.ATOMIC_GROUP:
            _gen(av, rnd, icase, groups, out)
        else:
            raise ValueError(f"unsupported regex node {op}")


def sample(rx: str, rnd: random.Random) -> str:
    """One string matching `rx` (Go syntax), without boundary characters."""
    py = go_to_python(rx)
    parsed = P.parse(py)
    icase = bool(parsed.state.flags & re.IGNORECASE)
    out = []
    _gen(list(parsed), rnd, icase, {}, out)
    s = "".join(out)
    return s.strip()


if __name__ == "__main__":
    import sys

    r = random.Random(1)
    for rx in sys.argv[1:]:
        print(sample(rx, r))
