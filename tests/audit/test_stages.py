"""Each stage of the chain on real runs of the project's problems (and variants of them)."""

from __future__ import annotations

import csv
from collections.abc import Callable
from pathlib import Path

import pytest

from suitebench.audit.arms import ArmError, arm_from_dir, arm_from_generator, parse_arm
from suitebench.audit.chain import AuditConfig, AuditError, audit_problem
from suitebench.audit.determinism import classify
from suitebench.audit.legality import certify_legality
from suitebench.audit.pipeline import run_audit
from suitebench.audit.records import DetClass, GoldStatus, Judged, Legality, Verdict
from suitebench.audit.runs import AuditEngine
from suitebench.audit.tolerance import within_tolerance
from suitebench.model.problem import load_problem
from suitebench.run.cgroups import usable_parent

from .conftest import PROBLEMS, copy_problem

ACC = "submissions/accepted/"


# -- arms ------------------------------------------------------------------------------------


def test_directory_arm_order_and_dedup() -> None:
    arm = arm_from_dir("hand", PROBLEMS / "maxsum" / "arms" / "handmade")
    ids = [c.input_id for c in arm.inputs]
    assert ids == sorted(ids) and ids[0] == "01-overflow.in"
    assert "08-dup.in" not in ids and arm.duplicates == 1  # same bytes as 02-tie.in
    assert len({c.sha256 for c in arm.inputs}) == len(arm.inputs)


def test_parse_arm_forms() -> None:
    assert parse_arm("a=dir/x").seeds is None
    g = parse_arm("rand=generator@25")
    assert (g.name, g.path, g.seeds) == ("rand", "generator", 25)
    for bad in ("noequals", "official=x", "bad name=x"):
        with pytest.raises(ArmError):
            parse_arm(bad)


def test_generator_arm_is_sandboxed_seeded_and_reports_failed_seeds(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    gen = PROBLEMS / "mean" / "gen.py"
    a = arm_from_generator("rand", gen, 12, engine)
    b = arm_from_generator("rand", gen, 12, engine)
    assert [c.sha256 for c in a.inputs] == [c.sha256 for c in b.inputs]
    assert a.inputs[0].input_id == "seed-0" and len(a.inputs) + a.duplicates == 12
    flaky = tmp_path / "gen_odd.py"
    flaky.write_text("import sys\ns = int(input())\nsys.exit(s % 2)\n")
    c = arm_from_generator("odd", flaky, 6, engine)
    assert c.failed_seeds == (1, 3, 5)
    # seeds 0, 2, 4 all print nothing: one input, two duplicates
    assert [x.input_id for x in c.inputs] == ["seed-0"] and c.duplicates == 2


# -- legality --------------------------------------------------------------------------------


def test_validator_quality_gate(make_engine: Callable[..., AuditEngine], tmp_path: Path) -> None:
    engine = make_engine()
    good = certify_legality(load_problem(PROBLEMS / "maxsum"), [b"1\n5\n", b"0\n\n"], engine)
    assert good.gate is not None and good.gate.passed
    assert list(good.verdicts.values()) == [Legality.LEGAL, Legality.ILLEGAL]

    lax = copy_problem(tmp_path, "maxsum")
    (lax / "validator.py").write_text("pass\n")  # accepts anything, the empty input too
    rep = certify_legality(load_problem(lax), [b"1\n5\n", b"0\n\n"], engine)
    assert rep.gate is not None and not rep.gate.passed
    assert rep.gate.reasons == ("accepts the empty input",)
    assert set(rep.verdicts.values()) == {Legality.UNMEASURED}  # never "illegal"

    strict = copy_problem(tmp_path, "mean")
    (strict / "validator.py").write_text(
        "import sys\nn = int(sys.stdin.readline())\nsys.exit(0 if n >= 3 else 1)\n"
    )
    rep = certify_legality(load_problem(strict), [b"3\n1 1 2\n"], engine)
    assert rep.gate is not None and not rep.gate.passed
    assert any("rejects official input tests/01.in" in r for r in rep.gate.reasons)


def test_failed_gate_leaves_kills_scored_but_uncertified(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    d = copy_problem(tmp_path, "mean")
    (d / "validator.py").write_text("import sys\nsys.exit(0)\n")
    audit = audit_problem(
        load_problem(d), [parse_arm("hand=arms/handmade")], AuditConfig(), make_engine()
    )
    hand = audit.arms["hand"]
    assert hand.counts["unmeasured"] == 2 and hand.counts["illegal"] == 0
    assert ACC + "intdiv.c" in hand.killed  # still in the kill matrix
    assert audit.ledger == []
    assert {r.stage for r in audit.retractions} == {"legality"}
    assert all("quality gate" in r.reason for r in audit.retractions)
    assert hand.funnel.after_corrections == 3 and hand.funnel.certified == 0


# -- oracle, brute force, consensus correction ----------------------------------------------


@pytest.fixture
def divsum_engine(make_engine: Callable[..., AuditEngine]) -> AuditEngine:
    return make_engine("divsum.sqlite")


def test_all_agree_oracle_skips_inputs_the_references_dispute(
    divsum_engine: AuditEngine, tmp_path: Path
) -> None:
    d = copy_problem(tmp_path, "divsum", r='rule = "majority"|rule = "all_agree"')
    audit = audit_problem(
        load_problem(d), [parse_arm("hand=arms/handmade")], AuditConfig(), divsum_engine
    )
    no_gold = {audit.inputs[s] for s, g in audit.golds.items() if g.status is GoldStatus.NO_GOLD}
    # ref_square.py is wrong exactly on perfect squares: those inputs have no gold
    assert no_gold == {b"1\n", b"4\n", b"36\n", b"1000000\n", b"1000000000000\n"}
    assert audit.arms["hand"].counts["no_gold"] == 4
    assert all(
        "disagree" in audit.golds[s].reason
        for s in audit.golds
        if audit.golds[s].status is GoldStatus.NO_GOLD
    )
    assert [r.submission_id for r in audit.ledger] == [ACC + "slow_n2.c"]


def test_single_wrong_reference_is_caught_by_brute_force_and_consensus(
    divsum_engine: AuditEngine, tmp_path: Path
) -> None:
    d = copy_problem(
        tmp_path,
        "divsum",
        r='references = ["refs/*"]|references = ["refs/ref_square.py"]',
        o='rule = "majority"|rule = "majority"\nmin_success = 1',
    )
    problem = load_problem(d)
    arms = [parse_arm("hand=arms/handmade")]

    alone = audit_problem(problem, arms, AuditConfig(), divsum_engine)
    with_pool = audit_problem(problem, arms, AuditConfig(consensus_pool="accepted"), divsum_engine)

    # Brute force (finishes for N <= 10^6) proves the single reference wrong on small squares.
    brute = [r for r in with_pool.retractions if r.stage == "brute"]
    assert {r.submission_id for r in brute} >= {ACC + "ok_block.c", ACC + "ok_hyper.py"}
    assert all("gold is wrong" in r.reason for r in brute)
    # On the official 10^12 no brute finishes: without a consensus pool the correct
    # submissions are (wrongly) certified there ...
    false = {(r.arm, r.submission_id) for r in alone.ledger}
    assert ("official", ACC + "ok_block.c") in false
    # ... and the accepted pool's vote withdraws them: the oracle is the outlier.
    cons = [r for r in with_pool.retractions if r.stage == "consensus"]
    assert {(r.arm, r.submission_id) for r in cons} >= {("official", ACC + "ok_block.c")}
    assert all("oracle is the outlier" in r.reason for r in cons)
    # the real bug survives every correction
    assert [(r.arm, r.submission_id) for r in with_pool.ledger] == [("hand", ACC + "slow_n2.c")]


# -- determinism, tolerance, checkers -----------------------------------------------------------


def test_determinism_classes() -> None:
    wa = Judged(Verdict.WA, b"6 2\n")
    assert classify(wa, [Judged(Verdict.WA, b"6  2")] * 3) is DetClass.DET_WA
    assert classify(wa, [wa, Judged(Verdict.WA, b"6 3\n"), wa]) is DetClass.NONDET
    assert classify(wa, [Judged(Verdict.AC, b"6 3\n")] * 3) is DetClass.NOT_REPRODUCED
    assert classify(wa, [wa, Judged(Verdict.AC), wa]) is DetClass.NONDET
    re_ = Judged(Verdict.RE)
    assert classify(re_, [re_] * 3) is DetClass.DET_RE
    assert classify(re_, [re_, Judged(Verdict.TLE), re_]) is DetClass.NONDET


def test_within_tolerance_never_forgives_integers() -> None:
    assert within_tolerance(b"0.666666667\n", b"0.6666666667\n", 1e-6)
    assert not within_tolerance(b"0.67\n", b"0.6666666667\n", 1e-6)
    assert not within_tolerance(b"13970033\n", b"13970034\n", 1e-6)
    assert not within_tolerance(b"1 0.5\n", b"2 0.5\n", 1e-6)


def test_exact_scoring_then_tolerance_withdraws_float_artifacts(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    d = copy_problem(tmp_path, "mean", c='checker = "float:1e-6"|checker = "tokens"')
    audit = audit_problem(
        load_problem(d), [parse_arm("hand=arms/handmade")], AuditConfig(), make_engine()
    )
    tol = [r for r in audit.retractions if r.stage == "tolerance"]
    # 0.666666667 vs 0.6666666667: correct, flagged only by exact token comparison
    assert ACC + "ok_9digits.c" in {r.submission_id for r in tol}
    # intdiv.c prints "5" where the gold says "5.0000000000" (official 01): also an artifact
    assert ("official", ACC + "intdiv.c") in {(r.arm, r.submission_id) for r in tol}
    assert {(r.arm, r.submission_id) for r in audit.ledger} == {
        ("hand", ACC + "float32.c"),
        ("hand", ACC + "intdiv.c"),
        ("hand", ACC + "two_places.py"),
    }
    assert {r.submission_id for r in audit.ledger} == {
        ACC + "float32.c",
        ACC + "intdiv.c",
        ACC + "two_places.py",
    }


def test_custom_checker_program_judges_like_the_float_checker(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    d = copy_problem(tmp_path, "mean", c='checker = "float:1e-6"|checker = "check.py"')
    audit = audit_problem(
        load_problem(d), [parse_arm("hand=arms/handmade")], AuditConfig(), make_engine()
    )
    assert {r.submission_id for r in audit.ledger} == {
        ACC + "float32.c",
        ACC + "intdiv.c",
        ACC + "two_places.py",
    }
    assert ACC + "ok_9digits.c" not in audit.arms["hand"].killed


def test_build_errors_are_outcomes_not_crashes(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    d = copy_problem(tmp_path, "mean")
    (d / "submissions" / "accepted" / "typo.c").write_text("int main( { return 0 }\n")
    audit = audit_problem(load_problem(d), [], AuditConfig(), make_engine())
    assert ACC + "typo.c" in audit.build_errors and ACC + "typo.c" not in audit.submissions


def test_unknown_pool_names_the_problem(make_engine: Callable[..., AuditEngine]) -> None:
    with pytest.raises(AuditError, match="no pool 'buggy'"):
        audit_problem(load_problem(PROBLEMS / "mean"), [], AuditConfig(pool="buggy"), make_engine())


def test_rejected_pool_official_verdicts(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    res = run_audit(
        [PROBLEMS / "mean"],
        [parse_arm("rand=generator@8")],
        make_engine(),
        config=AuditConfig(pool="rejected"),
        out_dir=tmp_path / "out",
    )
    p = res.results["problems"]["mean"]
    assert p["official_verdicts"] == {"submissions/rejected/first_only.py": "WA"}
    with (tmp_path / "out" / "ledger.csv").open() as fh:
        rows = list(csv.DictReader(fh))
    assert rows and all(r["new_finding"] == "false" for r in rows)
    assert {r["arm"] for r in rows} >= {"official"}


def test_judge_verdicts_for_crashes_and_limits(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """RE and OLE are kills (crash class, DET_RE when they repeat); TLE never is; deep
    recursion is fine (judge semantics: unlimited stack)."""
    d = copy_problem(tmp_path, "mean")
    acc = d / "submissions" / "accepted"
    (acc / "deep.c").write_text(
        "#include <stdio.h>\n"
        "long long sum(int d) { volatile char pad[64]; pad[0] = 1;\n"
        "  return d == 0 ? 0 : sum(d - 1) + pad[0] - 1; }\n"
        'int main(void) { int n; long long s = 0, x; scanf("%d", &n);\n'
        '  for (int i = 0; i < n; i++) { scanf("%lld", &x); s += x; }\n'
        '  s += sum(1000000); printf("%.10f\\n", (double)s / n); return 0; }\n'
    )
    (acc / "segv.c").write_text(
        '#include <stdio.h>\nint main(void) { int *p = 0; int n; scanf("%d", &n);\n'
        '  if (n == 3) *p = 1; printf("%d\\n", n); return 0; }\n'
    )
    (acc / "chatty.c").write_text(
        '#include <stdio.h>\nint main(void) { int n; scanf("%d", &n);\n'
        '  if (n == 3) for (;;) fputs("0.6666666667\\n", stdout); return 0; }\n'
    )
    (acc / "spin.c").write_text(
        '#include <stdio.h>\nint main(void) { int n; scanf("%d", &n);\n'
        "  if (n == 3) for (volatile unsigned long i = 0;; i++) {} return 0; }\n"
    )
    audit = audit_problem(
        load_problem(d), [parse_arm("hand=arms/handmade")], AuditConfig(), make_engine()
    )
    cancel = next(c.sha256 for c in audit.arms["hand"].arm.inputs if c.input_id == "01-cancel.in")
    verdict = {n: audit.cells[(ACC + n, cancel)].verdict for n in ("segv.c", "chatty.c", "spin.c")}
    assert verdict["segv.c"] is Verdict.RE
    assert verdict["chatty.c"] is Verdict.OLE
    assert verdict["spin.c"] is Verdict.TLE
    # a million frames of ~100 bytes: a segfault under the default 8 MiB stack
    assert audit.cells[(ACC + "deep.c", cancel)].verdict is Verdict.AC
    certified = {r.submission_id: r.determinism for r in audit.ledger if r.arm == "hand"}
    for n in ("segv.c", "chatty.c"):
        assert certified[ACC + n] == "DET_RE"
    assert ACC + "spin.c" not in certified
    assert ACC + "spin.c" in audit.arms["hand"].tle_only


def test_memory_hog_is_a_memory_verdict(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """Over the memory limit: where the memory cgroup works the sandbox reports the kill and
    only MLE is right; where only rlimits apply the allocation fails and the program's own
    error is an RE (reported honestly). Never AC, never TLE."""
    d = copy_problem(tmp_path, "mean", m="memory_limit = 256|memory_limit = 64")
    acc = d / "submissions" / "accepted"
    # touches every page of 512 MiB (volatile: the compiler may not elide the allocation)
    (acc / "hog.c").write_text(
        "#include <stdio.h>\n#include <stdlib.h>\n"
        'int main(void) { int n; long s = 0; scanf("%d", &n); if (n == 3) {\n'
        "  size_t sz = 512u << 20; volatile char *p = malloc(sz); if (!p) return 3;\n"
        "  for (size_t i = 0; i < sz; i += 4096) p[i] = (char)i;\n"
        "  for (size_t i = 0; i < sz; i += 4096) s += p[i]; }\n"
        '  printf("%ld\\n", s + n); return 0; }\n'
    )
    engine = make_engine()
    audit = audit_problem(load_problem(d), [parse_arm("hand=arms/handmade")], AuditConfig(), engine)
    cancel = next(c.sha256 for c in audit.arms["hand"].arm.inputs if c.input_id == "01-cancel.in")
    got = audit.cells[(ACC + "hog.c", cancel)].verdict
    if usable_parent("memory") is not None:
        assert got is Verdict.MLE
    else:
        assert got is Verdict.RE
    assert any(r.submission_id == ACC + "hog.c" and r.determinism == "DET_RE" for r in audit.ledger)


def test_c_validator_with_a_local_header(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """testlib-style: a C++ validator that includes a header sitting beside it builds and gates."""
    d = copy_problem(tmp_path, "mean", v='validator = "validator.py"|validator = "val/val.cpp"')
    (d / "val").mkdir()
    (d / "val" / "limits.h").write_text("#define MAX_N 1000\n#define MAX_A 1000000000LL\n")
    (d / "val" / "val.cpp").write_text(
        '#include <cstdio>\n#include "limits.h"\n'
        "int main() { int n; long long a; char c;\n"
        '  if (std::scanf("%d", &n) != 1 || n < 1 || n > MAX_N) return 1;\n'
        "  for (int i = 0; i < n; i++) {\n"
        '    if (std::scanf("%lld", &a) != 1 || a > MAX_A || a < -MAX_A) return 1; }\n'
        '  if (std::scanf(" %c", &c) == 1) return 1;\n'
        "  return 0; }\n"
    )
    rep = certify_legality(
        load_problem(d), [b"2\n1 2\n", b"2\n1\n", b"1\n2000000000\n"], make_engine()
    )
    assert rep.gate is not None and rep.gate.passed, rep.gate
    assert list(rep.verdicts.values()) == [Legality.LEGAL, Legality.ILLEGAL, Legality.ILLEGAL]
    assert rep.validator == "val/val.cpp"


def test_one_arm_directory_serves_several_problems(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    from suitebench.audit.arms import resolve_arm

    for pid, data in (("mean", b"3\n1 1 2\n"), ("maxsum", b"2\n5 5\n")):
        (tmp_path / "agent" / pid).mkdir(parents=True)
        (tmp_path / "agent" / pid / "01.txt").write_bytes(data)
    src = parse_arm("agent=agent")
    engine = make_engine()
    for pid, data in (("mean", b"3\n1 1 2\n"), ("maxsum", b"2\n5 5\n")):
        arm = resolve_arm(src, load_problem(PROBLEMS / pid), engine, tmp_path)
        assert [c.data for c in arm.inputs] == [data]
    with pytest.raises(ArmError, match="not found"):
        resolve_arm(parse_arm("x=nowhere"), load_problem(PROBLEMS / "mean"), engine, tmp_path)


def test_problem_without_validator_certifies_only_on_its_own_tests(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    """Without a validator the official and sample tests are legal by definition (they define
    the problem): a kill there is certified with that basis. Every other arm's inputs stay
    ``no_validator`` and certify nothing. (Before, not even the official tests certified.)"""
    d = copy_problem(tmp_path, "mean", v='validator = "validator.py"\n|')
    problem = load_problem(d)
    engine = make_engine()
    audit = audit_problem(problem, [parse_arm("hand=arms/handmade")], AuditConfig(), engine)
    hand = audit.arms["hand"]
    assert hand.counts["no_validator"] == 2 and hand.counts["scored"] == 2
    assert len(hand.killed) == 3 and not [r for r in audit.ledger if r.arm == "hand"]
    assert {r.reason for r in audit.retractions if r.arm == "hand"} == {
        "the problem has no validator (only its own tests are legal by definition)"
    }
    assert audit.arms["official"].counts["legal"] == 3
    assert hand.funnel.certified_by == {}

    # the rejected pool's first_only.py prints the first number, not the mean: the official
    # tests catch it, and without a validator that kill is still certified, by definition
    rejected = audit_problem(problem, [], AuditConfig(pool="rejected"), engine)
    rows = [r for r in rejected.ledger if r.arm == "official"]
    assert [r.submission_id for r in rows] == ["submissions/rejected/first_only.py"]
    assert rows[0].legality == "legal" and rows[0].legality_basis == "problem_tests"
    assert rows[0].validator == ""
    assert rejected.arms["official"].funnel.certified_by == {"problem_tests": 1}
