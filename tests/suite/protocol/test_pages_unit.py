"""A selection holding a text file of doctests takes every test that ran before it on the
reference (:func:`suitebench.suite.protocol.choosing.with_page_predecessors`), worked out by
hand: semver's docs pages use names its tests' autouse fixture puts in pytest's
``doctest_namespace``, so a run of a page alone would fail with a NameError where the
reference's run passed -- a kill no change made."""

from __future__ import annotations

from suitebench.suite.protocol.choosing import is_page, with_page_predecessors

ORDER = [
    "tests/test_a.py::test_one",
    "tests/test_a.py::test_two",
    "src/pkg/mod.py::pkg.mod.f",  # a docstring's doctest: a Python file, not a page
    "docs/usage.rst::usage.rst",
    "tests/test_b.py::test_three",
    "docs/api.rst::api.rst",
]


def test_pages_are_text_files() -> None:
    assert [is_page(t) for t in ORDER] == [False, False, False, True, False, True]


def test_a_page_brings_every_test_before_it_in_the_reference_order() -> None:
    chosen = ("tests/test_b.py::test_three", "docs/usage.rst::usage.rst")
    # usage.rst is 4th: the three before it join; test_three (after it) stays chosen
    assert with_page_predecessors(chosen, ORDER) == (
        "tests/test_a.py::test_one",
        "tests/test_a.py::test_two",
        "src/pkg/mod.py::pkg.mod.f",
        "docs/usage.rst::usage.rst",
        "tests/test_b.py::test_three",
    )
    # the last page: everything before it
    assert with_page_predecessors(("docs/api.rst::api.rst",), ORDER) == tuple(ORDER)


def test_a_selection_without_pages_is_left_as_chosen() -> None:
    chosen = ("tests/test_b.py::test_three", "tests/test_a.py::test_one")
    assert with_page_predecessors(chosen, ORDER) == chosen
    assert with_page_predecessors((), ORDER) == ()
