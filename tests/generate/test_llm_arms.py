"""llm-single (Appendix D.2), llm-genval and mixtures against the scripted loopback server."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from suitebench.agents.fakeserver import FakeChatServer
from suitebench.audit.runs import AuditEngine
from suitebench.generate.arms import GenerateOptions, GenerateResult, generate_arm
from suitebench.generate.llm_arms import SYSTEM_MESSAGE, single_call_messages
from suitebench.llm.client import ModelClient

from .conftest import problem, reply


def client(server: FakeChatServer, engine: AuditEngine) -> ModelClient:
    return ModelClient(
        "gpt-4o-mini", base_url=server.base_url, api_key="k", store=engine.store, backoff=0.01
    )


def run_model_arm(
    arm: str, engine: AuditEngine, server: FakeChatServer, out: Path, opts: GenerateOptions
) -> GenerateResult:
    """``arm`` on maxsum with a client of the scripted server, on the engine's store."""
    return generate_arm(arm, problem("maxsum"), engine, out, opts, client=client(server, engine))


def inputs_of(directory: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted(directory.glob("*.in"))]


def test_the_request_is_the_papers_single_call() -> None:
    p = problem("maxsum")
    system, user = single_call_messages(p, 50)
    assert system == {"role": "system", "content": SYSTEM_MESSAGE}
    assert SYSTEM_MESSAGE.startswith("You are generating adversarial TEST DATA")
    text = user["content"]
    assert p.statement is not None
    assert text.startswith("=== PROBLEM STATEMENT ===\n" + p.statement.read_text().strip())
    # the shown reference is the first C++ one, labelled as such
    ref = (p.root / "refs" / "ref3.cpp").read_text().strip()
    assert "=== REFERENCE SOLUTION (trusted oracle, human-accepted, C++) ===\n" + ref in text
    assert 'We compile it with "g++ -O2 -std=c++17"' in text
    assert "at most 60>" in text and "Produce all 50 distinct inputs" in text
    assert text.rstrip().endswith("there is no later turn.")


def test_single_call_sweeps_generators_and_keeps_literal_inputs(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    with FakeChatServer([reply("01-well-formed.txt")]) as server:
        opts = GenerateOptions(budget=14, seed=5, max_calls=1)
        res = run_model_arm("llm-single", engine, server, tmp_path / "o", opts)
    assert len(server.requests) == 1
    sent = server.requests[0]
    assert sent["messages"] == single_call_messages(problem("maxsum"), 14)
    log = res.log
    origins = [i["origin"] for i in log["inputs"]]
    # emission order: the three literal inputs, then the generator's seeds 0.., then the last
    assert origins[:3] == ["call 1 block 1 input", "call 1 block 2 input", "call 1 block 3 input"]
    assert origins[3:13] == [f"call 1 block 4 gen seed {s}" for s in range(10)]
    data = inputs_of(tmp_path / "o")
    assert data[:3] == [b"1\n5\n", b"3\n7 7 1\n", b"2\n1000000000 1000000000\n"]
    assert log["kept"] == 14 and log["usage"]["calls"] == 1
    (comp,) = log["components"]
    assert comp["calls"][0]["generators"] == [12] and comp["programs"][0]["built"]
    assert (tmp_path / "o" / "programs" / "call1-gen4.cpp").is_file()


def test_broken_generators_are_dropped_and_counted(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    script = [reply("05-does-not-compile.txt"), reply("06-prints-nothing.txt")]
    with FakeChatServer(script) as server:
        opts = GenerateOptions(budget=5, seed=1, max_calls=2)
        res = run_model_arm("llm-single", engine, server, tmp_path / "o", opts)
    log = res.log
    assert len(server.requests) == 2  # the first call fell short of the budget: one top-up
    seeds = [r["seed"] for r in server.requests]
    assert len(set(seeds)) == 2  # independent samples, not the same request twice
    programs = log["components"][0]["programs"]
    assert [p["built"] for p in programs] == [False, True]
    assert "error" in programs[0]["message"]
    assert log["dropped"]["empty"] == 4  # the generator that prints nothing, 4 seeds
    assert inputs_of(tmp_path / "o") == [b"2\n-4 -4\n", b"1\n42\n"]
    assert not log["reached_budget"]


def test_a_rerun_is_offline_and_byte_identical(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    with FakeChatServer([reply("02-fenced.txt")]) as server:
        opts = GenerateOptions(budget=6, seed=2, max_calls=1)
        c = client(server, engine)
        generate_arm("llm-single", problem("maxsum"), engine, tmp_path / "a", opts, client=c)
    # the server is gone; the reply comes from the store
    offline = ModelClient("gpt-4o-mini", base_url=server.base_url, store=engine.store)
    res = generate_arm(
        "llm-single", problem("maxsum"), engine, tmp_path / "b", opts, client=offline
    )
    assert inputs_of(tmp_path / "a") == inputs_of(tmp_path / "b") != []
    assert res.log["usage"]["cached_calls"] == 1 and res.log["usage"]["spent_usd"] == 0


def test_reps_are_independent_calls_in_their_own_directories(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    with FakeChatServer([reply("03-prose-around.txt"), reply("04-missing-seeds.txt")]) as server:
        opts = GenerateOptions(budget=3, seed=0, max_calls=1, reps=2)
        res = run_model_arm("llm-single", engine, server, tmp_path / "o", opts)
    assert len(server.requests) == 2
    assert server.requests[0]["seed"] != server.requests[1]["seed"]
    assert inputs_of(tmp_path / "o" / "rep-1") == [
        b"3\n2 9 9\n",
        b"5\n" + b"1000000000 " * 4 + b"-3\n",
        b"2\n4 8\n",
    ]
    assert len(inputs_of(tmp_path / "o" / "rep-2")) == 3
    summary = json.loads((tmp_path / "o" / "generate.json").read_text())
    assert [r["dir"] for r in summary["reps"]] == ["rep-1", "rep-2"]
    assert res.reps[1].log["components"][0]["calls"][0]["parser_notes"]


GENVAL_BAD = """===VALIDATOR===
int main() { return 0 }
===GENERATOR===
#include <cstdio>
int main() { long long s; scanf("%lld", &s); printf("1\\n%lld\\n", s); }
===SEEDS===
3
"""

GENVAL_GOOD = """===VALIDATOR===
#include <cstdio>
// accepts only n = 1 (stricter than the statement): its own rejections are counted
int main() { int n; long long a; if (scanf("%d", &n) != 1 || n != 1) return 1;
  if (scanf("%lld", &a) != 1) return 1; return 0; }
===GENERATOR===
#include <cstdio>
int main() { long long s; scanf("%lld", &s); printf("1\\n%lld\\n", s * 7 - 3); }
===SEEDS===
4
===GENERATOR===
#include <cstdio>
int main() { long long s; scanf("%lld", &s); printf("2\\n%lld %lld\\n", s, s + 1); }
===SEEDS===
2
"""


def test_genval_retries_on_compile_errors_and_applies_its_own_validator(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    with FakeChatServer([GENVAL_BAD, GENVAL_GOOD]) as server:
        opts = GenerateOptions(budget=6, seed=0)
        res = run_model_arm("llm-genval", engine, server, tmp_path / "o", opts)
    assert len(server.requests) == 2
    feedback = server.requests[1]["messages"][-1]["content"]
    assert "did not compile" in feedback and "validator" in feedback
    assert server.requests[1]["messages"][-2] == {"role": "assistant", "content": GENVAL_BAD}
    log = res.log
    assert log["kept"] == 6 and log["dropped"]["own_validator"] >= 2
    for data in inputs_of(tmp_path / "o"):
        assert data.startswith(b"1\n")  # what its own validator lets through
    origins = [i["origin"] for i in log["inputs"]]
    assert origins[:4] == [f"try 2 gen 1 seed {s}" for s in range(4)]
    assert any("(top-up)" in o for o in origins)  # seeds beyond the model's 4 filled the budget
    # the same seed again, the server gone: the same bytes from the store
    offline = ModelClient("gpt-4o-mini", base_url=server.base_url, store=engine.store)
    generate_arm("llm-genval", problem("maxsum"), engine, tmp_path / "p", opts, client=offline)
    assert inputs_of(tmp_path / "o") == inputs_of(tmp_path / "p")


def test_a_mixture_interleaves_its_components_by_position(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    opts = GenerateOptions(budget=9, seed=4, mix=("random", "cc-mutation", "evalplus"))
    res = generate_arm("mixture", problem("maxsum"), engine, tmp_path / "o", opts)
    origins = [i["origin"] for i in res.log["inputs"]]
    assert len(origins) == 9
    for k in range(3):
        assert origins[3 * k].startswith("generator seed")
        assert origins[3 * k + 1].startswith("mutation of")
        assert not origins[3 * k + 2].startswith(("generator", "mutation of"))
    assert [c["arm"] for c in res.log["components"]] == ["random", "cc-mutation", "evalplus"]
    again = generate_arm(
        "mixture", problem("maxsum"), make_engine("b.sqlite"), tmp_path / "p", opts
    )
    assert inputs_of(tmp_path / "o") == inputs_of(tmp_path / "p")
    assert again.log["inputs"] == res.log["inputs"]


def test_the_four_call_mixture_uses_four_independent_samples(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    script = [
        reply(f"0{i}-{n}.txt")
        for i, n in ((1, "well-formed"), (2, "fenced"), (3, "prose-around"), (4, "missing-seeds"))
    ]
    with FakeChatServer(script) as server:
        opts = GenerateOptions(budget=8, seed=0, max_calls=1, mix=("llm-single",) * 4)
        res = run_model_arm("mixture", engine, server, tmp_path / "o", opts)
    assert len(server.requests) == 4
    assert len({r["seed"] for r in server.requests}) == 4
    assert res.log["kept"] == 8 and res.log["usage"]["calls"] == 4
    assert len({c["seed"] for c in res.log["components"]}) == 4
