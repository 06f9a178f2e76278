"""suitebench's kill matrix against plain pytest on the patched project, cell by cell.

    python bench/plain_pytest_agreement.py [--project NAME==VERSION ...] [--sample 25]
        [--seed 0] [--workdir DIR] [--out agreement.json] [--recheck 2]

For each project (default: python-slugify==9.2.0, toolz==1.2.0, humanize==4.17.0), as it ships
on PyPI:

1. its sdist is downloaded (``pip download --no-deps --no-binary :all:``) and unpacked, and a
   virtual environment is made for it under ``--workdir`` with pytest and the project's runtime
   and test dependencies (``Requires-Dist`` of ``PKG-INFO``, with the ``test``/``tests``/
   ``testing`` extras) -- not the project itself: the package is imported from its source root,
   as suitebench imports the (mutated) package;
2. an instance is written around the unpacked tree (``kind = "python"``, ``source`` the
   directory holding the package, ``python`` the project's interpreter, ``pytest_config`` the
   file holding the project's pytest options, ``beside`` the README when the tests read it);
   a project whose tests live in several directories (``toolz/tests`` and
   ``toolz/sandbox/tests``) gets them merged into one ``tests/`` directory;
3. ``suitebench build mutants --include PACKAGE`` (leaving tests inside the package out) and a
   seeded sample of ``--sample`` mutants (all when fewer), scored with a fresh store by
   ``suitebench score --all-tests --mutant ID ...``: the full matrix for the sample;
4. the plain side: the unpatched tree, then for each sampled mutant a fresh copy with its patch
   applied (``patch -p1 --fuzz=0``), run with ``PROJECT_VENV/bin/python -m pytest -p
   no:cacheprovider -q --junitxml`` from the project root, under the project's own
   configuration and the test directories it ships, each run bounded by a timeout (a run that
   hits it counts every test as ``timeout``); per-test outcomes are read from the JUnit XML
   and named as suitebench names tests (``tests/<file relative to the tests dir>::<Class>::
   <name[params]>``);
5. the two are compared, cell by cell, on the tests valid on both sides (suitebench: passed its
   3 reference runs; plain: passed the unpatched run): failed, error and timeout are a kill,
   passed and skipped are not.  Each disagreeing mutant is run ``--recheck`` more times with
   plain pytest, to tell a test that is flaky there too from a difference in the harness.

Prints one row per project (mutants sampled, valid tests on each side and on both, cells
compared and agreeing, disagreements), then every disagreeing cell with both outcomes and
messages, and the tests valid on one side only; writes all of it to ``--out`` as JSON.
"""

from __future__ import annotations

import argparse
import configparser
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tarfile
import time
import tomllib
import xml.etree.ElementTree as ET
from dataclasses import asdict, dataclass, field
from email.parser import Parser
from pathlib import Path
from typing import Any

SUITEBENCH = Path(sys.executable).parent / "suitebench"
DEFAULT_PROJECTS = ["python-slugify==9.2.0", "toolz==1.2.0", "humanize==4.17.0"]
TEST_EXTRAS = {"test", "tests", "testing"}
KILLS = {"failed", "error", "timeout"}


def run(argv: list[str], cwd: Path, *, env: dict[str, str] | None = None) -> str:
    proc = subprocess.run(argv, cwd=cwd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        said = (proc.stdout[-2000:] + "\n" + proc.stderr[-2000:]).strip()  # mutmut: on stdout
        raise SystemExit(f"{' '.join(argv[:5])} failed ({proc.returncode}):\n{said}")
    return proc.stdout


def fetch_sdist(project: str, into: Path) -> Path:
    """The sdist of ``project`` (name==version) from PyPI, unpacked; its root directory."""
    unpacked = into / "unpacked"
    if not unpacked.is_dir():
        into.mkdir(parents=True, exist_ok=True)
        run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--no-binary", ":all:",
             "-d", str(into), project], into)  # fmt: skip
        archive = next(p for p in into.iterdir() if p.name.endswith((".tar.gz", ".zip")))
        with tarfile.open(archive) as tar:
            tar.extractall(unpacked, filter="data")
    return next(unpacked.iterdir())


@dataclass
class Layout:
    """Where a project keeps what the instance needs, relative to its sdist root."""

    package: str
    source: str  # the directory holding the package: "" (the root) or "src"
    tests: list[str]  # the test directories it ships
    pytest_config: str | None
    beside: list[str]
    requirements: list[str]


def has_pytest_options(path: Path) -> bool:
    """Whether ``path`` holds pytest options, as pytest looks for them."""
    if not path.is_file():
        return False
    if path.name in ("pytest.ini", ".pytest.ini"):
        return True
    if path.name == "pyproject.toml":  # [tool.pytest.ini_options], or pytest 9's [tool.pytest]
        return bool(tomllib.loads(path.read_text()).get("tool", {}).get("pytest"))
    parser = configparser.ConfigParser(interpolation=None)
    parser.read(path)
    return parser.has_section("pytest" if path.name == "tox.ini" else "tool:pytest")


def requirements(root: Path) -> list[str]:
    """Runtime and test requirements from PKG-INFO (markers other than the extras kept)."""
    meta = Parser().parsestr((root / "PKG-INFO").read_text())
    wanted = []
    for req in meta.get_all("Requires-Dist") or []:
        spec, _, marker = req.partition(";")
        extra = re.search(r"extra\s*==\s*['\"]([^'\"]+)['\"]", marker)
        if extra is None or extra.group(1) in TEST_EXTRAS:
            rest = re.sub(r"(and\s+)?extra\s*==\s*['\"][^'\"]+['\"](\s+and)?", "", marker).strip()
            wanted.append(f"{spec.strip()}; {rest}" if rest else spec.strip())
    return wanted


def detect_layout(root: Path, name: str) -> Layout:
    base = re.sub(r"^python[-_]", "", name).replace("-", "_").lower()
    source = "src" if (root / "src" / base).is_dir() else ""
    package_dir = root / source / base
    if not (package_dir / "__init__.py").is_file():
        raise SystemExit(f"{name}: no package {base}/ in {root}")
    tests = [d for d in ("tests", "test") if (root / d).is_dir()]
    tests += sorted(
        str(p.parent.relative_to(root))
        for p in package_dir.rglob("tests/__init__.py")
        if not any(part.startswith(".") for part in p.parts)
    )
    if not tests:
        raise SystemExit(f"{name}: no tests directory in its sdist")
    config = next(
        (f for f in ("pytest.ini", ".pytest.ini", "pyproject.toml", "tox.ini", "setup.cfg")
         if has_pytest_options(root / f)),
        None,
    )  # fmt: skip
    texts = "\n".join(
        p.read_text(errors="replace") for t in tests for p in (root / t).rglob("*.py")
    )
    beside = sorted(p.name for p in root.glob("README*") if p.stem in texts)
    # a top-level folder the tests name (humanize's tests run ``scripts/update-translations.sh``)
    beside += sorted(
        d.name
        for d in root.iterdir()
        if d.is_dir() and d.name not in {*tests, source or base.split("/")[0], "docs"}
        and not d.name.startswith(".") and (f'"{d.name}"' in texts or f"'{d.name}'" in texts)
    )  # fmt: skip
    return Layout(base, source, tests, config, beside, requirements(root))


def project_venv(workdir: Path, layout: Layout) -> Path:
    venv = workdir / "venv"
    python = venv / "bin" / "python"
    if not python.exists():
        run([sys.executable, "-m", "venv", str(venv)], workdir)
        run([str(python), "-m", "pip", "install", "-q", "pytest>=8", *layout.requirements],
            workdir)  # fmt: skip
    return python


def shipped_dir_of(path: str, layout: Layout) -> str | None:
    """The shipped test directory holding ``path`` (relative to the root), if any."""
    return next((t for t in layout.tests if path.startswith(t.rstrip("/") + "/")), None)


def write_instance(root: Path, layout: Layout, python: Path, inst: Path) -> None:
    """An instance around a copy of the sdist root at ``inst/project``."""
    shutil.rmtree(inst, ignore_errors=True)
    shutil.copytree(root, inst / "project", symlinks=True)
    if len(layout.tests) == 1:
        tests = f"project/{layout.tests[0]}"
    else:  # one tests/ directory, as suitebench collects one
        tests = "tests"
        for shipped in layout.tests:
            for path in sorted((root / shipped).rglob("*")):
                if path.is_dir() or "__pycache__" in path.parts:
                    continue
                dest = inst / tests / path.relative_to(root / shipped)
                if dest.exists() and dest.read_bytes() != path.read_bytes():
                    raise SystemExit(f"{path.name}: two different files of that name in the tests")
                dest.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(path, dest)
    source = f"project/{layout.source}".rstrip("/") + "/"
    (inst / "spec.md").write_text(
        f"# {layout.package}\n\nThe behaviour of `{layout.package}` as its own test suite and "
        "documentation describe it.\n"
    )
    lines = [
        f'name = "{layout.package}"',
        'kind = "python"',
        'spec = "spec.md"',
        f'source = "{source}"',
        f'package = "{layout.package}"',
        f'tests = "{tests}"',
        f'python = "{python}"',
    ]
    if layout.pytest_config:
        lines.append(f'pytest_config = "project/{layout.pytest_config}"')
    if layout.beside:
        lines.append("beside = [" + ", ".join(f'"project/{b}"' for b in layout.beside) + "]")
    (inst / "instance.toml").write_text("\n".join(lines) + "\n")


# -- the plain side -------------------------------------------------------------------------


@dataclass
class PlainRun:
    outcomes: dict[str, str]
    messages: dict[str, str]
    seconds: float
    note: str = ""  # why the run gave no per-test outcomes (timeout, no XML)


def suitebench_id(nodeid: str, layout: Layout) -> str | None:
    """A plain pytest node id (relative to the project root) as suitebench names the test:
    ``tests/`` and the path inside its shipped test directory."""
    shipped = shipped_dir_of(nodeid, layout)
    return None if shipped is None else "tests/" + nodeid[len(shipped) + 1 :]


def junit_outcomes(
    xml: Path, layout: Layout, passed: set[str]
) -> tuple[dict[str, str], dict[str, str]]:
    """Per-test outcomes from pytest's JUnit XML (xunit1), named as suitebench names tests.

    A test reported more than once (a failing teardown, failing subtests) takes its worst
    outcome.  The XML lists a test whose subtests skipped as skipped even when the test
    passed: ``passed`` (the ``PASSED`` lines of pytest's ``-rA`` summary) says which did.  A
    file that did not collect is reported under the file's name."""
    rank = {"passed": 0, "skipped": 1, "failed": 2, "error": 3}
    outcomes: dict[str, str] = {}
    messages: dict[str, str] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        file = case.get("file") or ""
        classname, name = case.get("classname") or "", case.get("name") or ""
        rel = suitebench_id(file, layout)
        if rel is None:
            continue
        module = file.removesuffix(".py").replace("/", ".")
        prefix = module + "."
        classes = classname[len(prefix) :].split(".") if classname.startswith(prefix) else []
        # a file that did not collect is reported under its module's dotted name
        test_id = rel if classname == "" and name == module else "::".join([rel, *classes, name])
        outcome, message = "passed", ""
        for child in case:
            kind = {"failure": "failed", "error": "error", "skipped": "skipped"}.get(child.tag)
            if kind and rank[kind] > rank[outcome]:
                outcome = kind
                message = next(iter((child.get("message") or "").splitlines()), "")
        if outcome == "skipped" and test_id in passed:
            outcome = "passed"
        if rank[outcome] >= rank.get(outcomes.get(test_id, "passed"), 0):
            outcomes[test_id] = outcome
            messages[test_id] = message
    return outcomes, messages


def summary_passed(output: str, layout: Layout) -> set[str]:
    """The tests pytest's ``-rA`` short summary lists as ``PASSED``, as suitebench names them."""
    plain = re.sub(r"\x1b\[[0-9;]*m", "", output)
    found = (suitebench_id(m, layout) for m in re.findall(r"^PASSED (.+)$", plain, re.M))
    return {f for f in found if f}


def plain_run(tree: Path, layout: Layout, python: Path, xml: Path, timeout: float) -> PlainRun:
    argv = [str(python), "-m", "pytest", "-p", "no:cacheprovider", "-q", f"--rootdir={tree}",
            "-rA", "-o", "junit_family=xunit1", f"--junitxml={xml}", *layout.tests]  # fmt: skip
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
    env["PYTHONPATH"] = str(tree / layout.source)
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    xml.unlink(missing_ok=True)
    started = time.perf_counter()
    try:
        proc = subprocess.run(
            argv, cwd=tree, env=env, capture_output=True, text=True, timeout=timeout
        )
    except subprocess.TimeoutExpired:
        return PlainRun({}, {}, time.perf_counter() - started, note="timeout")
    seconds = time.perf_counter() - started
    if not xml.is_file():
        return PlainRun({}, {}, seconds, note="no JUnit XML")
    outcomes, messages = junit_outcomes(xml, layout, summary_passed(proc.stdout, layout))
    return PlainRun(outcomes, messages, seconds)


def patched_tree(root: Path, layout: Layout, patch: Path | None, into: Path) -> str:
    """A fresh copy of the project with ``patch`` applied; '' or why it did not apply."""
    shutil.rmtree(into, ignore_errors=True)
    shutil.copytree(root, into, symlinks=True)
    if patch is None:
        return ""
    proc = subprocess.run(
        ["patch", "-p1", "--fuzz=0", "--quiet", "-i", str(patch)],
        cwd=into / layout.source,
        capture_output=True,
        text=True,
    )
    return "" if proc.returncode == 0 else (proc.stdout + proc.stderr).strip()


def plain_outcome(runs: PlainRun, test: str) -> tuple[str, str]:
    """One test's outcome in a plain run; a test the run did not report takes its file's
    collection error, or the run's timeout, else ``not_run``."""
    if test in runs.outcomes:
        return runs.outcomes[test], runs.messages.get(test, "")
    if runs.note == "timeout":
        return "timeout", "the whole plain run hit its timeout"
    file = test.split("::")[0]
    if file in runs.outcomes:
        return runs.outcomes[file], runs.messages.get(file, "")
    return "not_run", runs.note


# -- one project ----------------------------------------------------------------------------


@dataclass
class Disagreement:
    mutant: str
    test: str
    suitebench: str
    plain: str
    suitebench_message: str
    plain_message: str
    plain_rechecks: list[str] = field(default_factory=list)


@dataclass
class Row:
    project: str
    mutants_sampled: int
    mutants_built: int
    build_errors: list[str]
    valid_suitebench: int
    valid_plain: int
    valid_both: int
    cells_compared: int
    cells_agreeing: int
    disagreements: list[Disagreement]
    valid_only_suitebench: dict[str, str]
    valid_only_plain: dict[str, str]
    seconds: dict[str, float]
    # per mutant: suitebench's status and kills among the tests compared, plain pytest's
    # kills among them, and why a plain run gave no per-test outcomes
    mutants: dict[str, dict[str, Any]] = field(default_factory=dict)
    pytest_config: Any = None


def suitebench_reference(info: dict[str, Any] | None) -> str:
    """A test's reference outcomes in suitebench and its message, or ``absent``."""
    if info is None:
        return "absent"
    return f"{'/'.join(info['reference'])} {info.get('message', '')}".strip()


def agreement(project: str, args: argparse.Namespace) -> Row:
    name = project.split("==")[0]
    workdir = (args.workdir / project.replace("==", "-")).resolve()
    seconds: dict[str, float] = {}
    clock = time.perf_counter()
    root = fetch_sdist(project, workdir / "sdist")
    layout = detect_layout(root, name)
    python = project_venv(workdir, layout)
    seconds["setup"] = time.perf_counter() - clock
    print(f"{project}: package {layout.package} in {layout.source or '.'}/, tests "
          f"{', '.join(layout.tests)}, config {layout.pytest_config}, beside {layout.beside}, "
          f"requirements {layout.requirements}", flush=True)  # fmt: skip

    inst = workdir / "instance"
    write_instance(root, layout, python, inst)
    clock = time.perf_counter()
    excludes = [f"--exclude={t}" for t in layout.tests if t.startswith(layout.package + "/")]
    run([str(SUITEBENCH), "build", "mutants", str(inst),
         f"--include={layout.package}", *excludes], workdir)  # fmt: skip
    seconds["build_mutants"] = time.perf_counter() - clock
    listed = tomllib.loads((inst / "instance.toml").read_text()).get("mutants", [])
    patches = {m["id"]: inst / m["patch"] for m in listed}
    ids = sorted(patches)
    sample = sorted(random.Random(args.seed).sample(ids, min(args.sample, len(ids))))
    print(f"  {len(ids)} mutants, {len(sample)} sampled (seed {args.seed})", flush=True)

    clock = time.perf_counter()
    store, out = workdir / "store.sqlite", workdir / "score"
    store.unlink(missing_ok=True)
    shutil.rmtree(out, ignore_errors=True)
    proc = subprocess.run(
        [str(SUITEBENCH), "--store", str(store), "score", str(inst), "--all-tests",
         "--keep-going", "--out", str(out), *[f"--mutant={m}" for m in sample]],
        cwd=workdir, capture_output=True, text=True,
    )  # fmt: skip
    seconds["suitebench_score"] = time.perf_counter() - clock
    (workdir / "score.log").write_text(proc.stdout + proc.stderr)
    if not (out / "results.json").is_file():
        raise SystemExit(f"{project}: score wrote no results ({proc.returncode}):\n{proc.stderr}")
    result = json.loads((out / "results.json").read_text())
    sb_tests = {t["id"]: t for t in result["tests"]}
    sb_valid = {t for t, info in sb_tests.items() if info["valid"]}
    sb_mutants = {m["id"]: m for m in result["mutants"]}

    clock = time.perf_counter()
    plain_dir = workdir / "plain"
    plain_dir.mkdir(exist_ok=True)
    patched_tree(root, layout, None, plain_dir / "tree")
    reference = plain_run(
        plain_dir / "tree", layout, python, plain_dir / "reference.xml", args.plain_timeout
    )
    if reference.note:
        raise SystemExit(f"{project}: the unpatched plain run gave {reference.note}")
    plain_valid = {t for t, o in reference.outcomes.items() if o == "passed"}
    timeout = max(args.plain_timeout_floor, args.plain_timeout_factor * reference.seconds)
    plain: dict[str, PlainRun] = {}
    build_errors = [m for m in sample if sb_mutants[m]["status"] in ("build_error", "crashed")]
    for mutant in sample:
        why = patched_tree(root, layout, patches[mutant], plain_dir / "tree")
        if why:
            plain[mutant] = PlainRun({}, {}, 0.0, note=f"patch failed: {why}")
            continue
        plain[mutant] = plain_run(
            plain_dir / "tree", layout, python, plain_dir / f"{mutant}.xml", timeout
        )
    seconds["plain_pytest"] = time.perf_counter() - clock

    both = sorted(sb_valid & plain_valid)
    disagreements: list[Disagreement] = []
    compared = agreeing = 0
    per_mutant: dict[str, dict[str, Any]] = {}
    for mutant in sample:
        row = sb_mutants[mutant]
        summary = per_mutant[mutant] = {
            "suitebench": row["status"],
            "suitebench_kills": 0,
            "plain_kills": 0,
            "plain_note": plain[mutant].note,
            "plain_seconds": round(plain[mutant].seconds, 1),
        }
        if mutant in build_errors:
            continue
        for test in both:
            sb_outcome = row["outcomes"].get(test, "missing")
            pl_outcome, pl_message = plain_outcome(plain[mutant], test)
            compared += 1
            summary["suitebench_kills"] += sb_outcome in KILLS
            summary["plain_kills"] += pl_outcome in KILLS
            if (sb_outcome in KILLS) == (pl_outcome in KILLS):
                agreeing += 1
                continue
            disagreements.append(
                Disagreement(mutant, test, sb_outcome, pl_outcome,
                             row.get("kill_messages", {}).get(test, ""), pl_message)
            )  # fmt: skip
    clock = time.perf_counter()
    for mutant in sorted({d.mutant for d in disagreements}):
        for i in range(args.recheck):
            patched_tree(root, layout, patches[mutant], plain_dir / "tree")
            again = plain_run(plain_dir / "tree", layout, python,
                              plain_dir / f"{mutant}-recheck{i}.xml", timeout)  # fmt: skip
            for d in disagreements:
                if d.mutant == mutant:
                    d.plain_rechecks.append(plain_outcome(again, d.test)[0])
    seconds["rechecks"] = time.perf_counter() - clock
    return Row(
        project=project,
        mutants_sampled=len(sample),
        mutants_built=len(ids),
        build_errors=build_errors,
        valid_suitebench=len(sb_valid),
        valid_plain=len(plain_valid),
        valid_both=len(both),
        cells_compared=compared,
        cells_agreeing=agreeing,
        disagreements=disagreements,
        valid_only_suitebench={
            t: reference.outcomes.get(t, "absent") for t in sorted(sb_valid - plain_valid)
        },
        valid_only_plain={
            t: suitebench_reference(sb_tests.get(t)) for t in sorted(plain_valid - sb_valid)
        },
        seconds={k: round(v, 1) for k, v in seconds.items()},
        mutants=per_mutant,
        pytest_config=result.get("pytest_config"),
    )


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--project", action="append", help="NAME==VERSION (repeatable)")
    ap.add_argument("--sample", type=int, default=25, help="mutants per project (seeded)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--workdir", type=Path, default=Path("/tmp/suitebench-bench-agreement"))
    ap.add_argument("--out", type=Path, default=Path("agreement.json"))
    ap.add_argument("--recheck", type=int, default=2, help="plain reruns of disagreeing mutants")
    ap.add_argument("--plain-timeout", type=float, default=600.0, help="unpatched run, seconds")
    ap.add_argument("--plain-timeout-factor", type=float, default=5.0,
                    help="a mutant's plain run: this x the unpatched run's time ...")  # fmt: skip
    ap.add_argument("--plain-timeout-floor", type=float, default=60.0, help="... at least this")
    args = ap.parse_args()
    args.workdir.mkdir(parents=True, exist_ok=True)
    rows = []
    for project in args.project or DEFAULT_PROJECTS:
        rows.append(agreement(project, args))
        args.out.write_text(json.dumps([asdict(r) for r in rows], indent=2) + "\n")
    print(f"\n{'project':24} {'mutants':>7} {'valid sb/plain/both':>20} {'cells':>6} "
          f"{'agree':>6} {'disagree':>8}")  # fmt: skip
    for r in rows:
        valid = f"{r.valid_suitebench}/{r.valid_plain}/{r.valid_both}"
        print(f"{r.project:24} {r.mutants_sampled:>7} {valid:>20} {r.cells_compared:>6} "
              f"{r.cells_agreeing:>6} {len(r.disagreements):>8}")  # fmt: skip
    for r in rows:
        print(f"\n{r.project}: phases {r.seconds}; build errors {r.build_errors or 'none'}")
        for m, info in r.mutants.items():
            print(f"  {m}: suitebench {info['suitebench']}, {info['suitebench_kills']} killing "
                  f"cells; plain {info['plain_kills']} {info['plain_note']}")  # fmt: skip
        groups: dict[tuple[str, str, str, str], list[Disagreement]] = {}
        for d in r.disagreements:
            groups.setdefault((d.mutant, d.suitebench, d.plain, d.plain_message), []).append(d)
        for (mutant, sb, pl, message), cells in groups.items():
            d = cells[0]
            more = f" and {len(cells) - 1} more cells like it" if len(cells) > 1 else ""
            print(f"  {mutant} {d.test}{more}: suitebench {sb} ({d.suitebench_message}) vs "
                  f"plain {pl} ({message}); plain rechecks {d.plain_rechecks}")  # fmt: skip
        for t, why in r.valid_only_suitebench.items():
            print(f"  valid in suitebench only: {t} (plain: {why})")
        for t, why in r.valid_only_plain.items():
            print(f"  valid in plain pytest only: {t} (suitebench: {why})")
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    from figures import run_recorded

    sys.exit(run_recorded("plain_pytest_agreement", main))
