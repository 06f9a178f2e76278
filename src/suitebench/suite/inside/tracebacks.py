"""One syntax tree per source text for the tracebacks pytest prints in a run.

pytest shows the statement around each line of a traceback, and to find it parses the
frame's whole file (``_pytest._code.source.getstatementrange_ast``).  It keeps the trees for
the frames of one traceback, not across tracebacks: a mutant that breaks an import fails every
test file that imports it, and each of those collection errors parses the same modules again
(on a date library's six test files, about a second of every such run).  Failing tests' reports
pay the same way.  Here the trees are kept by the text they were parsed from, so what pytest
prints is the same, character for character: the tree of a text is the same tree.

A failed test's report is made as the line style shows it (:func:`crash_only`): the crash line
alone, without the filtered traceback pytest would build first and then not show.

Standard library and pytest only (it runs inside the sandbox).  Where pytest has moved the
name, nothing is changed: pytest parses as it always did.
"""

from __future__ import annotations

import ast
import warnings
from typing import Any

_KEPT = 64  # trees kept at most (a run's tracebacks pass through a handful of files)


def share_statement_trees() -> None:
    """Make pytest's traceback formatting parse each source text once per process."""
    try:
        from _pytest._code import code
    except ImportError:
        return
    original = getattr(code, "getstatementrange_ast", None)
    if original is None or getattr(original, "_suitebench_shared", False):
        return
    trees: dict[str, ast.AST] = {}

    def getstatementrange_ast(
        lineno: int, source: Any, assertion: bool = False, astnode: ast.AST | None = None
    ) -> Any:
        if astnode is None:
            content = str(source)
            astnode = trees.get(content)
            if astnode is None:
                try:
                    with warnings.catch_warnings():  # as pytest parses it: no warning shown
                        warnings.simplefilter("ignore")
                        astnode = ast.parse(content, "source", "exec")
                except Exception:  # pytest's own parse raises it, as ever
                    return original(lineno, source, assertion, None)
                if len(trees) >= _KEPT:
                    trees.clear()
                trees[content] = astnode
        return original(lineno, source, assertion, astnode)

    getstatementrange_ast._suitebench_shared = True  # type: ignore[attr-defined]
    code.getstatementrange_ast = getstatementrange_ast


class CrashRepr:
    """A failed test's report as the line style shows it: only the crash line (where the
    exception was raised and its one-line text), which is what is read."""

    def __init__(self, reprcrash: Any) -> None:
        self.reprcrash = reprcrash

    def toterminal(self, tw: Any) -> None:
        tw.line(str(self))

    def __str__(self) -> str:  # the whole message: a rewritten assert explains itself on it
        return f"{self.reprcrash.path}:{self.reprcrash.lineno}: {self.reprcrash.message}"


def crash_only(original: Any) -> Any:
    """``Function.repr_failure`` without the traceback nobody reads: pytest builds the whole
    filtered traceback (reading the test module for each entry) even in the line style, then
    shows only the crash line.  The crash line is the same (``ExceptionInfo._getreprcrash``, as
    pytest's own report takes it); pytest's special cases (``pytest.fail``, a fixture lookup
    error, every entry hidden) go to pytest's own method."""
    from _pytest.fixtures import FixtureLookupError
    from _pytest.outcomes import OutcomeException

    def repr_failure(excinfo: Any, style: Any = None) -> Any:
        value = getattr(excinfo, "value", None)
        if style is None and not isinstance(value, OutcomeException | FixtureLookupError):
            crash = excinfo._getreprcrash()
            if crash is not None:
                return CrashRepr(crash)
        return original(excinfo, style) if style is not None else original(excinfo)

    return repr_failure
