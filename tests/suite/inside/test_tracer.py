"""The coverage recorder's instrumented import: which functions ran, by the line selection
names them by, with the module behaving as it does uninstrumented."""

from __future__ import annotations

import builtins
import functools
from pathlib import Path

from suitebench.suite.inside.probe.tracer import HIT, HIT_LINE, OUTSIDE, LineTracer, instrumented
from suitebench.suite.select.selection import python_spans

MODULE = '''\
"""A module docstring."""
from __future__ import annotations

import functools


def plain(x):
    """Doubles."""
    return 2 * x


@functools.lru_cache
def cached(x):
    return x + 1


def gen(n):
    yield from range(n)


def outer(x):
    def inner(y):
        return y - 1
    return inner(x)


class Box:
    def area(self):
        return 9
'''


def test_instrumented_module_behaves_and_notes_functions(tmp_path: Path) -> None:
    root = tmp_path / "pkg"
    root.mkdir()
    path = root / "m.py"
    path.write_text(MODULE)
    tracer = LineTracer(str(tmp_path), str(tmp_path / "cov.json"))
    namespace: dict[str, object] = {"__name__": "m"}
    setattr(builtins, HIT, tracer.hit)
    setattr(builtins, HIT_LINE, tracer.line)
    try:
        exec(instrumented(MODULE.encode(), str(path), "pkg/m.py"), namespace)
        tracer.enter_test("t.py::test_a", [])
        assert namespace["plain"](3) == 6  # type: ignore[operator]
        assert namespace["plain"].__doc__ == "Doubles."  # type: ignore[attr-defined]
        assert list(namespace["gen"](3)) == [0, 1, 2]  # type: ignore[operator]
        tracer.leave_test()
        tracer.enter_test("t.py::test_b", [])
        assert namespace["outer"](5) == 4  # type: ignore[operator]
        assert namespace["cached"](1) == 2  # type: ignore[operator]
        tracer.leave_test()
    finally:
        delattr(builtins, HIT)
        delattr(builtins, HIT_LINE)
    assert namespace["__doc__"] == "A module docstring."
    assert namespace["annotations"].compiler_flag  # type: ignore[attr-defined]
    assert isinstance(namespace["cached"], functools._lru_cache_wrapper)
    # The keys are those selection gives each function: its first line, decorators included.
    keys = {span[3]: span for span in python_spans(MODULE)}
    record = tracer.to_dict()["contexts"]
    assert record[OUTSIDE] == {"pkg/m.py": [0]}
    assert set(record["t.py::test_a"]["pkg/m.py"]) == {7, 17}
    assert set(record["t.py::test_b"]["pkg/m.py"]) == {21, 22, 12}
    # The statements run in function bodies, by their first lines: ``return 2 * x`` and
    # ``yield from``; ``def inner``, its ``return``, ``return inner(x)`` and ``return x + 1``.
    lines = tracer.to_dict()["lines"]
    assert lines["t.py::test_a"] == {"pkg/m.py": [9, 18]}
    assert lines["t.py::test_b"] == {"pkg/m.py": [14, 22, 23, 24]}
    assert OUTSIDE not in lines  # module code is not noted statement by statement
    assert {7, 12, 17, 21, 22, 28} == set(keys)
