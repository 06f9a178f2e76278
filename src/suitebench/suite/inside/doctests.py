"""The doctests of the package under test, collected as the project's own pytest collects them.

A project whose configuration says ``--doctest-modules`` has pytest collect the doctests of
every module it walks -- the package's own, when the package lies where pytest looks.  Those
doctests are part of the project's suite: a mutant only a doctest kills is killed.  In a suite
run the package is not in the work dir but on ``sys.path`` (a build's tree, a batch's switched
link), so the host asks for it by name (``--suitebench-doctests=PACKAGE``, written by
:mod:`suitebench.suite.execute.projectconfig` into the carried ``pytest.ini``) and this module
adds the package's source root, as an import of the package would find it, to the paths pytest
collects, with everything in that root but the package left out.  The project's text files of
doctests (``--doctest-glob``, ``test*.txt`` by default) that lie in its root are carried beside
the suite and named the same way (``--suitebench-doctest-files=README.rst``), and so are
those in the folders it walks (``testpaths = tests docs``: ``docs/usage/compare.rst``, named
by ``--suitebench-doctest-files-after`` to run after the suite's tests, as pytest orders
them); their ids are the project's own (``docs/usage/compare.rst::compare.rst``).

pytest names a path outside the rootdir after the collected path that holds it, so a doctest's
id is its module's path in the source root and its dotted name (``pkg/mod.py::pkg.mod.f``):
the same for the reference and every mutant, in every engine, wherever the tree lies.  The
module is imported as the tests import it (its root is on ``sys.path`` already), so coverage,
patched function bodies and re-imported modules see one module object.

R's runs (``--suitebench-doctests-from``) collect the package's modules as any run does, but
each module's doctests are the reference's docstring examples for that module's name
(:mod:`suitebench.suite.execute.docstrings` reads them on the host), run in the namespace of
the module imported: the reference's or the candidate's.  The candidate's own docstrings are
not the reference suite's tests.

Standard library and pytest only: it runs in the sandbox, called by the plugin's hooks.
"""

from __future__ import annotations

import doctest
import importlib.util
import inspect
import json
from pathlib import Path
from typing import Any

import pytest


class _Run:
    """What this run collects of the package's doctests."""

    __slots__ = ("package", "reference", "root")

    def __init__(self) -> None:
        self.root: Path | None = None  # the package's source root, when its doctests run
        self.package: str | None = None  # ... and the package
        # --suitebench-doctests-from: module name -> the reference's docstring examples
        self.reference: dict[str, list[dict[str, Any]]] | None = None


_RUN = _Run()
_FIND = doctest.DocTestFinder.find  # the standard library's, restored when a run has no file


def _reference_find(
    self: doctest.DocTestFinder,
    obj: Any,
    name: str | None = None,
    module: Any = None,
    globs: dict[str, Any] | None = None,
    extraglobs: dict[str, Any] | None = None,
) -> list[doctest.DocTest]:
    """For a module: the reference's examples of its name (``--suitebench-doctests-from``),
    each run in this module's namespace, not the module's own docstrings."""
    examples = _RUN.reference
    if examples is None or not inspect.ismodule(obj):
        return _FIND(self, obj, name, module, globs, extraglobs)
    namespace = dict(obj.__dict__ if globs is None else globs)
    namespace.update(extraglobs or {})
    parser = doctest.DocTestParser()
    filename = getattr(obj, "__file__", None)
    tests = [
        parser.get_doctest(e["docstring"], namespace, e["name"], filename, e["lineno"])
        for e in examples.get(obj.__name__, ())
    ]
    return sorted(tests)


def use_reference_examples(config: pytest.Config) -> None:
    """With ``--suitebench-doctests-from=FILE`` (R's runs), the package's modules' doctests
    are the reference's docstring examples that ``FILE`` holds, run in the namespace of the
    module the run imports -- a candidate is held to the reference suite's examples, not to
    those it wrote into its own docstrings."""
    name = config.getoption("--suitebench-doctests-from", None)
    if not name:
        _RUN.reference = None
        doctest.DocTestFinder.find = _FIND  # type: ignore[method-assign]
        return
    with open(config.rootpath / name, encoding="utf-8") as fh:
        _RUN.reference = json.load(fh)
    doctest.DocTestFinder.find = _reference_find  # type: ignore[method-assign]


def source_root(package: str) -> Path | None:
    """Where an import of ``package`` finds it (the directory holding it), without importing
    it; None when it is not a package on ``sys.path``."""
    try:
        spec = importlib.util.find_spec(package)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations))).parent


def _chosen_files(config: pytest.Config) -> set[str] | None:
    """The files of the tests the run's selection (``--suitebench-select`` or ``--fast``'s
    order) names; None when the run takes every test."""
    for option in ("--suitebench-select", "--suitebench-order"):
        path = config.getoption(option, None)
        if path:
            with open(path, encoding="utf-8") as fh:
                return {str(nodeid).split("::", 1)[0] for nodeid in json.load(fh)}
    return None


def add_package(session: pytest.Session) -> None:
    """Collect the doctests the project's pytest would, where a run's selection takes any:
    the text files named (in the rootdir), then the package's source root (pytest's walk of a
    project puts ``README.rst`` and ``src/`` before ``tests/``)."""
    config = session.config
    use_reference_examples(config)
    chosen = _chosen_files(config)
    _RUN.root = None
    paths = _text_files(config, "--suitebench-doctest-files", chosen)
    package = config.getoption("--suitebench-doctests", None)
    wanted = chosen is None or any(f.startswith(f"{package}/") for f in chosen)
    if package and config.getoption("doctestmodules", False) and wanted:
        root = source_root(package)
        if root is not None:
            _RUN.root, _RUN.package = root, package
            paths.append(str(root))
    config.args[:0] = paths
    # the folders ``testpaths`` lists after the suite's (``tests docs``) come after its tests
    config.args.extend(_text_files(config, "--suitebench-doctest-files-after", chosen))


def _text_files(config: pytest.Config, option: str, chosen: set[str] | None) -> list[str]:
    """The text files of doctests ``option`` names (paths from the rootdir) that the run
    takes, as paths pytest collects."""
    paths = []
    for name in filter(None, (config.getoption(option, None) or "").split(",")):
        path = config.rootpath / name
        if (chosen is None or name in chosen) and path.is_file():
            paths.append(str(path))
    return paths


def ignored(collection_path: Path) -> bool:
    """Whether pytest should leave out ``collection_path``: in the package's source root,
    everything but the package (another module there is not the program under test)."""
    root = _RUN.root
    if root is None:
        return False
    return collection_path.parent == root and collection_path.name != _RUN.package
