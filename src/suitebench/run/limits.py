"""The named limits of the runs suitebench makes itself, in one table.

A judged run, a validator, a checker, a generator arm and a build each run with limits of
their own; they were once written out wherever they were used, so the same numbers lived in
several places and could drift apart. Every caller now names its entry here (a problem's own
limits still come from its ``problem.toml``, through :func:`judge`).

| name            | wall  | memory   | other                                                  |
|-----------------|-------|----------|--------------------------------------------------------|
| ``judge(...)``  | 2 x TL| problem's| CPU = TL, + allowance on both, output = problem's cap   |
| ``VALIDATOR``   | 10 s  | 1 GiB    |                                                        |
| ``CHECKER``     | 10 s  | 1 GiB    |                                                        |
| ``GENERATOR``   | 10 s  | 1 GiB    | a generator arm's run, one per seed                    |
| ``BUILD``       | 60 s  | 2 GiB    | 64 processes, output 1 MiB, files 512 MiB, no network  |
| ``TREE_BUILD``  | 600 s | 4 GiB    | 512 processes: a source tree's build script (suites)   |
"""

from __future__ import annotations

from suitebench.run.outcome import Limits, MiB

__all__ = ["BUILD", "CHECKER", "GENERATOR", "TREE_BUILD", "VALIDATOR", "judge"]

#: A validator reads one input and exits, quickly.
VALIDATOR = Limits(wall_time=10.0, memory_mb=1024)

#: One call of a checker program.
CHECKER = Limits(wall_time=10.0, memory_mb=1024)

#: One run of a generator arm's program (one seed).
GENERATOR = Limits(wall_time=10.0, memory_mb=1024)

#: The build of one program (input mode: a solution, a validator, a checker, a generator).
BUILD = Limits(
    wall_time=60.0,
    memory_mb=2048,
    output_bytes=1024 * 1024,
    file_size_bytes=512 * 1024 * 1024,
    processes=64,
    network=False,
)

#: The build of a source tree by its build script (suite mode: a reference, a mutant, a
#: candidate implementation), and the compile check of a Python package run in the sandbox.
TREE_BUILD = Limits(wall_time=600.0, memory_mb=4096, processes=512)


def judge(time_limit: float, *, memory_mb: int | None, allowance: float, output_mb: int) -> Limits:
    """A judged run: CPU = the time limit, wall watchdog = twice it, the allowance added to
    both; the output cap (MiB) applies to stdout and stderr each."""
    return Limits(
        wall_time=2 * time_limit,
        cpu_time=time_limit,
        memory_mb=memory_mb,
        extra_time=allowance,
        stack_unlimited=True,
        output_bytes=output_mb * MiB,
    )
