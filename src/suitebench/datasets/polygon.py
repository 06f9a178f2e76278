"""Polygon packages (Codeforces' problem-setting system) -> problems.

A package is a directory with ``problem.xml``: ``judging/testset`` gives the time limit (ms),
the memory limit (bytes), the test files' patterns (``tests/%02d`` and answers
``tests/%02d.a``) and which tests are samples; ``assets`` names the checker, the validators,
the interactor and the solutions, each with its source path and language type
(``cpp.g++17``, ``java11``, ``python.3``, ...). PATH is one package or a directory of them.

What each becomes: the testset's tests the ``official`` arm (samples also the ``samples``
arm), each answer written beside its input; the checker source (a testlib program, with the
package's ``files/testlib.h``) the checker, and the first validator the validator (testlib's
convention is this judge's: exit 0 legal); the solutions pools named after their tags
(``main`` and ``accepted`` the ``accepted`` pool, ``main`` first; ``wrong-answer``,
``time-limit-exceeded``, ``rejected``, ...); the interactor ``interactor = "<its source>"``.
A test missing from the package (a package built without its generated tests) is dropped
and counted; ``input-file``/``output-file`` I/O is skipped with the reason.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

from suitebench.datasets.common import limits
from suitebench.datasets.languages import Dialect, Lang, LanguageDrop, dialect_from_text
from suitebench.datasets.options import ImportOptions
from suitebench.datasets.packages import (
    escape,
    package_dirs,
    pool_name,
    program_name,
    read_text,
    relative_inside,
)
from suitebench.datasets.writer import (
    Dropped,
    ProblemDraft,
    Program,
    Skipped,
    TestCase,
    problem_id,
)

__all__ = ["polygon_language", "read"]

#: Polygon's defaults where a testset gives no limit (its own: 1 s, 256 MiB).
DEFAULT_TIME_LIMIT, DEFAULT_MEMORY_MB = 1.0, 256
_ACCEPTED_TAGS = ("main", "accepted")


def polygon_language(kind: str) -> Lang | Dialect | LanguageDrop:
    """A Polygon source type: ``cpp.g++17``, ``cpp.gcc13-64-winlibs-g++20`` (C++ with that
    standard), ``c.gcc`` (C11, GNU), ``java8`` ... ``java21``, ``python.3``, ``python.pypy3``;
    Python 2 and other languages are dropped with the type's name."""
    k = kind.strip().lower()
    if k.startswith("cpp."):
        found = dialect_from_text(k.replace("cpp.", "c++ ", 1))
        return Lang.CPP if isinstance(found, Lang) else found
    if k.startswith("c."):
        return Dialect(Lang.C, "gnu11")
    if re.fullmatch(r"java\d*", k):  # java8 ... java21: that release (javac --release)
        return dialect_from_text(k)
    if k in ("python.3", "python.pypy3", "python.pypy3-64"):
        return Lang.PYPY3 if "pypy" in k else Lang.PYTHON3
    if k.startswith("python.") and "2" in k:
        return LanguageDrop("python2: no interpreter")
    return LanguageDrop(f"language {kind}: not imported")


#: testlib's standard checkers (``std::NAME.cpp``) and the built-in that compares as they do.
STD_CHECKERS = {
    "wcmp": "tokens",
    "ncmp": "tokens",
    "hcmp": "tokens",
    "lcmp": "lines",
    "fcmp": "lines",
    "yesno": "icpc",  # one token, YES / NO in any case
    "nyesno": "icpc",
    "rcmp": "float:1.5e-6",
    "acmp": "float:1.5e-6",
    "dcmp": "float:1e-6",
    "rcmp4": "float:1e-4",
    "rcmp6": "float:1e-6",
    "rcmp9": "float:1e-9",
}


def _std_checker(el: ET.Element | None) -> str | None:
    """The built-in for a standard testlib checker (``<checker name="std::wcmp.cpp">``)."""
    name = el.get("name", "") if el is not None else ""
    m = re.fullmatch(r"std::(\w+)(\.cpp)?", name)
    return STD_CHECKERS.get(m.group(1)) if m else None


def _pattern_path(root: Path, pattern: str, n: int) -> Path:
    return root / (pattern % n)


def _tests(
    root: Path, testset: ET.Element, dropped: list[Dropped]
) -> tuple[tuple[TestCase, ...], tuple[TestCase, ...]]:
    """(all tests, samples) of the testset, with answers where the package has them."""
    inp = testset.findtext("input-path-pattern") or "tests/%02d"
    ans = testset.findtext("answer-path-pattern") or "tests/%02d.a"
    if not (relative_inside(inp) and relative_inside(ans)):
        dropped.append(Dropped("testset", f"test paths {inp!r} outside the package", "field"))
        return (), ()
    tests, samples = [], []
    for i, t in enumerate(testset.findall("tests/test"), start=1):
        f, a = _pattern_path(root, inp, i), _pattern_path(root, ans, i)
        origin = f.relative_to(root).as_posix()
        if not f.is_file():
            how = t.get("cmd") or t.get("method") or "?"
            dropped.append(Dropped(origin, f"not in the package (made by {how!r})", "test"))
            continue
        case = TestCase(read_text(f), read_text(a) if a.is_file() else None, origin)
        tests.append(case)
        if t.get("sample") == "true":
            samples.append(case)
    return tuple(tests), tuple(samples)


def _source(el: ET.Element | None) -> tuple[str, str] | None:
    src = el.find("source") if el is not None else None
    if src is None or not relative_inside(src.get("path", "")):
        return None  # none, or a path outside the package
    return src.get("path", ""), src.get("type", "")


def _pools(
    root: Path, assets: ET.Element, options: ImportOptions, dropped: list[Dropped]
) -> dict[str, tuple[Program, ...]]:
    by_tag: dict[str, list[Program]] = {}
    taken: set[str] = set()
    sols = sorted(
        assets.findall("solutions/solution"), key=lambda s: s.get("tag") != "main"
    )  # main first: the first reference
    for sol in sols:
        found = _source(sol)
        if found is None:
            continue
        rel, kind = found
        tag = sol.get("tag") or "accepted"
        pool = "accepted" if tag in _ACCEPTED_TAGS else pool_name(tag)
        lang = polygon_language(kind)
        if isinstance(lang, LanguageDrop):
            dropped.append(Dropped(rel, lang.reason))
            continue
        base, standard = (lang.lang, lang.standard) if isinstance(lang, Dialect) else (lang, None)
        if base not in options.languages:
            dropped.append(Dropped(rel, f"language {base} not selected (--languages)"))
            continue
        path = root / rel
        if not path.is_file():
            dropped.append(Dropped(rel, "not in the package"))
            continue
        prog = Program(program_name(path, taken), base, read_text(path), rel, standard)
        by_tag.setdefault(pool, []).append(prog)
    return {k: tuple(v) for k, v in by_tag.items()}


def _program_file(
    root: Path, el: ET.Element | None, files: dict[str, str], what: str, dropped: list[Dropped]
) -> str | None:
    """A checker, validator or interactor source copied as it is (with the package's
    ``files/*.h`` beside it); its path relative to the problem, or None."""
    found = _source(el)
    if found is None:
        return None
    rel, kind = found
    if not (root / rel).is_file():
        dropped.append(Dropped(rel, f"{what} source not in the package", "field"))
        return None
    if isinstance(polygon_language(kind), LanguageDrop):
        dropped.append(Dropped(rel, f"{what} in {kind}: not built here", "field"))
        return None
    files[rel] = read_text(root / rel)
    for h in sorted((root / rel).parent.glob("*.h")):
        files.setdefault(h.relative_to(root).as_posix(), read_text(h))
    return rel


def draft(root: Path, options: ImportOptions) -> ProblemDraft | Skipped:
    xml = root / "problem.xml"
    link = escape(root)
    if link is not None:
        return Skipped(root.name, root, 0, f"{link} links outside the package")
    try:
        doc = ET.parse(xml).getroot()
    except ET.ParseError as exc:
        return Skipped(root.name, root, 0, f"problem.xml not XML: {exc}")
    name = doc.get("short-name") or root.name
    judging = doc.find("judging")
    if judging is not None and (judging.get("input-file") or judging.get("output-file")):
        return Skipped(name, root, 0, "file input/output: the judge gives stdio only")
    testset = judging.find("testset[@name='tests']") if judging is not None else None
    if testset is None and judging is not None:
        testset = judging.find("testset")
    if testset is None:
        return Skipped(name, root, 0, "no testset in problem.xml")
    dropped: list[Dropped] = []
    assets = doc.find("assets")
    if assets is None:
        return Skipped(name, root, 0, "no assets (solutions) in problem.xml")
    files: dict[str, str] = {}
    checker = _std_checker(assets.find("checker")) or (
        _program_file(root, assets.find("checker"), files, "checker", dropped) or "tokens"
    )
    validator = _program_file(
        root, assets.find("validators/validator"), files, "validator", dropped
    )
    interactor = _program_file(root, assets.find("interactor"), files, "interactor", dropped)
    pools = _pools(root, assets, options, dropped)
    tests, samples = _tests(root, testset, dropped)
    if not pools.get("accepted"):
        return Skipped(name, root, 0, "no usable main or accepted solution", tuple(dropped))
    if not tests:
        return Skipped(name, root, 0, "no test in the package", tuple(dropped))
    tl_ms = testset.findtext("time-limit")
    mem_b = testset.findtext("memory-limit")
    time_limit, memory_limit = limits(
        float(tl_ms) / 1000 if tl_ms and tl_ms.strip().isdigit() else None,
        int(mem_b) / 2**20 if mem_b and mem_b.strip().isdigit() else None,
        dropped,
        default_time=DEFAULT_TIME_LIMIT,
        default_memory=DEFAULT_MEMORY_MB,
        sources=("problem.xml testset time-limit", "problem.xml testset memory-limit"),
    )
    title_el = doc.find("names/name")
    notes = [f"interactive: interactor = {interactor}"] if interactor else []
    return ProblemDraft(
        id=problem_id(name),
        title=title_el.get("value", name) if title_el is not None else name,
        statement="",
        time_limit=time_limit,
        memory_limit=memory_limit,
        source_file=xml,
        row=0,
        fields_used=("judging/testset", "assets"),
        checker=checker,
        validator=validator,
        files=files,
        pools=pools,
        arms={"official": tests, "samples": samples},
        dropped=tuple(dropped),
        metadata={"package": str(root), "revision": doc.get("revision"), "url": doc.get("url")},
        notes=tuple(notes),
        # an interactive problem's .ans is the interactor's, not an expected output
        answers_beside=interactor is None,
        interactor=interactor,
    )


def read(path: Path, options: ImportOptions) -> Iterator[ProblemDraft | Skipped | Dropped]:
    for root in package_dirs(path, "problem.xml"):
        yield draft(root, options)
