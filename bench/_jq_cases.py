"""A suite of the team's for gojq (jq in Go): filters, inputs and what ``gojq -c`` prints.

Each case is a filter (``eval/fixtures/<case>.jq``) run on a JSON input
(``eval/fixtures/<case>.json``) as ``./executable -c -f FILTER INPUT``. The expected outputs are
worked out here from jq's manual, in Python: one compact JSON value a line, object keys sorted
(gojq sorts them), whole numbers without a fraction (``4/2`` is ``2``), ``/`` on numbers a float
division, ``%`` truncating toward zero as C's does (jq's manual: "like C"), ``sort`` ordering
numbers, ``add`` summing, ``keys`` sorted, string interpolation with ``tostring``. An error
stops the program with exit status 5 and its message on stderr.
"""

from __future__ import annotations

import json
import math
import random
from collections.abc import Callable
from typing import Any

from _lua_cases import Case


def dump(value: Any) -> str:
    """``gojq -c``'s text of one value (whole floats as integers)."""

    def whole(v: Any) -> Any:
        if isinstance(v, float) and v.is_integer():
            return int(v)
        if isinstance(v, list):
            return [whole(x) for x in v]
        if isinstance(v, dict):
            return {k: whole(x) for k, x in v.items()}
        return v

    return json.dumps(whole(value), sort_keys=True, separators=(",", ":"))


def lines(*values: Any) -> str:
    return "".join(dump(v) + "\n" for v in values)


def paths(r: random.Random) -> tuple[str, Any, str]:
    xs = [r.randint(-50, 50) for _ in range(r.randint(2, 7))]
    doc = {"a": {"b": xs, "name": r.choice(["ann", "bob", "cy"])}, "n": r.randint(0, 9)}
    kind = r.randrange(5)
    if kind == 0:
        i = r.randint(-len(xs), len(xs) - 1)
        return f".a.b[{i}]", doc, lines(xs[i])
    if kind == 1:
        i, j = sorted(r.sample(range(len(xs) + 1), 2))
        return f".a.b[{i}:{j}]", doc, lines(xs[i:j])
    if kind == 2:
        return ".a.b[]", doc, lines(*xs)
    if kind == 3:
        return ".a | keys", doc, lines(["b", "name"])
    want = lines(doc["a"]["name"], doc["n"], None, True)
    return '.a.name, .n, .missing, (.a | has("b"))', doc, want


def arith(r: random.Random) -> tuple[str, Any, str]:
    a, b = r.randint(-100, 100), r.choice([1, 2, 3, 4, 8, -2, -4, 7])
    op = r.choice(["+", "-", "*", "/", "%"])
    if op == "/":
        value: Any = a / b
    elif op == "%":
        value = int(math.fmod(a, b))  # C's %: the sign of the dividend
    else:
        value = {"+": a + b, "-": a - b, "*": a * b}[op]
    return f".x {op} .y", {"x": a, "y": b}, lines(value)


def arrays(r: random.Random) -> tuple[str, Any, str]:
    xs = r.sample(range(-99, 99), r.randint(1, 8))
    kind = r.randrange(8)
    if kind == 0:
        return "sort", xs, lines(sorted(xs))
    if kind == 1:
        return "length, add, min, max", xs, lines(len(xs), sum(xs), min(xs), max(xs))
    if kind == 2:
        k = r.randint(-20, 20)
        return f"map(select(. > {k}))", xs, lines([x for x in xs if x > k])
    if kind == 3:
        k = r.randint(-3, 3)
        return f"map(. * {k}) | reverse", xs, lines([x * k for x in xs][::-1])
    if kind == 4:
        dup = xs + xs[: r.randint(0, len(xs))]
        return "unique", dup, lines(sorted(set(dup)))
    if kind == 5:
        return "first, last", xs, lines(xs[0], xs[-1])
    if kind == 6:
        return "reduce .[] as $x (0; . + $x * $x)", xs, lines(sum(x * x for x in xs))
    k = r.randint(-10, 10)
    return f"any(. > {k}), all(. > {k})", xs, lines(any(x > k for x in xs), all(x > k for x in xs))


WORDS = ["alpha", "Beta", "gamma ray", "x", "Delta-9", "mutants", "a,b,c"]


def strings(r: random.Random) -> tuple[str, Any, str]:
    s = r.choice(WORDS)
    kind = r.randrange(6)
    if kind == 0:
        return "ascii_downcase, ascii_upcase, length", s, lines(s.lower(), s.upper(), len(s))
    if kind == 1:
        return 'split(",")', s, lines(s.split(","))
    if kind == 2:
        return '"<\\(.)>" | length', s, lines(len(s) + 2)
    if kind == 3:
        n = r.randint(-5, 50)
        return '"\\(.s)=\\(.n)"', {"s": s, "n": n}, lines(f"{s}={n}")
    if kind == 4:
        prefix = s[: r.randint(0, len(s))]
        return f'ltrimstr("{prefix}")', s, lines(s[len(prefix) :])
    ws = r.sample(WORDS, 3)
    return 'join("/")', ws, lines("/".join(ws))


def objects(r: random.Random) -> tuple[str, Any, str]:
    names = r.sample(["ann", "bob", "cy", "dee", "eve"], 3)
    people = [{"name": n, "age": r.randint(1, 90)} for n in names]
    kind = r.randrange(5)
    if kind == 0:
        return (
            "sort_by(.age) | map(.name)",
            people,
            lines(
                [p["name"] for p in sorted(people, key=lambda p: p["age"])]  # stable, as jq's
            ),
        )
    if kind == 1:
        k = r.randint(1, 90)
        return (
            f"map(select(.age >= {k}) | .name)",
            people,
            lines([p["name"] for p in people if p["age"] >= k]),
        )
    if kind == 2:
        return "map({(.name): .age}) | add", people, lines({p["name"]: p["age"] for p in people})
    if kind == 3:
        return "map(.age) | add / length", people, lines(sum(p["age"] for p in people) / 3)
    return (
        '.[] | if .age >= 18 then "\\(.name) adult" else "\\(.name) minor" end',
        people,
        lines(*[f"{p['name']} {'adult' if p['age'] >= 18 else 'minor'}" for p in people]),
    )


# (filter, input, exit status, what stderr must hold): jq's documented errors, exit status 5
ERRORS: list[tuple[str, Any, int, str]] = [
    ('error("custom failure")', None, 5, "custom failure"),
    (".a.b", {"a": 5}, 5, "expected an object"),
    (".[] | .x", [1], 5, "expected an object"),
    ("1 / .", 0, 5, "cannot divide number (1) by: number (0)"),
    ('. + "x"', 1, 5, "cannot add"),
    ("keys", "text", 5, "keys cannot be applied"),
]

GENERATORS: dict[str, Callable[[random.Random], tuple[str, Any, str]]] = {
    "paths": paths,
    "arith": arith,
    "arrays": arrays,
    "strings": strings,
    "objects": objects,
}


def cases(count: int, seed: int = 0) -> list[Case]:
    """``count`` cases, categories in turn (the error cases while they last), seeded."""
    out: list[Case] = []
    streams = {c: random.Random(f"{seed}:{c}") for c in GENERATORS}
    numbers = dict.fromkeys([*GENERATORS, "errors"], 0)
    errors = iter(ERRORS)
    while len(out) < count:
        for category in [*GENERATORS, "errors"]:
            if len(out) == count:
                break
            code, err = 0, ""
            if category == "errors":
                nxt = next(errors, None)
                if nxt is None:
                    continue
                jq, doc, code, err = nxt
                want = ""
            else:
                jq, doc, want = GENERATORS[category](streams[category])
            numbers[category] += 1
            name = f"{category}_{numbers[category]:04d}"
            out.append(
                Case(
                    category,
                    name,
                    jq + "\n",
                    want,
                    code,
                    err,
                    files=((f"{name}.jq", jq + "\n"), (f"{name}.json", json.dumps(doc) + "\n")),
                    args=("-c", "-f", f"eval/fixtures/{name}.jq", f"eval/fixtures/{name}.json"),
                )
            )
    return out
