"""Interactive problems in the certification chain: every judged program runs with the
problem's interactor (:mod:`suitebench.run.interact`).

A judged program of an interactive problem is built as usual, then paired with the built
interactor (:func:`with_interactor`): the pair is a :class:`~suitebench.run.toolchain.Built`
whose ``program_id`` names both, so every stage that runs judged programs -- the
consensus_oracle over the references, the judge, the determinism re-judges, the consensus pool
and brute force -- runs them against the interactor without knowing it, and the store keys
their runs apart from runs without it.

What such a run gives the chain: the submission's own outcome (its time, memory, exit), the
interactor's verdict (``RunResult.interactor_verdict``: ``ok``, ``wa``, ``pe``, ``fail``) and,
as the run's output, the interactor's ``output`` file, which the problem's checker compares
with the gold -- the output the references' interactor files agree on (testlib's convention;
under Kattis' convention the file is empty and the interactor's word is the whole verdict).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from suitebench.run.interact import Convention, Interaction, interact
from suitebench.run.outcome import Backend, Limits
from suitebench.run.toolchain import Built

__all__ = ["WithInteractor", "interaction_record", "run_interactions", "with_interactor"]


@dataclass(frozen=True)
class WithInteractor(Built):
    """A judged program paired with the interactor it runs against."""

    interactor: Built | None = None
    convention: str = str(Convention.TESTLIB)


def with_interactor(built: Built, interactor: Built, convention: str) -> Built:
    """``built`` run against ``interactor`` from now on (a program that did not build stays
    as it is: its build error is its verdict)."""
    if not built.ok:
        return built
    fields = {f.name: getattr(built, f.name) for f in dataclasses.fields(Built)}
    # /2: the interactor runs with SIGPIPE ignored and its record says whether it ended first
    fields["program_id"] = f"{built.program_id}+{convention}/2:{interactor.program_id}"
    return WithInteractor(**fields, interactor=interactor, convention=convention)


def interaction_payload(built: WithInteractor) -> dict[str, Any]:
    """The plain-data part of a chunk's payload that names the interactor."""
    assert built.interactor is not None
    return {
        "interactor_argv": list(built.interactor.argv),
        "interactor_ro_binds": sorted(set(built.interactor.ro_binds)),
        "convention": built.convention,
    }


def run_interactions(
    payload: dict[str, Any], argv: list[str], limits: Limits, scratch: Path
) -> Iterator[Interaction]:
    """One interactive run per stdin of the chunk, each in fresh sandboxes (the run's work
    dirs and pipes under ``scratch``)."""
    backend = Backend(payload["backend"]) if payload.get("backend") else None
    convention = Convention(payload["convention"])
    for n, data in enumerate(payload["stdins"]):
        work = scratch / f"ia{n}"
        work.mkdir()
        os.chmod(work, 0o777)
        yield interact(
            argv,
            payload["interactor_argv"],
            data,
            convention=convention,
            limits=limits,
            backend=backend,
            submission_binds=tuple(payload.get("ro_binds", ())),
            interactor_binds=tuple(payload["interactor_ro_binds"]),
            scratch=work,
        )


def interaction_record(ia: Interaction) -> dict[str, Any]:
    """What a stored run keeps of the interactor: its verdict, exit and word."""
    return {
        "verdict": str(ia.verdict),
        "status": str(ia.interactor.status),
        "exit_code": ia.interactor.exit_code,
        "message": ia.message,
        "first": ia.interactor_first,
    }
