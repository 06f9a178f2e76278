"""Every Python operator mutant compiles where a valid mutant exists: an edit next to
parentheses keeps them paired (``not (a < b)`` -> ``(a < b)``, not ``a < b)``), on a line
written to trip it and on real modules nobody here wrote (the standard library's, and attrs',
whose ``_make.py`` gave ``unmatched ')'`` before); and ``# pragma: no mutate`` (mutmut's
convention) keeps a line as it is."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

from suitebench.construct.mutants import mutation_sites, no_mutate_lines
from suitebench.run.pycompile import compile_quietly

PARENS = b"""\
class Cache:
    def expired(self, link):
        if not (self.timer() < link.expires):
            return -(link.size + 1)
        return type(link.name, (tuple,), {}), max((link.size), (2))
"""


def _mutated_line(source: bytes, description: str) -> str:
    (site,) = [s for s in mutation_sites("cache.py", source) if s.description.endswith(description)]
    return site.mutated(source).decode().splitlines()[site.line - 1].strip()


def test_edits_next_to_parentheses_keep_them_paired() -> None:
    # Each expected line written by hand: the operator removed or the arguments swapped with
    # the parentheses that belong to them.
    assert _mutated_line(PARENS, "'not' removed") == "if (self.timer() < link.expires):"
    assert _mutated_line(PARENS, "'-' removed") == "return (link.size + 1)"
    swapped = "return type((tuple,), link.name, {}), max((link.size), (2))"
    assert _mutated_line(PARENS, "arguments link.name, (tuple,) swapped") == swapped
    assert _mutated_line(PARENS, "arguments (link.size), (2) swapped") == (
        "return type(link.name, (tuple,), {}), max((2), (link.size))"
    )
    for site in mutation_sites("cache.py", PARENS):
        compile_quietly(site.mutated(PARENS), "cache.py")


def _real_modules() -> list[Path]:
    names = ["textwrap", "fractions", "shlex", "attr._make"]
    found = []
    for name in names:
        spec = importlib.util.find_spec(name)
        if spec is not None and spec.origin and spec.origin.endswith(".py"):
            found.append(Path(spec.origin))
    return found


@pytest.mark.parametrize("path", _real_modules(), ids=lambda p: p.name)
def test_every_mutant_of_a_real_module_compiles(path: Path) -> None:
    source = path.read_bytes()
    sites = mutation_sites(path.name, source)
    assert len(sites) > 100  # each of these modules has hundreds of sites
    broken = []
    for site in sites:
        try:
            compile_quietly(site.mutated(source), path.name)
        except (SyntaxError, ValueError) as exc:
            broken.append(f"{site.description}: {exc}")
    assert broken == []


def test_a_line_marked_no_mutate_is_left_as_it_is(tmp_path: Path) -> None:
    from suitebench.construct.mutants import generate_operator_mutants
    from suitebench.model.instance import load_instance

    source = (
        "def fee(amount):\n"
        "    if amount > 100:  # pragma: no mutate\n"
        "        return amount * 2\n"
        "    return amount + 1  # pragma: no mutate (the fee floor)\n"
    )
    assert no_mutate_lines(source.encode()) == {2, 4}
    c_source = (
        b"int f(int x) {\n    return x + 1; // pragma: no mutate\n    /* pragma: no mutate */\n}\n"
    )
    assert no_mutate_lines(c_source) == {2, 3}
    (tmp_path / "src" / "fees").mkdir(parents=True)
    (tmp_path / "src" / "fees" / "__init__.py").write_text(source)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_fees.py").write_text("def test_nothing():\n    pass\n")
    (tmp_path / "instance.toml").write_text(
        'name = "fees"\nkind = "python"\npackage = "fees"\nsource = "src"\ntests = "tests"\n'
    )
    candidates, report = generate_operator_mutants(
        load_instance(tmp_path), max_per_file=None, max_per_function=None
    )
    # By hand: line 2 has '>' (2 comparison mutants) and 100 (+1, -1); line 4 has '+' and 1
    # (+1, -1) and its return value: 4 + 4 = 8 sites marked; line 3 keeps '*' -> '/', 2 -> 3,
    # 2 -> 1 and its return value -> None.
    assert report.no_mutate == 8
    assert sorted(site.line for site, _ in candidates) == [3, 3, 3, 3]
