"""The collector of a configure-once batch (in the sandbox): one collection, many programs.

A ``kind = "python"`` batch configures pytest once and, for the programs whose changes a
collection cannot depend on (the host names their files, :attr:`suitebench.suite.select.selection.
Selection.files`), forks a *collector*: a child that imports the first of them through a fixed
link (``<base>/program``), collects the suite once, and forks a child per program with the link
switched to that program's tree and its changes carried in -- changed function bodies patched
(:mod:`suitebench.suite.inside.batch.hotpatch`), an import-time mutant's modules run anew and merged
(:mod:`suitebench.suite.inside.batch.reimport`).  A program that cannot be is left to the batch's
parent, which imports it afresh.  :class:`Collector` is the part of the batch driver's hooks
(:class:`suitebench.suite.inside.batch.forkserver.BatchHooks`) that does this, with the per-child
test loop it shares with the collect-once batches of ``kind = "cli"``.
"""

from __future__ import annotations

import gc
import os
import sys
from pathlib import Path
from typing import Any

import pytest

from suitebench.suite.inside import plugin
from suitebench.suite.inside.batch.direct import DirectProtocol, plan
from suitebench.suite.inside.batch.forking import (
    decline,
    exit_in_child,
    fork_per_program,
    wait_child,
)
from suitebench.suite.inside.batch.hotpatch import LivePrograms, NotPatchable, apply
from suitebench.suite.inside.batch.reimport import Reimport
from suitebench.suite.inside.batch.warm import warm_caches, warm_items
from suitebench.suite.inside.probe import choosing
from suitebench.suite.inside.probe.fingerprint import forget_digests
from suitebench.suite.inside.probe.impact import choose
from suitebench.suite.inside.wire import BatchProgram, BatchSpec
from suitebench.suite.inside.workdir import Entry, WorkDir


class Collector:
    """The collector's hooks and the per-child test loop (a base of the batch's hooks)."""

    spec: BatchSpec
    out_dir: Path
    bare: dict[str, Entry]
    path0: str | None
    child: bool
    # The programs whose changes can be carried into one collection (set in the collector),
    # and their source root's fixed path, a link switched to each program's tree before its
    # child is forked.
    group: list[BatchProgram] | None
    link: str
    steps: list[tuple[Any, Any]]
    # The direct protocol, planned once before the children are forked (None: pytest's).
    direct: DirectProtocol | None = None

    def run_items(
        self,
        session: pytest.Session,
        program: BatchProgram,
        chosen: tuple[list[str] | None, str] | None = None,
    ) -> int:
        """In a child of a batch collected once: run the program's tests of the collected
        items (its ``--fast`` order or its selection; ``chosen``: the tests an import-time
        change reaches, and why) and write its event log."""
        out_dir = self.out_dir
        index = program["index"]
        plugin.open_events(str(out_dir / f"{index}.events"))
        plugin.emit_collect_errors()
        # This program's own log for the watchdog, so a hard hang is its own alone.
        plugin.BUDGET.fault_file = open(out_dir / f"{index}.log", "a")  # noqa: SIM115
        plugin.BUDGET.use_timeouts(program.get("timeouts"))
        items = list(session.items)
        if chosen is not None:
            plugin.emit_selected(*chosen)
            if chosen[0] is not None:
                items = choosing.select_items(items, chosen[0])
        order, select = program.get("order"), program.get("select")
        if order is not None:
            items = choosing.order_items(items, order)
            plugin.RUN.exitfirst = True
        if select is not None:
            items = choosing.select_items(items, select)
        session.items = items
        plugin.emit_collected(items)
        if self.direct is not None:
            self.direct.announce(items)
        for i, item in enumerate(items):
            nextitem = items[i + 1] if i + 1 < len(items) else None
            item.config.hook.pytest_runtest_protocol(item=item, nextitem=nextitem)
            if session.shouldfail or session.shouldstop:
                break
        plugin.emit_finished(0)
        return 0

    def plan_direct(self, session: pytest.Session) -> None:
        """The direct protocol for the collected tests
        (:func:`suitebench.suite.inside.batch.direct.plan`)."""
        self.direct = plan(session, self.spec, self.out_dir)

    def put_on_path(self, root: str) -> None:
        """The program's source root where PYTHONPATH puts it in a plain run: right after the
        script's directory on ``sys.path``, and in the environment of what the tests start."""
        os.environ["PYTHONPATH"] = root
        first = self.path0
        sys.path.insert(sys.path.index(first) + 1 if first in sys.path else 0, root)

    def fork_collector(self, group: list[BatchProgram]) -> bool:
        """Fork the collector: a child that imports the first program of ``group`` through
        the link, collects the suite once and forks a child per program of the group, each
        with its changed functions patched in (:mod:`suitebench.suite.inside.batch.hotpatch`).  True
        in the collector; in the parent, False once it has ended (the programs it did not run,
        those that could not be patched, are the parent's to run as usual)."""
        point(self.link, _root(group[0]))
        pid = os.fork()
        if pid == 0:
            self.child = True
            self.group = group
            self.put_on_path(self.link)
            return True
        wait_child(pid, float(self.spec["run_wall"]) * len(group) + 30.0)
        return False

    def run_patched_batch(self, session: pytest.Session) -> None:
        """The collector's run loop: one child per program of its group, each running its
        tests on the collected items with its changes carried in -- changed function bodies
        patched (:mod:`.hotpatch`), an import-time mutant's modules run anew and merged
        (:mod:`.reimport`); a program that cannot be is left to the batch's parent.
        ``patched.txt`` has a line per program: ``<index> patched: <n> functions``,
        ``<index> reimported: <n> globals`` or ``<index> fresh import: <why>``."""
        spec, out_dir, group = self.spec, self.out_dir, self.group or []
        session.config.option.tbstyle = "line"
        base = _patched(group[0])
        notes: list[str] = []
        try:
            live = LivePrograms(self.link, {f for p in group for f in _patched(p)})
        except Exception as exc:  # e.g. an object whose attributes raise: run them as usual
            notes.append(f"the collection cannot be read: {type(exc).__name__}: {exc}")
            group = []
        warm_caches()
        warm_items(session.items)
        self.plan_direct(session)
        gc.collect()
        reimport = None
        impacts = [spec["impacts"][str(p["impact"])] for p in group if p.get("impact") is not None]
        if impacts:
            reads = impacts[0].get("collection_reads", [])
            calls = impacts[0].get("collection_calls", [])
            reimport = Reimport(self.link, live, str(session.config.rootpath), reads, calls)
        gc.freeze()

        def before(program: BatchProgram) -> bool:
            if program.get("impact") is None:
                try:
                    files = sorted({*base, *_patched(program)})
                    self.steps = live.plan(_root(program), files)
                except NotPatchable as exc:
                    notes.append(f"{program['index']} fresh import: {exc}")
                    return False
                notes.append(f"{program['index']} patched: {len(self.steps)} functions")
            elif reimport is None or reimport.why_not:  # none can be carried: not forked
                why = "no import-time change can be" if reimport is None else reimport.why_not
                notes.append(f"{program['index']} fresh import: {why}")
                return False
            point(self.link, _root(program))
            return True

        workdir = WorkDir(spec)
        if self.bare:
            workdir.adopt_setup(self.bare)
        program = fork_per_program(spec, workdir, group, before)
        if program is None:
            with open(out_dir / "patched.txt", "a", encoding="utf-8") as fh:
                fh.write("".join(f"{n}\n" for n in notes))
            return
        chosen: tuple[list[str] | None, str] | None = None
        if program.get("impact") is not None and reimport is not None:
            chosen = self.carry_in(session, reimport, program, base)
        else:
            apply(self.steps)
        self.steps = []
        live.forget()
        forget_digests()
        exit_in_child(lambda: self.run_items(session, program, chosen))

    def carry_in(
        self, session: pytest.Session, reimport: Reimport, program: BatchProgram, base: list[str]
    ) -> tuple[list[str] | None, str]:
        """In the child of an import-time mutant: merge its modules into the collection, then
        choose the tests that read what changed, as its own collection would have
        (:func:`suitebench.suite.inside.probe.impact.choose`); declines the program when it
        cannot."""
        index = program["index"]
        try:
            found, carried = reimport.merge(_root(program), sorted({*base, *_patched(program)}))
        except NotPatchable as exc:
            decline(self.out_dir, index, str(exc))
            raise  # not reached: decline leaves the process
        with open(self.out_dir / "patched.txt", "a", encoding="utf-8") as fh:
            fh.write(f"{index} reimported: {len(carried)} globals\n")
        spec = self.spec["impacts"][str(program["impact"])]  # an import-time mutant's
        return choose(spec, found, "", [item.nodeid for item in session.items])


def patchable(program: BatchProgram) -> bool:
    """A program the collector may carry in: a Python source tree whose changes lie in
    function bodies that run in tests only, or run on import where the suite's collection
    cannot depend on them (the host says so by listing the files), with no fingerprint of its
    own to record at collection."""
    return (
        program.get("patched_files") is not None
        and bool(program.get("pythonpath"))
        and not program.get("fingerprint")
    )


def _root(program: BatchProgram) -> str:
    """A patchable program's source root (:func:`patchable`: it has one)."""
    return str(program["pythonpath"])


def _patched(program: BatchProgram) -> list[str]:
    """The files a patchable program changes (:func:`patchable`: it names them)."""
    return list(program["patched_files"] or ())


def point(link: str, target: str) -> None:
    """Make ``link`` a symbolic link to ``target``, replacing it atomically."""
    fresh = f"{link}.new"
    if os.path.lexists(fresh):
        os.unlink(fresh)
    os.symlink(target, fresh)
    os.replace(fresh, link)
