"""The fork server warms caches in the parent; a child must get the answers a cold process gets.

``warm_caches`` fills ``inspect.getmodule``'s file -> module map before the first fork, and
children then import the suite (``kind = "python"``: the package under test too) after it.  A
stale or partial map would make a failure report read the wrong source, so this checks, in a
fresh interpreter, that modules loaded before and after the warm-up resolve exactly as they do
without it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

_PROBE = """
import importlib, inspect, json, sys
from pathlib import Path

warm = sys.argv[1] == "warm"
root = Path(sys.argv[2])
if warm:
    from suitebench.suite.inside.batch.warm import warm_caches
    warm_caches()
sys.path.insert(0, str(root))
late = importlib.import_module("late_module")     # imported after the warm-up, as in a child
pkg = importlib.import_module("late_pkg.core")
answers = {
    "late": getattr(inspect.getmodule(late.check.__code__), "__name__", None),
    "pkg": getattr(inspect.getmodule(pkg.merge.__code__), "__name__", None),
    "json": getattr(inspect.getmodule(json.dumps.__code__), "__name__", None),
    "source": inspect.findsource(late.check.__code__)[1],
}
print(json.dumps(answers))
"""


def _answers(mode: str, root: Path) -> dict[str, object]:
    out = subprocess.run(
        [sys.executable, "-c", _PROBE, mode, str(root)],
        capture_output=True,
        text=True,
        check=True,
        cwd=root,
        timeout=60,
    )
    return dict(json.loads(out.stdout))


def test_warm_module_map_answers_like_a_cold_process(tmp_path: Path) -> None:
    (tmp_path / "late_module.py").write_text(
        "def helper():\n    return 1\n\n\ndef check(x):\n    assert x == helper() + 1\n"
    )
    (tmp_path / "late_pkg").mkdir()
    (tmp_path / "late_pkg" / "__init__.py").write_text("")
    (tmp_path / "late_pkg" / "core.py").write_text("def merge(a, b):\n    return sorted(a + b)\n")
    cold = _answers("cold", tmp_path)
    warm = _answers("warm", tmp_path)
    assert warm == cold
    assert warm["late"] == "late_module"
    assert warm["pkg"] == "late_pkg.core"
    assert warm["json"] == "json"
    assert warm["source"] == 4  # findsource's line index of ``def check``


_PATTERNS = """
import json, re
from suitebench.suite.inside.batch.warm import warm_patterns
from suitebench.suite.inside.probe.tracer import compiled_patterns

re.purge()
re.compile(r"(?P<zone>[A-Z]{2})-\\d+", re.IGNORECASE)
re.search(r"^[0-9]{5}$", "12345")
seen = compiled_patterns()
re.purge()
warmed = warm_patterns(seen + [["(unclosed", 0]])
again = compiled_patterns()  # what a child forked now finds compiled in its re cache
print(json.dumps({"seen": seen, "warmed": warmed, "again": again}))
"""


def test_patterns_compiled_by_a_run_are_warmed_for_the_children() -> None:
    """What the reference's coverage run compiled is read from ``re``'s cache as (pattern,
    flags), and compiled once in a batch's parent, where a forked child's ``re`` call finds it
    in the cache it inherits."""
    out = subprocess.run(
        [sys.executable, "-c", _PATTERNS], capture_output=True, text=True, check=True, timeout=60
    )
    found = json.loads(out.stdout)
    assert [r"(?P<zone>[A-Z]{2})-\d+", 2] in found["seen"]  # re.IGNORECASE
    assert [r"^[0-9]{5}$", 0] in found["seen"]
    assert found["warmed"] == len(found["seen"])  # the pattern that does not compile is skipped
    assert found["again"] == found["seen"]
