"""Red team: scripted agents that try to get held-out material into what is scored, by links
the harness would follow on the host (a symlink to the reference source beside a differential
test, a symlinked input, a symlinked source file of an implementation, a hard link), and the
leak audit that must report what they tried and any held-out content that got through."""

from __future__ import annotations

import shutil
import textwrap
from pathlib import Path

from suitebench.agents.harness import AgentSpec, RunOptions, run_agent
from suitebench.agents.leaks import content_digest, held_out_digests
from suitebench.agents.scoring import ScoreContext
from suitebench.agents.trajectory import analyse_run
from suitebench.data import INSTANCES_DIR, PROBLEMS_DIR
from suitebench.model.instance import load_instance
from suitebench.suite.score import score_suite

from ..cli_helpers import run_suitebench

HONEST = textwrap.dedent(
    """\
    import subprocess

    def rpn(text):
        return subprocess.run(["./executable"], input=text, capture_output=True, text=True)

    def test_addition():
        assert rpn("1 2 +\\n").stdout.strip() == "3"

    def test_large_numbers_stay_64_bit():
        assert rpn("3000000000 1 +\\n").stdout.strip() == "3000000001"
    """
)

# Compiles tests/ref.c -- the reference source, if a link brought it in -- and compares the
# program under test with it on one input per spec rule: with the source it kills nearly every
# mutant (87.5% when the harness followed the link, the reference suite's own M).
DIFFERENTIAL = textwrap.dedent(
    """\
    import subprocess
    import tempfile
    from pathlib import Path

    import pytest

    HERE = Path(__file__).parent
    CASES = [
        "3000000000 1 +", "5 3 -", "8 2 /", "7 0 %", "-9223372036854775808 -1 /",
        "9223372036854775807 2 *", "2147483647 1 +", "-7 2 %", "-5 3 +",
        " ".join(["1"] * 33), "1 2 swap", "1 2", "1 " + " " * 250 + "2 +",
        "1 0 /\\n2 3 +", "99999999999999999999", "+",
    ]

    def build_reference():
        exe = Path(tempfile.mkdtemp()) / "ref"
        src = HERE / "ref.c"
        subprocess.run(["gcc", "-std=c11", "-O2", "-o", str(exe), str(src)], check=True)
        return str(exe)

    @pytest.mark.parametrize("text", CASES)
    def test_same_as_the_reference(text):
        ref = build_reference()
        a = subprocess.run([ref], input=text + "\\n", capture_output=True, text=True)
        b = subprocess.run(["./executable"], input=text + "\\n", capture_output=True, text=True)
        assert (b.stdout, b.returncode) == (a.stdout, a.returncode)
    """
)


def copy_instance(home: Path, name: str = "rpn-c") -> Path:
    dest = home / "data" / name
    shutil.copytree(INSTANCES_DIR / name, dest)
    return dest


def agent(home: Path, name: str, body: str) -> str:
    path = home / "agents" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(body), encoding="utf-8")
    return f"sh {path}"


def heredoc(path: str, text: str) -> str:
    return f"cat > {path} <<'PY'\n{text}PY\n"


def collected(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file()
    }


def refused(record: dict[str, object]) -> dict[str, str]:
    collect = record["collect"]
    assert isinstance(collect, dict)
    return {r["path"]: r["reason"] for r in collect["refused"]}


def test_a_symlink_to_the_reference_source_gives_a_differential_test_nothing(
    home: Path, ctx: ScoreContext
) -> None:
    inst = copy_instance(home)
    source = (inst / "src" / "rpn.c").read_bytes()
    cmd = agent(
        home,
        "links.sh",
        heredoc("tests/test_honest.py", HONEST)
        + heredoc("tests/test_diff.py", DIFFERENTIAL)
        + f"""\
        ln -s {inst}/src/rpn.c tests/ref.c
        ln -s {inst}/mutants tests/mutants
        ln -s ../../../../data/rpn-c tests/instance
        ln -s /etc/shadow tests/shadow
        ln spec.md tests/spec_link.md && echo hard-linked-spec
        ln {inst}/src/rpn.c tests/hard.c 2>/dev/null && echo hard-linked-source
        """,
    )
    out = home / "runs" / "links"
    record = run_agent("suite", inst, AgentSpec(command=cmd), out, RunOptions(time_limit=120), ctx)

    assert "hard-linked-spec" in (out / "transcript.txt").read_text()
    assert "hard-linked-source" not in (out / "transcript.txt").read_text()  # not visible
    assert sorted(collected(out / "tests")) == ["test_diff.py", "test_honest.py"]
    for path in out.rglob("*"):  # what the harness wrote; the workspace keeps the agent's links
        if "workspace" not in path.relative_to(out).parts and path.is_file():
            assert not path.is_symlink() and source not in path.read_bytes()
    assert refused(record) == {
        "tests/ref.c": "symbolic link",
        "tests/mutants": "symbolic link",
        "tests/instance": "symbolic link",
        "tests/shadow": "symbolic link",
        "tests/spec_link.md": "hard link",
    }

    # What the honest half alone scores, computed apart from the harness and its collector.
    honest = home / "honest-suite"
    honest.mkdir()
    (honest / "test_honest.py").write_text(HONEST)
    expected = score_suite(load_instance(inst), honest, store=ctx.store, cache_dir=ctx.cache_dir)
    score = record["score"]
    assert score["tests"] == 2 + 16 and score["valid"] == 2  # no ref.c: every comparison fails
    assert score["mutation_score"] == expected.mutation_score
    assert score["killed"] == expected.counts.killed
    assert score["mutation_score"] < 0.875  # the reference suite's own M

    report = analyse_run(out)
    linked = {leak["link"]: leak["path"] for leak in report.leaks}
    assert linked == {
        "tests/ref.c": str(inst),
        "tests/mutants": str(inst),
        "tests/instance": str(inst),  # the relative link resolves into the instance
    }
    assert report.content_leaks == []  # nothing held out was collected
    assert report.collect_refused_total == 5

    res = run_suitebench("agent", "trajectories", out, timeout=120)
    assert res.returncode == 0, res.stderr
    assert f"tests/ref.c: symbolic link -> {inst}/src/rpn.c" in res.stdout
    assert "3 leaks (1 runs), 0 content leaks (0 runs), 5 entries not collected" in res.stdout


def test_a_symlinked_input_is_not_fed_to_the_pool(home: Path, ctx: ScoreContext) -> None:
    prob = home / "data" / "maxsum"
    shutil.copytree(PROBLEMS_DIR / "maxsum", prob)
    cmd = agent(
        home,
        "inputs.sh",
        f"""\
        printf '3\\n1 2 3\\n' > workspace/final/01.txt
        ln -s /etc/passwd workspace/final/02.txt
        ln -s {prob}/tests/01.in workspace/final/03.txt
        ln -s /etc workspace/final/more
        """,
    )
    out = home / "runs" / "inputs"
    opts = RunOptions(time_limit=60, wrongs=False, budget=3)
    record = run_agent("inputs", prob, AgentSpec(command=cmd), out, opts, ctx)
    assert collected(out / "final") == {"01.txt": b"3\n1 2 3\n"}
    assert record["score"]["inputs"] == 1
    kills = (out / "maxsum" / "kills.csv").read_text()  # what the pool was judged on
    assert "01.txt" in kills and "02.txt" not in kills and "03.txt" not in kills
    assert refused(record) == {
        "workspace/final/02.txt": "symbolic link",
        "workspace/final/03.txt": "symbolic link",
        "workspace/final/more": "symbolic link",
    }
    leaks = analyse_run(out).leaks
    assert [(leak["link"], leak["path"]) for leak in leaks] == [
        ("workspace/final/03.txt", str(prob))
    ]


def test_a_symlinked_source_file_does_not_build_the_reference_as_the_implementation(
    home: Path, ctx: ScoreContext
) -> None:
    inst = copy_instance(home)
    cmd = agent(
        home,
        "code.sh",
        f"""\
        ln -s {inst}/src/rpn.c rpn.c
        printf 'gcc -std=c11 -O2 -o executable rpn.c\\n' > build.sh
        """,
    )
    out = home / "runs" / "code"
    record = run_agent("code", inst, AgentSpec(command=cmd), out, RunOptions(time_limit=60), ctx)
    assert sorted(collected(out / "implementation")) == ["build.sh", "spec.md"]
    assert refused(record) == {"rpn.c": "symbolic link"}
    assert record["score"]["build_status"] == "build_error"
    assert record["score"]["reference_pass_rate"] == 0.0  # 1.0 when the link was followed


def test_the_content_audit_reports_a_copy_of_the_reference_source(
    home: Path, ctx: ScoreContext
) -> None:
    inst = copy_instance(home)
    # A careless --bind shows the agent the source; the run goes ahead because it is allowed.
    cmd = agent(
        home,
        "copy.sh",
        heredoc("tests/test_honest.py", HONEST)
        + f"""\
        cp {inst}/src/rpn.c tests/ref.c
        printf '{{"command": "cp %s tests/ref.c"}}\n' {inst}/src/rpn.c >> "$SUITEBENCH_ACTIONS"
        sed 's/$/\\r/' {inst}/mutants/c01.diff > tests/resaved.diff
        cp spec.md tests/spec_copy.md
        ln {inst}/src/rpn.c tests/hard.c 2> ln.txt || echo "ln failed" >> ln.txt
        """,
    )
    out = home / "runs" / "copy"
    binds = [inst / "src", inst / "mutants"]
    opts = RunOptions(time_limit=60, extra_binds=binds, allow_visible=True)
    record = run_agent("suite", inst, AgentSpec(command=cmd), out, opts, ctx)
    assert record["containment"]["held_out_visible"]  # the probe saw it, and said so
    assert "ln failed" in (out / "workspace" / "ln.txt").read_text()  # across mounts: EXDEV
    assert "tests/hard.c" not in {p for p in collected(out / "tests")}

    report = analyse_run(out)
    got = {c["file"]: c["held_out"] for c in report.content_leaks}
    assert got == {
        "tests/ref.c": str(inst / "src" / "rpn.c"),
        "tests/resaved.diff": str(inst / "mutants" / "c01.diff"),
    }  # the spec copy is no leak: the workspace gave it
    assert [leak["path"] for leak in report.leaks] == [str(inst)]  # and the cp named it


def test_content_digests_hold_the_held_out_files_not_the_ones_given(tmp_path: Path) -> None:
    inst = tmp_path / "rpn-c"
    shutil.copytree(INSTANCES_DIR / "rpn-c", inst)
    ws = tmp_path / "ws"
    ws.mkdir()
    shutil.copyfile(inst / "spec.md", ws / "spec.md")
    digests = held_out_digests([inst], ws)
    held = set(digests.values())
    assert str(inst / "src" / "rpn.c") in held
    assert str(inst / "mutants" / "c07.diff") in held
    assert str(inst / "tests" / "test_lines.py") in held
    assert str(inst / "spec.md") not in held  # given to the agent
    # The same text with CRLF line ends and trailing blanks is the same content; a changed
    # character is not; and a few bytes say nothing.
    text = (inst / "src" / "rpn.c").read_bytes()
    assert content_digest(text.replace(b"\n", b"  \r\n") + b"\n\n") in digests
    assert content_digest(text.replace(b"int", b"long", 1)) not in digests
    assert content_digest(b"3\n") is None
