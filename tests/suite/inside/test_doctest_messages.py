"""A failed doctest's one-line reason is its example and what it gave, whichever form of
report the project's ``--doctest-report`` asks pytest for (semver's setup.cfg says ``ndiff``).

Before, an ndiff or udiff report had no ``Expected:``/``Got:`` lines and the reason fell back
to the report's last line, ``/tmp/suitebench-batch-.../work/docs/x.rst:9: DocTestFailure``:
a sandbox path, different in every run, and nothing of what went wrong.

The reports are pytest's own, from running it on two text files written here:

* ``t.rst``: ``print("a\\nb")`` where the text says ``a`` then ``c`` -- the line ``c`` is
  expected and ``b`` is got;
* ``u.rst``: five lines printed, the third ``b`` where the text says ``X``; its first line is
  ``-1``, a context line a reader taking every ``-`` line as removed would count as expected.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from suitebench.suite.inside.wire import doctest_message

T_RST = '>>> x = 1\n>>> print("a\\nb")\na\nc\n'
U_RST = '>>> print("-1\\na\\nb\\nc\\nd")\n-1\na\nX\nc\nd\n'


def _reports(tmp_path: Path, report: str) -> dict[str, str]:
    """pytest's failure report of each file under ``--doctest-report REPORT``."""
    (tmp_path / "t.rst").write_text(T_RST)
    (tmp_path / "u.rst").write_text(U_RST)
    pytest_args = ["-p", "no:cacheprovider", "-q", "--doctest-glob=*.rst", "--doctest-report"]
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", *pytest_args, report, "t.rst", "u.rst"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
    )
    sections = re.split(r"^_+ \[doctest\] (\S+) _+$", proc.stdout, flags=re.M)
    return dict(zip(sections[1::2], sections[2::2], strict=True))


# doctest diffs only where the output has more than two lines (udiff), or always (ndiff)
WHOLE_T = "expected a c, got a b"
WHOLE_U = "expected -1 a X c d, got -1 a b c d"
EXPECTED = {  # report -> (t.rst's reason, u.rst's reason) after the example
    "ndiff": ("expected c, got b", "expected X, got b"),
    "udiff": (WHOLE_T, "expected X, got b"),
    "none": (WHOLE_T, WHOLE_U),
    "only_first_failure": (WHOLE_T, WHOLE_U),
}


@pytest.mark.parametrize("report", sorted(EXPECTED))
def test_the_reason_is_the_example_and_what_it_gave(tmp_path: Path, report: str) -> None:
    reports = _reports(tmp_path, report)
    t_reason, u_reason = EXPECTED[report]
    assert doctest_message(reports["t.rst"]) == '>>> print("a\\nb"): ' + t_reason
    assert doctest_message(reports["u.rst"]) == '>>> print("-1\\na\\nb\\nc\\nd"): ' + u_reason
