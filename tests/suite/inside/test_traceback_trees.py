"""pytest's tracebacks parse each source text once per run, and print the same.

A mutant that breaks an import fails every test file that imports it; pytest formats each
collection error with the statement around every frame's line, parsing the frame's file
each time.  :mod:`suitebench.suite.inside.tracebacks` keeps the trees by text.
"""

from __future__ import annotations

import ast
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from _pytest._code import code

from suitebench.suite.inside import tracebacks

# A package whose import fails three frames deep, imported by three test files: the module
# text ``prices/rates.py`` appears in every collection error's traceback.
RATES = textwrap.dedent(
    """
    def table(rows):
        out = {}
        for name, value in rows:
            out[name] = parse(value)
        return out


    def parse(value):
        whole, cents = value.split(".")
        return int(whole) * 100 + int(cents)


    RATES = table([("eur", "1.10"), ("gbp", "1,25")])  # the mutant's comma
    """
)


def _project(root: Path) -> Path:
    pkg = root / "prices"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("from prices.rates import RATES\n")
    (pkg / "rates.py").write_text(RATES)
    tests = root / "tests"
    tests.mkdir()
    for name in ("a", "b", "c"):
        (tests / f"test_{name}.py").write_text(
            f"from prices import RATES\n\n\ndef test_{name}():\n    assert RATES['eur'] == 110\n"
        )
    return root


def _collect_errors(root: Path, *, shared: bool) -> str:
    """pytest's output for the project, with or without the shared trees."""
    plugin = root / "share_trees.py"
    plugin.write_text(
        "from suitebench.suite.inside import tracebacks\n\n\n"
        "def pytest_configure(config):\n"
        "    tracebacks.share_statement_trees()\n"
    )
    args = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests"]
    if shared:
        args[3:3] = ["-p", "share_trees"]
    done = subprocess.run(
        args, cwd=root, capture_output=True, text=True, timeout=120, env=_env(root)
    )
    assert done.returncode == 2, done.stdout + done.stderr  # interrupted: collection errors
    return done.stdout


def _env(root: Path) -> dict[str, str]:
    import os

    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(root), *sys.path])
    return env


def test_collection_errors_print_the_same(tmp_path: Path) -> None:
    root = _project(tmp_path)
    plain, shared = _collect_errors(root, shared=False), _collect_errors(root, shared=True)
    # The three files' errors, each with the bad value's line ('1,25' splits to one part:
    # not enough values to unpack) and its summary line.
    assert plain.count(" ERROR collecting tests/test_") == 3
    assert plain.count("whole, cents = value.split") == 3
    assert plain.count("ValueError: not enough values to unpack") == 6
    assert shared == plain.replace(_timing(plain), _timing(shared))


def _timing(output: str) -> str:
    return output.strip().splitlines()[-1]  # "3 errors in 0.12s"


def test_each_text_is_parsed_once(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The same traceback formatted three times: pytest alone parses each file of its frames
    once a formatting; shared, once in all."""
    monkeypatch.setattr(code, "getstatementrange_ast", code.getstatementrange_ast)
    module = tmp_path / "rates_mod.py"
    module.write_text(RATES.replace("RATES = table", "# RATES = table"))
    namespace: dict[str, object] = {}
    exec(compile(module.read_text(), str(module), "exec"), namespace)

    def failure() -> pytest.ExceptionInfo[BaseException]:
        try:
            namespace["table"]([("gbp", "1,25")])  # type: ignore[operator]
        except ValueError:
            return pytest.ExceptionInfo.from_current()
        raise AssertionError("table() should fail")

    parsed: list[str] = []
    real_parse = ast.parse

    def counting(source: object, *args: object, **kwargs: object) -> ast.AST:
        parsed.append(str(source)[:20])
        return real_parse(source, *args, **kwargs)  # type: ignore[arg-type]

    before = [str(failure().getrepr(style="short")) for _ in range(3)]
    monkeypatch.setattr(ast, "parse", counting)
    alone = [str(failure().getrepr(style="short")) for _ in range(3)]
    alone_parses = len(parsed)
    parsed.clear()
    tracebacks.share_statement_trees()
    tracebacks.share_statement_trees()  # a second call changes nothing
    shared = [str(failure().getrepr(style="short")) for _ in range(3)]
    # Frames: failure() in this file; table() and parse() in rates_mod.py (pytest keeps one
    # tree per file within a formatting).  Alone: 2 files x 3 formattings; shared: 2.
    assert alone_parses == 6
    assert len(parsed) == 2
    assert "rates_mod.py" in shared[0] and "int(whole)" not in shared[0]
    assert shared == alone == before
