"""``--fast``'s order of tests on a mutant (:func:`suitebench.suite.protocol.fast.fast_order`),
worked out by hand: valid tests only, likely killers first -- the tests that killed mutants of
the same section (most kills first), then the mutant's own target, then the tests of its
section, then the rest; among equals the fastest on the reference first, then the suite's
order.  A kill found early stops the mutant's run, so this order is what --fast saves."""

from __future__ import annotations

from pathlib import Path

from suitebench.model.instance import MutantSpec
from suitebench.suite.protocol.fast import fast_order
from suitebench.suite.records import TestStatus
from suitebench.suite.result import TestInfo

P, F = TestStatus.PASSED, TestStatus.FAILED


def info(
    test: str, *, seconds: list[float | None], sections: tuple[str, ...] = (), valid: bool = True
) -> TestInfo:
    return TestInfo(
        id=test, file="t.py", valid=valid, flaky=False, reference=[P if valid else F] * 2,
        sections=list(sections), seconds=seconds,
    )  # fmt: skip


TESTS = [
    info("t_sum", seconds=[0.5, 0.4], sections=("sum",)),
    info("t_fast", seconds=[0.1, 0.1]),
    info("t_sum_fast", seconds=[0.2, 0.1], sections=("sum",)),
    info("t_target", seconds=[0.9, None]),
    info("t_broken", seconds=[0.0, 0.0], sections=("sum",), valid=False),
    info("t_other", seconds=[0.3, 0.1]),
    info("t_twin", seconds=[0.1, 0.05]),
]


def mutant(section: str | None, target: str | None) -> MutantSpec:
    return MutantSpec(id="m1", patch=Path("/m/m1.diff"), section=section, target=target)


def test_killers_of_the_section_first_then_the_target_then_the_section_then_the_fastest() -> None:
    kills = {"sum": {"t_sum": 2, "t_fast": 1}, "max": {"t_other": 5}}
    order = fast_order(mutant("sum", "t_target"), TESTS, kills)
    # rank = (-kills in the section, not the target, not in the section, longest time, index):
    #   t_sum      (-2, yes, in,  0.5)   killed 2 of this section's mutants
    #   t_fast     (-1, yes, out, 0.1)   killed 1
    #   t_target   ( 0, NO,  out, 0.9)   the mutant's target, slow as it is
    #   t_sum_fast ( 0, yes, in,  0.2)   of the section
    #   t_twin     ( 0, yes, out, 0.1)   the rest by their longest time: 0.1 ...
    #   t_other    ( 0, yes, out, 0.3)   ... before 0.3 (its 5 kills are another section's)
    # t_broken is not valid: never run.
    assert order == ("t_sum", "t_fast", "t_target", "t_sum_fast", "t_twin", "t_other")


def test_with_nothing_known_the_fastest_go_first_and_ties_keep_the_suite_order() -> None:
    # No section, no target, no kills yet (the first wave): by longest reference time; t_fast
    # and t_twin both take 0.1 at most, so the suite's order decides (t_fast first).  A time
    # missing from a run (None) is left out: t_target's longest is 0.9.
    order = fast_order(mutant(None, None), TESTS, {})
    assert order == ("t_fast", "t_twin", "t_sum_fast", "t_other", "t_sum", "t_target")


def test_text_files_of_doctests_go_last_in_their_order() -> None:
    # A page (docs/*.rst) may use names the tests' fixtures gave pytest's doctest namespace:
    # it runs after every other test, pages in the suite's order, whatever its kills or time.
    tests = [
        info("docs/b.rst::b.rst", seconds=[0.01, 0.01]),
        info("t_slow", seconds=[0.9, 0.9]),
        info("docs/a.rst::a.rst", seconds=[0.02, 0.02]),
        info("t_quick", seconds=[0.1, 0.1]),
    ]
    kills = {None: {"docs/a.rst::a.rst": 3}}
    order = fast_order(mutant(None, None), tests, kills)
    assert order == ("t_quick", "t_slow", "docs/b.rst::b.rst", "docs/a.rst::a.rst")


def test_quick_tests_keep_the_suite_order_however_their_times_wobble() -> None:
    # Two runs of the same suite: the sub-millisecond tests' times swap from one to the other
    # (noise), the 3 ms and 4 ms ones move by a tenth.  Under 2 ms a test is as quick as any
    # (the suite's order decides); above, classes a factor of sqrt(2) apart: 3 ms and 3.3 ms
    # share one (1 + int(2 * log2(1.5)) = 2, 1 + int(2 * log2(1.65)) = 2), 4 ms is the next
    # (1 + int(2 * log2(2)) = 3).  Both runs give one order: the cells --fast runs stay put.
    names = ["t_slow", "t_a", "t_mid", "t_b", "t_c"]
    one = dict(zip(names, [0.004, 0.0009, 0.003, 0.0003, 0.0015], strict=True))
    two = dict(zip(names, [0.0044, 0.0002, 0.0033, 0.0011, 0.0004], strict=True))
    orders = {
        fast_order(mutant(None, None), [info(n, seconds=[t[n]]) for n in names], {})
        for t in (one, two)
    }
    assert orders == {("t_a", "t_b", "t_c", "t_mid", "t_slow")}
