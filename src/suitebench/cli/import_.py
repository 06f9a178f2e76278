"""``suitebench import``: a downloaded dataset (files on disk) -> problem directories.

The problems written are what ``suitebench audit`` and ``suitebench generate`` take as they
are; each has a ``provenance.json``, and DIR/import-summary.json says what was written,
skipped and dropped, and why (``suitebench.datasets``).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer
from rich.markup import escape

from suitebench.cli._console import HumanConsole, error_console
from suitebench.cli.main import OPTIONS
from suitebench.datasets.importer import FORMATS, PACKAGE_FORMATS, SUMMARY_FILE, run_import
from suitebench.datasets.languages import ALL_LANGUAGES, Lang
from suitebench.datasets.options import ImportOptions
from suitebench.datasets.source import DatasetError

_out = HumanConsole(soft_wrap=True)  # the summary: stdout (stderr under --json)
_err = error_console(soft_wrap=True)


def _languages(text: str) -> frozenset[Lang]:
    names = [t.strip() for t in text.split(",") if t.strip()]
    try:
        return frozenset(Lang(n) for n in names)
    except ValueError:
        _err.print(
            f"[red]error:[/red] --languages {escape(text)!r}: a comma-separated list of "
            f"{', '.join(ALL_LANGUAGES)}"
        )
        raise typer.Exit(2) from None


def import_(
    fmt: str = typer.Argument(..., metavar="FORMAT", help=f"One of {', '.join(FORMATS)}."),
    paths: list[Path] = typer.Argument(
        ...,
        metavar="PATH...",
        help="The dataset: a parquet or JSON lines file, or a directory of shards; kattis and "
        "polygon: problem packages (directories), or directories of them, one or more.",
    ),
    out: Path = typer.Option(..., "--out", help="Directory the problems are written into."),
    submissions: Path | None = typer.Option(
        None, "--submissions", help="codeforces: the submissions table (file or directory)."
    ),
    references: int = typer.Option(
        3, "--references", min=1, help="Correct solutions picked (seeded) as the references."
    ),
    seed: int = typer.Option(0, "--seed", help="Seed of the reference pick."),
    languages: str = typer.Option(
        ",".join(ALL_LANGUAGES),
        "--languages",
        help="Languages of the programs kept (the rest are dropped and counted).",
    ),
    limit: int | None = typer.Option(None, "--limit", min=1, help="Stop after N problems."),
    max_pool: int | None = typer.Option(
        None,
        "--max-pool",
        min=1,
        help="Keep at most N programs per pool (a seeded pick; the rest dropped and counted).",
    ),
    testlib: Path | None = typer.Option(
        None,
        "--testlib",
        help="A testlib.h to place beside testlib checkers and validators; without it, "
        "problems whose checker needs testlib are skipped.",
    ),
    force: bool = typer.Option(
        False, "--force", help="Write into a DIR that is not empty (ids already there are kept)."
    ),
    measure_time_limits: bool = typer.Option(
        False,
        "--measure-time-limits",
        help="kattis: where a package gives no time limit, run its accepted submissions on its "
        "tests (sandboxed) and set the limit as the format computes it (slowest x "
        "ac_to_time_limit, rounded up); without it 10 s is taken, said so.",
    ),
) -> None:
    """Turn a dataset on disk into problem directories with provenance, and a summary."""
    if fmt not in FORMATS:
        _err.print(f"[red]error:[/red] unknown format {fmt!r}: one of {', '.join(FORMATS)}")
        raise typer.Exit(2)
    if fmt == "codeforces" and submissions is None:
        _err.print("[yellow]warning:[/yellow] codeforces without --submissions: no pools")
    if out.exists() and any(out.iterdir()) and not force:
        _err.print(f"[red]error:[/red] {out} is not empty (--force writes into it)")
        raise typer.Exit(2)
    if testlib is not None and not testlib.is_file():
        _err.print(f"[red]error:[/red] --testlib {testlib}: no such file")
        raise typer.Exit(2)
    options = ImportOptions(
        references=references,
        seed=seed,
        languages=_languages(languages),
        limit=limit,
        max_pool=max_pool,
        testlib=testlib,
        submissions=submissions,
    )
    if len(paths) > 1 and fmt not in PACKAGE_FORMATS:
        _err.print(
            f"[red]error:[/red] {fmt} takes one PATH (several: {', '.join(PACKAGE_FORMATS)})"
        )
        raise typer.Exit(2)
    try:
        summary = run_import(fmt, paths if fmt in PACKAGE_FORMATS else paths[0], out, options)
    except DatasetError as exc:
        _err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    data = summary.to_dict()
    if measure_time_limits:
        _measure(out, data)
    if OPTIONS.json:
        print(json.dumps(data, indent=2, ensure_ascii=False))
    _print_summary(fmt, out, data)


def _measure(out: Path, data: dict[str, Any]) -> None:
    """``--measure-time-limits``: the accepted pools run sandboxed, through the store."""
    from suitebench.audit.runs import AuditEngine
    from suitebench.cli._options import sandbox_backend
    from suitebench.cli._time_limits import measure_time_limits
    from suitebench.run.executor import make_executor
    from suitebench.run.store import Store, StoreError

    backend = sandbox_backend(None, False)
    try:
        store = Store(OPTIONS.store)
    except StoreError as exc:
        _err.print(f"[red]error:[/red] {escape(str(exc))}")
        raise typer.Exit(2) from None
    executor = make_executor(jobs=OPTIONS.jobs, dask=OPTIONS.dask)
    try:
        engine = AuditEngine(store, executor, OPTIONS.store.parent / "builds", backend=backend)
        for line in measure_time_limits(out, data, engine):
            _err.print(f"[yellow]warning:[/yellow] {escape(line)}", highlight=False)
    finally:
        executor.close()
        store.close()


def _print_summary(fmt: str, out: Path, data: dict[str, Any]) -> None:
    """The import's summary in words: what was written and skipped, what was dropped and
    why, and the audit to run next."""
    p = _out.print
    p(
        f"import {fmt}: {data['problems_written']} problem(s) written, "
        f"{data['problems_skipped']} skipped",
        highlight=False,
    )
    for w in data["written"]:
        pools = ", ".join(f"{k} {v}" for k, v in w["pools"].items()) or "no pools"
        tests = ", ".join(f"{k} {v}" for k, v in w["tests"].items() if v)
        p(
            f"  {escape(w['id'])}: {w['references']} reference(s); {pools}; tests {tests}; "
            f"checker {escape(w['checker'])}",
            highlight=False,
        )
        for line in (*w.get("defaults", ()), *w.get("notes", ())):
            p(f"    {escape(line)}", highlight=False)
        if w.get("loads"):
            p(f"    [yellow]does not load here:[/yellow] {escape(w['loads'])}", highlight=False)
    for s in data["skipped"]:
        where = (
            s["source_file"]
            if fmt in PACKAGE_FORMATS
            else f"{Path(s['source_file']).name} row {s['row']}"
        )
        p(
            f"  skipped {escape(s['name'])} ({escape(where)}): {escape(s['reason'])}",
            highlight=False,
        )
    for title, key in (
        ("programs dropped", "programs_dropped"),
        ("tests dropped", "tests_dropped"),
        ("fields defaulted or dropped", "fields_dropped"),
    ):
        if data[key]:
            p(f"{title}:", highlight=False)
            for reason, n in data[key].items():
                p(f"  {n:>5}  {escape(reason)}", highlight=False)
    p(f"summary: {out / SUMMARY_FILE}", highlight=False)
    for line in next_commands(out, data["written"]):
        p(f"next: {line}", highlight=False)


def _count(v: Any) -> int:
    return v if isinstance(v, int) else len(v or ())


# The pool an audit suggested after an import judges: the first of these a problem has (the
# Codeforces tables' rejected submissions, a Kattis package's wrong answers, else the accepted).
_POOLS_TO_AUDIT = ("rejected", "wrong_answer", "wrong-answer", "accepted")


def next_commands(out: Path, written: list[dict[str, Any]]) -> list[str]:
    """Audit commands that run on what was written: ``--pool`` names a pool every problem of
    the command has (problems are grouped by it, never one pool for all when some lack it),
    and ``--arm generated=arms/generated`` only where every problem's folder has inputs."""
    written = [w for w in written if not w.get("loads")]  # a problem that does not load: none
    groups: dict[str, list[dict[str, Any]]] = {}
    for w in written:
        pools = w.get("pools") or {}
        pool = next((p for p in _POOLS_TO_AUDIT if p in pools), "")
        if pool:
            groups.setdefault(pool, []).append(w)
    lines = []
    for pool, ws in groups.items():
        every = len(ws) == len(written)
        where = (
            f"{out}/*/problem.toml"
            if every
            else " ".join(str(out / (w.get("dir") or w["id"])) for w in ws)
        )
        arm = all(_count((w.get("tests") or {}).get("generated")) for w in ws)
        lines.append(
            f"suitebench audit {where} --pool {pool} --out audit-out"
            + (" --arm generated=arms/generated" if arm else "")
        )
    return lines


def register(app: typer.Typer) -> None:
    app.command("import")(import_)
