"""A real-size ``kind = "python"`` instance, generated: a package of several modules, a suite of
hundreds of tests whose own work dominates, and operator mutants spread over every module.

The package ``ledgerlib`` has ``modules`` modules of ``functions`` small numeric routines each
(a filtered, weighted sum with a threshold; the kind of loop whose boundary and operator bugs
mutation testing is about).  Each routine has ``tests_per_function`` tests that feed it ``size``
values and compare with an independent oracle written in the test, so a test costs
milliseconds of real work and the tests' own work dominates a run of the suite.  Mutants
replace one comparison or arithmetic operator inside a function body: some are killed by the
tests of that function, some survive (the suite's blind spots), none changes code that runs on
import.
"""

from __future__ import annotations

import difflib
import random
from pathlib import Path

# Values a test feeds its routine: ~3.7 ms of the test's own work (a plain run of the 240 tests
# took 1.3 s, 0.3 s of it interpreter, pytest and collection).  At 3,000 the tests took 12% of
# a run: start-up, not the tests, dominated.
DEFAULT_SIZE = 50_000

_FUNCTION = '''

def {name}(values: list[int]) -> int:
    """Weighted sum of the values congruent to {r} mod {m}; a penalty above {t}."""
    total = 0
    for v in values:
        if v % {m} == {r}:
            total += v * {a}
        elif v > {t}:
            total -= {b}
    return total
'''

_TEST = """

def test_{name}_{k}() -> None:
    values = list(range({start}, {start} + {size}))
    expected = 0
    for v in values:
        if v % {m} == {r}:
            expected += v * {a}
        elif v > {t}:
            expected -= {b}
    assert {module}.{name}(values) == expected
"""

# (original, replacement) inside a function body: relational and arithmetic operator swaps
_SWAPS = [
    (" == {r}:", " != {r}:"),
    (" > {t}:", " >= {t}:"),
    ("v * {a}", "v + {a}"),
    ("total -= {b}", "total += {b}"),
    (" % {m} ", " // {m} "),
]


def generate(
    root: Path,
    *,
    modules: int = 6,
    functions: int = 8,
    tests_per_function: int = 5,
    mutants: int = 60,
    size: int = DEFAULT_SIZE,
    seed: int = 7,
) -> Path:
    """Write the instance under ``root`` and return its directory."""
    rng = random.Random(seed)
    src = root / "src" / "ledgerlib"
    tests = root / "tests"
    (root / "mutants").mkdir(parents=True)
    src.mkdir(parents=True)
    tests.mkdir()
    (src / "__init__.py").write_text('"""ledgerlib: small numeric routines."""\n')
    params: dict[tuple[int, int], dict[str, int]] = {}
    texts: dict[int, str] = {}
    for i in range(modules):
        text = f'"""Module {i} of ledgerlib."""\n'
        test_text = f'"""Tests of ledgerlib.mod{i}."""\n\nfrom ledgerlib import mod{i}\n'
        for j in range(functions):
            p = {
                "m": rng.randint(3, 9),
                "a": rng.randint(2, 7),
                "b": rng.randint(1, 5),
                "t": rng.randint(50, 900),
            }
            p["r"] = rng.randint(0, p["m"] - 1)
            params[(i, j)] = p
            text += _FUNCTION.format(name=f"f{j}", **p)
            for k in range(tests_per_function):
                # Some tests never reach the threshold or the residue: blind spots, survivors.
                start = rng.choice([0, 0, p["t"] - 40, rng.randint(0, 2000)])
                test_text += _TEST.format(
                    name=f"f{j}", k=k, start=max(0, start), size=size, module=f"mod{i}", **p
                )
        texts[i] = text
        (src / f"mod{i}.py").write_text(text)
        (tests / f"test_mod{i}.py").write_text(test_text)
    (root / "spec.md").write_text("# ledgerlib\n\n## Routines\n\nWeighted sums.\n")
    toml = (
        'name = "ledgerlib"\nkind = "python"\nspec = "spec.md"\nsource = "src/"\n'
        'package = "ledgerlib"\ntests = "tests/"\n'
    )
    # Spread the mutants evenly over the modules, each in a random function.
    for n in range(mutants):
        i = n % modules
        j = rng.randrange(functions)
        p = params[(i, j)]
        lines = texts[i].splitlines(keepends=True)
        header = f"def f{j}("
        begin = next(x for x, line in enumerate(lines) if line.startswith(header))
        old, new = (s.format(**p) for s in rng.choice(_SWAPS))
        body = next(x for x in range(begin, begin + 10) if old in lines[x])
        after = list(lines)
        after[body] = lines[body].replace(old, new, 1)
        diff = "".join(
            difflib.unified_diff(
                lines, after, fromfile=f"a/ledgerlib/mod{i}.py", tofile=f"b/ledgerlib/mod{i}.py"
            )
        )
        mid = f"m{n + 1:03d}"
        (root / "mutants" / f"{mid}.diff").write_text(diff)
        toml += f'\n[[mutants]]\nid = "{mid}"\npatch = "mutants/{mid}.diff"\nsection = "Routines"\n'
    (root / "instance.toml").write_text(toml)
    return root
