"""``ONLINE_JUDGE``: DOMjudge's and Codeforces' C and C++ compilers define it, and contestants'
templates read ``input.txt`` unless it is defined. Input mode builds every C and C++ program
with ``-DONLINE_JUDGE`` (``[compile] defines`` replaces the list), so such a submission reads
stdin and is judged as the judge judged it.

The problem is ``next-int`` (print x + 1): test 01 is ``5`` (answer ``6``), test 02 is ``-3``
(answer ``-2``); its references are a Python and a C program.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from suitebench.audit.arms import parse_arm
from suitebench.audit.chain import AuditConfig, audit_problem
from suitebench.audit.records import Verdict
from suitebench.audit.runs import AuditEngine
from suitebench.model.problem import ProblemError, load_problem

from .problems import write_next_int

# A contestant's template (as SWERC 2025's keygen3 and many Codeforces submissions have it):
# off the judge, the program reads input.txt and writes output.txt. Without ONLINE_JUDGE the
# freopen of a missing input.txt closes stdin, x stays 0, and stdout goes to output.txt (or
# nowhere): the judge sees an empty output.
TEMPLATE_CPP = """\
#include <bits/stdc++.h>
using namespace std;
int main() {
#ifndef ONLINE_JUDGE
    freopen("input.txt", "r", stdin);
    freopen("output.txt", "w", stdout);
#endif
    ios::sync_with_stdio(false);
    cin.tie(nullptr);
    long long x = 0;
    cin >> x;
    cout << x + 1 << '\\n';
}
"""

# Right only where the macro is defined: x + 1 under ONLINE_JUDGE, x + 2 without it.
REVEAL_C = """\
#include <stdio.h>
int main(void) {
    long long x;
    if (scanf("%lld", &x) != 1) return 1;
#ifdef ONLINE_JUDGE
    printf("%lld\\n", x + 1);
#else
    printf("%lld\\n", x + 2);
#endif
    return 0;
}
"""

EDGE = {"01-big.in": "2147483646\n", "02-zero.in": "0\n"}
SUBS = {"template.cpp": TEMPLATE_CPP, "reveal.c": REVEAL_C}


def _verdicts(audit: object, sub: str) -> list[Verdict]:
    """The verdicts of ``submissions/<sub>`` on the official tests and the arm's inputs."""
    cells = audit.cells  # type: ignore[attr-defined]
    return sorted({v.verdict for (s, _), v in cells.items() if s == f"submissions/{sub}"}, key=str)


def test_online_judge_is_defined_for_c_and_cpp_and_a_problem_can_turn_it_off(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """By default both submissions are right on every input (01-big: 2147483647, 02-zero: 1,
    and the official 6 and -2), which they are only if ONLINE_JUDGE is defined; with
    ``defines = []`` the template prints nothing and reveal.c prints x + 2, both wrong on every
    input. The defines are part of the build, so the two problems' builds differ."""
    judged = load_problem(write_next_int(tmp_path / "judge", SUBS, arms={"edge": EDGE}))
    plain = load_problem(
        write_next_int(
            tmp_path / "plain", SUBS, extra="[compile]\ndefines = []\n", arms={"edge": EDGE}
        )
    )
    assert plain.compile == {}  # `defines` is not a language's flags
    engine = make_engine()
    arm = [parse_arm("edge=arms/edge")]
    on = audit_problem(judged, arm, AuditConfig(), engine)
    off = audit_problem(plain, arm, AuditConfig(), engine)
    for sub in SUBS:
        assert _verdicts(on, sub) == [Verdict.AC], sub
        assert _verdicts(off, sub) == [Verdict.WA], sub
    assert on.ledger == []
    assert sorted({r.submission_id for r in off.ledger}) == [  # a row per arm
        "submissions/reveal.c",
        "submissions/template.cpp",
    ]
    # the ledger says which macros judged a row (no word where they are the default)
    assert {r.compile_flags for r in off.ledger} == {"defines=none"}
    assert (judged.defines, plain.defines) == (("ONLINE_JUDGE",), ())
    killed = {r.submission_id: r.got_head for r in off.ledger}
    assert killed["submissions/reveal.c"] in ("2147483648\\n", "2\\n", "7\\n", "-1\\n")  # x + 2
    for sub in SUBS:  # a build without the macro is never taken for one with it
        a, b = (engine.build(p.root / "submissions" / sub) for p in (judged, plain))
        assert a.program_id != b.program_id


def test_own_flags_keep_the_macro_and_extra_defines_are_added(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """A ``[compile]`` table of flags replaces the optimisation and standard, not the judge's
    macros; ``defines`` may name others (DOMjudge also defines DOMJUDGE)."""
    domjudge = """\
#include <stdio.h>
int main(void) {
    long long x;
    if (scanf("%lld", &x) != 1) return 1;
#if defined(ONLINE_JUDGE) && defined(DOMJUDGE)
    printf("%lld\\n", x + 1);
#endif
    return 0;
}
"""
    own = load_problem(
        write_next_int(
            tmp_path / "own",
            {"template.cpp": TEMPLATE_CPP, "domjudge.c": domjudge},
            extra='[compile]\ncpp = ["-O0", "-std=gnu++17"]\n'
            'defines = ["ONLINE_JUDGE", "DOMJUDGE"]\n',
        )
    )
    assert own.compile == {"cpp": ("-O0", "-std=gnu++17")}
    audit = audit_problem(own, [], AuditConfig(), make_engine())
    assert _verdicts(audit, "template.cpp") == [Verdict.AC]
    assert _verdicts(audit, "domjudge.c") == [Verdict.AC]


@pytest.mark.parametrize(
    "value", ['"ONLINE_JUDGE"', '["-DONLINE_JUDGE"]', '["ONLINE JUDGE"]', "[1]"]
)
def test_defines_are_validated(tmp_path: Path, value: str) -> None:
    d = write_next_int(tmp_path / "p", SUBS, extra=f"[compile]\ndefines = {value}\n")
    with pytest.raises(ProblemError) as err:
        load_problem(d)
    assert err.value.field == "compile.defines" and "macro names" in str(err.value)
