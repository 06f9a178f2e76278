"""The Kattis / ICPC problem package format (Kattis, ICPC, DOMjudge) -> problems.

A package is a directory: ``problem.yaml`` (``name``, ``limits``, ``validation`` or ``type``,
``validator_flags``), ``.timelimit`` (DOMjudge's export) or ``domjudge-problem.ini``,
``data/sample`` and ``data/secret`` (``X.in`` with its answer ``X.ans``, groups at any depth),
``input_validators/``, ``output_validators/`` (``output_validator/`` in the 2023-07 version),
``submissions/<verdict>/`` and the statement
(``problem_statement/`` or ``statement/``). PATH is one package or a directory of them.

What each becomes: ``data/secret`` the ``official`` arm and ``data/sample`` the ``samples``
arm, each answer written beside its input (``tests/001.ans``: the audit checks the consensus
gold against it); ``submissions/accepted`` the ``accepted`` pool (a seeded pick of it the
references) and every other verdict folder a pool of its name (``wrong_answer``,
``time_limit_exceeded``, ``run_time_error``, ...); the output validator the checker (the
default one as the built-in ``icpc:FLAGS`` with the package's ``validator_flags``, a custom one
wrapped, :func:`~suitebench.datasets.packages.kattis_wrapper`); the input validator the
validator (wrapped likewise). Limits: the time limit from ``.timelimit``,
``domjudge-problem.ini`` or ``limits.time_limit``; the memory limit from ``limits.memory``
(MiB), else the format's default, 2048 MiB. A package that gives no time limit leaves it to be
computed from its accepted submissions' run times (``time_multiplier``): the import records
the rule (``metadata.time_rule``) and takes :data:`UNMEASURED_TIME_LIMIT`, said so;
``--measure-time-limits`` measures it (:mod:`suitebench.cli._time_limits`).

Interactive problems (``validation: custom interactive``, ``type: interactive``) are written
with ``interactor = "<the output validator's source>"``; scoring problems are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from suitebench.datasets.common import limits
from suitebench.datasets.options import ImportOptions
from suitebench.datasets.packages import (
    escape,
    kattis_wrapper,
    language_by_extension,
    package_dirs,
    pool_name,
    programs_from_files,
    read_text,
    tests_from_dir,
    walk_files,
)
from suitebench.datasets.source import DatasetError
from suitebench.datasets.writer import Dropped, ProblemDraft, Program, Skipped, problem_id
from suitebench.model.problem import parse_icpc_flags

__all__ = ["DEFAULT_MEMORY_MB", "UNMEASURED_TIME_LIMIT", "read"]

FORMAT = "kattis"
#: The format's default memory limit (``limits.memory``), MiB.
DEFAULT_MEMORY_MB = 2048
#: Taken where a package gives no time limit (the format computes one from its accepted
#: submissions' times, which import does not run), seconds.
UNMEASURED_TIME_LIMIT = 10.0
_SOURCE_SUFFIXES = (".c", ".cc", ".cpp", ".cxx", ".c++", ".C", ".h", ".hpp", ".py")
_STATEMENTS = ("problem_statement", "statement")


def _yaml(path: Path) -> dict[str, Any]:
    try:
        import yaml
    except ImportError:
        raise DatasetError(
            f"{path}: reading problem.yaml needs PyYAML: pip install 'suitebench[datasets]'"
        ) from None
    try:
        data = yaml.safe_load(read_text(path)) if path.is_file() else {}
    except yaml.YAMLError as exc:
        raise DatasetError(f"{path}: not YAML: {str(exc).splitlines()[0]}") from None
    return data if isinstance(data, dict) else {}


def _number(value: Any) -> float | None:
    try:
        return float(value) if value is not None else None
    except (TypeError, ValueError):
        return None


def _time_limit(root: Path, meta: dict[str, Any]) -> tuple[float | None, str]:
    """The package's time limit and where it came from (``None``: it gives none)."""
    tl_file = root / ".timelimit"
    if tl_file.is_file():
        return _number(read_text(tl_file).strip()), ".timelimit"
    ini = root / "domjudge-problem.ini"
    if ini.is_file():
        m = re.search(r"^\s*timelimit\s*=\s*['\"]?([0-9.]+)", read_text(ini), re.M)
        if m:
            return _number(m.group(1)), "domjudge-problem.ini timelimit"
    lim = meta.get("limits") or {}
    if isinstance(lim, dict) and lim.get("time_limit") is not None:
        return _number(lim["time_limit"]), "problem.yaml limits.time_limit"
    return None, "the package (.timelimit, limits.time_limit)"


def _time_rule(meta: dict[str, Any], lim: dict[str, Any]) -> dict[str, float]:
    """How the format computes a missing time limit (problemtools): the slowest accepted
    run times ``ac_to_time_limit`` (legacy ``time_multiplier``, default 5; 2023-07
    ``time_multipliers.ac_to_time_limit``, default 2), rounded up to ``time_resolution``
    (default 1 s), at least one step."""
    if str(meta.get("problem_format_version") or "legacy").startswith("legacy"):
        mult = _number(lim.get("time_multiplier")) or 5.0
    else:
        multipliers = lim.get("time_multipliers")
        raw = multipliers.get("ac_to_time_limit") if isinstance(multipliers, dict) else None
        mult = _number(raw) or 2.0
    return {"ac_to_time_limit": mult, "time_resolution": _number(lim.get("time_resolution")) or 1.0}


def _statement(root: Path) -> str:
    for d in _STATEMENTS:
        base = root / d
        if base.is_dir():
            for f in sorted(base.iterdir()):
                if f.suffix in (".tex", ".md") and f.is_file():
                    return read_text(f)
    return ""


def _title(meta: dict[str, Any], root: Path) -> str:
    name = meta.get("name")
    if isinstance(name, dict):
        name = name.get("en") or next(iter(name.values()), None)
    return str(name) if name else root.name


def _kind(meta: dict[str, Any]) -> tuple[bool, bool, bool]:
    """(custom output validator, interactive, scoring) from ``validation`` (legacy) or
    ``type`` (2023-07)."""
    validation = str(meta.get("validation") or "default").split()
    kind = meta.get("type") or "pass-fail"
    kinds = kind.split() if isinstance(kind, str) else [str(k) for k in kind]
    interactive = "interactive" in validation or "interactive" in kinds
    scoring = "score" in validation or "scoring" in kinds
    return validation[0] == "custom", interactive, scoring


def _validator_flags(root: Path, meta: dict[str, Any]) -> str:
    flags = meta.get("validator_flags") or ""
    testdata = root / "data" / "testdata.yaml"
    if testdata.is_file():
        td = _yaml(testdata)
        extra = td.get("output_validator_flags") or td.get("output_validator_args") or ""
        flags = f"{flags} {' '.join(extra) if isinstance(extra, list) else extra}"
    return str(flags).strip()


def _program_dirs(base: Path) -> list[tuple[str, dict[str, str]]]:
    """The programs of a validators folder: each sub-directory one program, and the files
    directly in it one program together (a validator with its header)."""
    if not base.is_dir():
        return []
    out = []
    loose = {f.name: read_text(f) for f in sorted(base.iterdir()) if f.is_file()}
    if loose:
        out.append((base.name, loose))
    for d in sorted(x for x in base.iterdir() if x.is_dir()):
        files = {f.relative_to(d).as_posix(): read_text(f) for f in walk_files(d)}
        if files:
            out.append((d.name, files))
    return out


def _validator(
    root: Path, folder: str, role: str, flags: str, dropped: list[Dropped]
) -> tuple[str | None, dict[str, str]]:
    """The package's validator of ``role`` as a wrapped build-script program: its directory
    (relative to the problem) and files, or (None, {}) with the reason dropped."""
    programs = _program_dirs(root / folder)
    if not programs:
        return None, {}
    name, sources = programs[0]
    for other, _ in programs[1:]:
        dropped.append(
            Dropped(f"{folder}/{other}", f"a second {role} validator: not used", "field")
        )
    kept = {k: v for k, v in sources.items() if Path(k).suffix in _SOURCE_SUFFIXES}
    wrapped = kattis_wrapper(kept, role, flags) if kept else None
    if wrapped is None:
        langs = ", ".join(sorted({Path(k).suffix or k for k in sources}))
        dropped.append(
            Dropped(f"{folder}/{name}", f"{role} validator in {langs}: not built here", "field")
        )
        return None, {}
    where = f"{role}_validator"
    return where, {f"{where}/{k}": v for k, v in wrapped.items()}


def _pools(
    root: Path, options: ImportOptions, dropped: list[Dropped]
) -> dict[str, tuple[Program, ...]]:
    pools: dict[str, tuple[Program, ...]] = {}
    base = root / "submissions"
    if not base.is_dir():
        return pools
    for d in sorted(x for x in base.iterdir() if x.is_dir()):
        files, langs = [], []
        for f in sorted(d.iterdir()):
            if f.is_dir():
                dropped.append(
                    Dropped(f.relative_to(root).as_posix(), "a program of several files")
                )
                continue
            files.append(f)
            langs.append(language_by_extension(f, read_text(f)[:200]))
        pools[pool_name(d.name)] = programs_from_files(files, root, langs, options, dropped)
    return pools


def draft(root: Path, options: ImportOptions) -> ProblemDraft | Skipped:
    """One package's draft, or why it is skipped."""
    name = root.name
    link = escape(root)
    if link is not None:
        return Skipped(name, root, 0, f"{link} links outside the package")
    meta = _yaml(root / "problem.yaml")
    custom, interactive, scoring = _kind(meta)
    out_dir = next(
        (d for d in ("output_validators", "output_validator") if (root / d).is_dir()),
        "output_validators",
    )
    # 2023-07 has no ``validation`` key: a custom output validator is one that is there
    custom = custom or ("validation" not in meta and bool(_program_dirs(root / out_dir)))
    if scoring:
        return Skipped(name, root, 0, "scoring problem: not pass-fail")
    dropped: list[Dropped] = []
    files: dict[str, str] = {}
    validator, vfiles = _validator(root, "input_validators", "input", "", dropped)
    files.update(vfiles)
    flags = _validator_flags(root, meta)
    checker, interactor = "icpc", None
    if interactive:
        found = _program_dirs(root / out_dir)
        if not found:
            return Skipped(name, root, 0, f"interactive, but no interactor in {out_dir}/")
        vname, sources = found[0]
        prefix = out_dir if vname == out_dir else f"{out_dir}/{vname}"
        files.update({f"{prefix}/{k}": v for k, v in sources.items()})
        main = next(
            (k for k in sorted(sources) if Path(k).suffix in (*_SOURCE_SUFFIXES[:6], ".py")),
            sorted(sources)[0],
        )
        interactor = f"{prefix}/{main}"
    elif custom:
        where, cfiles = _validator(root, out_dir, "output", flags, dropped)
        if where is None:
            return Skipped(name, root, 0, "custom output validator that cannot be built here")
        files.update(cfiles)
        checker = where
    elif flags:
        try:
            parse_icpc_flags(flags)
        except ValueError as exc:
            return Skipped(name, root, 0, f"validator_flags {flags!r}: {exc}")
        checker = f"icpc:{flags}"
    pools = _pools(root, options, dropped)
    arms = {
        "official": tests_from_dir(root, "data/secret", dropped),
        "samples": tests_from_dir(root, "data/sample", dropped),
    }
    if not pools.get("accepted"):
        return Skipped(
            name, root, 0, "no usable accepted submission for the references", tuple(dropped)
        )
    if not arms["official"] and not arms["samples"]:
        return Skipped(name, root, 0, "no test in data/secret or data/sample", tuple(dropped))
    tl, tl_source = _time_limit(root, meta)
    raw_limits = meta.get("limits")
    lim: dict[str, Any] = raw_limits if isinstance(raw_limits, dict) else {}
    time_limit, memory_limit = limits(
        tl,
        _number(lim.get("memory")),
        dropped,
        default_time=UNMEASURED_TIME_LIMIT,
        default_memory=DEFAULT_MEMORY_MB,
        sources=(tl_source, "problem.yaml limits.memory"),
    )
    notes = []
    time_rule = _time_rule(meta, lim) if tl is None else None
    if tl is None:
        notes.append(
            "the format derives a missing time limit from the accepted submissions' times "
            "(limits.time_multiplier): not measured at import"
        )
    if interactive:
        notes.append(f"interactive: interactor = {interactor}")
    return ProblemDraft(
        id=problem_id(name),
        title=_title(meta, root),
        statement=_statement(root),
        time_limit=time_limit,
        memory_limit=memory_limit,
        source_file=root,
        row=0,
        fields_used=tuple(sorted(k for k in meta if meta[k] not in (None, "", []))),
        checker=checker,
        validator=validator,
        files=files,
        pools=pools,
        arms=arms,
        dropped=tuple(dropped),
        metadata={
            "package": str(root),
            "problem_yaml": {k: v for k, v in meta.items() if isinstance(v, str | int | float)},
            "limits": lim,
            "validator_flags": flags,
            "time_rule": time_rule,
        },
        notes=tuple(notes),
        # an interactive problem's .ans is the interactor's, not an expected output
        answers_beside=interactor is None,
        interactor=interactor,
        # the package format's interactive validator: validator input answer feedback_dir
        interactor_convention="kattis" if interactor else None,
    )


def read(path: Path, options: ImportOptions) -> Iterator[ProblemDraft | Skipped | Dropped]:
    for root in package_dirs(path, "problem.yaml"):
        yield draft(root, options)
