"""An agent run's model usage as the endpoint saw it: the gateway counts the calls it relayed
and that were answered, so a run stopped at its time limit is not undercounted, and an
unpriced model's cost is unknown, not zero.

The model is the scripted server on 127.0.0.1, reached over real HTTP through the gateway.
"""

from __future__ import annotations

import json
import shutil
import textwrap
from pathlib import Path

import httpx2
import openai
import pytest

from suitebench.agents.fakeserver import FakeChatServer
from suitebench.agents.gateway import Endpoint, ModelGateway, _CallCounter
from suitebench.agents.harness import AgentSpec, RunOptions, run_agent
from suitebench.agents.scoring import ScoreContext
from suitebench.agents.trajectory import read_usage
from suitebench.data import INSTANCES_DIR
from suitebench.llm.prices import PRICES_ENV, load_prices

MESSAGES = [{"role": "user", "content": "one test input, please"}]


def test_the_gateway_counts_the_answered_model_calls_on_a_kept_alive_connection() -> None:
    with (
        FakeChatServer(["one", "two", "three"]) as server,
        ModelGateway(Endpoint.parse(server.base_url)) as gw,
    ):
        http = httpx2.Client(transport=httpx2.HTTPTransport(uds=str(gw.socket_path)))
        sdk = openai.OpenAI(api_key="k", base_url=server.base_url, http_client=http, max_retries=0)
        texts = [
            sdk.chat.completions.create(model="m", messages=MESSAGES).choices[0].message.content  # type: ignore[arg-type]
            for _ in range(3)
        ]
        sdk.models.list()  # a GET: not a model call
        http.close()
        stats = gw.stats.to_dict()
        served = server.served
    assert texts == ["one", "two", "three"]
    assert served == 3 and stats["model_calls"] == 3
    assert stats["connections"] == 1  # all four requests on one connection


def test_requests_and_answers_are_framed_whatever_the_bodies_hold() -> None:
    sent = (
        b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: 28\r\n\r\n"
        + b'{"x": "GET / HTTP/1.1 yes"} '
        + b"GET /v1/models HTTP/1.1\r\nHost: h\r\n\r\n"
        + b"POST /v1/messages HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"3\r\nabc\r\n0\r\n\r\n"
        + b"POST /v1/responses HTTP/1.1\r\nContent-Length: 2\r\n\r\n{}"
    )
    answers = (
        b"HTTP/1.1 100 Continue\r\n\r\n"
        + b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
        + b"13\r\nHTTP/1.1 200 OK\r\n\r\n\r\n0\r\n\r\n"
        + b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n[]"
        + b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\n\r\n"
    )
    counter = _CallCounter()
    for i in range(len(sent)):  # byte by byte: heads and chunks split everywhere
        counter.sent(sent[i : i + 1])
    answered = sum(counter.answered(answers[i : i + 1]) for i in range(len(answers)))
    # three answers came back: the first POST's (chunked), the GET's and the second POST's;
    # the third POST is still waiting
    assert answered == 2
    assert list(counter.methods) == ["POST"]


def write_agent(home: Path, name: str, text: str) -> Path:
    path = home / "agents" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def test_model_calls_of_a_run_stopped_at_its_limit_are_the_calls_served(
    home: Path, ctx: ScoreContext
) -> None:
    inst = home / "data" / "rpn-c"
    shutil.copytree(INSTANCES_DIR / "rpn-c", inst)
    # Three model calls, then the agent works on until the time limit stops it.
    agent = write_agent(
        home,
        "three_calls.py",
        """\
        import json, os, time, urllib.request

        url = os.environ["OPENAI_BASE_URL"] + "/chat/completions"
        for n in range(3):
            body = json.dumps({"model": "m", "messages": [{"role": "user", "content": str(n)}]})
            request = urllib.request.Request(
                url, body.encode(), {"Content-Type": "application/json"}
            )
            urllib.request.urlopen(request, timeout=20).read()
            open("calls.txt", "a").write(f"call {n + 1}\\n")
        time.sleep(1000)
        """,
    )
    with FakeChatServer(["a", "b", "c"]) as server:
        spec = AgentSpec(command=f"python3 {agent}", endpoint=server.base_url)
        out = home / "runs" / "stopped"
        record = run_agent("suite", inst, spec, out, RunOptions(time_limit=8), ctx)
        served = server.served
    assert record["stopped_by_limit"] is True
    calls = (out / "workspace" / "calls.txt").read_text().splitlines()
    assert calls == ["call 1", "call 2", "call 3"] and served == 3
    assert record["model_calls"] == 3 and record["gateway"]["model_calls"] == 3
    assert json.loads((out / "agent.json").read_text())["model_calls"] == 3


FINISH = (
    "THOUGHT: done.\n\n```mswea_bash_command\necho COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT\n```\n"
)


def write_trajectory(run_dir: Path, model: str, instance_cost: float) -> Path:
    """A mini-swe-agent trajectory as it saves one: two answered calls, its own cost figure."""
    usage = {"prompt_tokens": 1500, "completion_tokens": 250}
    data = {
        "info": {
            "model_stats": {"instance_cost": instance_cost, "api_calls": 2},
            "config": {"model": {"model_name": model}},
        },
        "messages": [{"role": "assistant", "extra": {"response": {"usage": usage}}}] * 2,
    }
    run_dir.mkdir(parents=True, exist_ok=True)
    (run_dir / "trajectory.json").write_text(json.dumps(data))
    return run_dir


def test_an_agents_reported_zero_cost_is_unknown_unless_the_price_table_knows_the_model(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv(PRICES_ENV, raising=False)
    tokens = {"input": 3000, "output": 500}
    unpriced = read_usage("mini-swe-agent", write_trajectory(tmp_path / "a", "openai/local", 0.0))
    assert unpriced == {"tokens": tokens, "cost_usd": None, "model_calls": 2}
    # litellm knew a price the table does not: the agent's own non-zero figure stands
    known = read_usage("mini-swe-agent", write_trajectory(tmp_path / "b", "openai/local", 0.25))
    assert known["cost_usd"] == 0.25
    # the table prices gpt-4o: its prices, the ones `generate` uses, whatever the agent said
    price = load_prices().lookup("gpt-4o")
    assert price is not None
    want = (3000 * price.input + 500 * price.output) / 1e6
    for n, reported in enumerate((0.0, 9.99)):
        run = write_trajectory(tmp_path / f"c{n}", "openai/gpt-4o", reported)
        assert read_usage("mini-swe-agent", run)["cost_usd"] == pytest.approx(want)
    # a user's price file prices a local model (at zero: then it is free, and known to be)
    prices = tmp_path / "prices.toml"
    prices.write_text('[models."local"]\ninput = 0\noutput = 0\n')
    monkeypatch.setenv(PRICES_ENV, str(prices))
    assert read_usage("mini-swe-agent", tmp_path / "a")["cost_usd"] == 0.0
    # OpenCode sums each step's cost, zero for a model it cannot price
    (tmp_path / "o").mkdir()
    step = {"type": "step_finish", "part": {"tokens": {"input": 7, "output": 1}, "cost": 0}}
    (tmp_path / "o" / "transcript.txt").write_text(json.dumps(step) + "\n")
    assert read_usage("opencode", tmp_path / "o")["cost_usd"] is None


@pytest.mark.slow
def test_an_unpriced_models_cost_in_an_agent_run_is_null(home: Path, ctx: ScoreContext) -> None:
    inst = home / "data" / "rpn-c"
    shutil.copytree(INSTANCES_DIR / "rpn-c", inst)
    with FakeChatServer([FINISH], api_key="sk-test") as server:
        spec = AgentSpec(
            preset="mini-swe-agent",
            model="unpriced-local-model",
            endpoint=server.base_url,
            api_key="sk-test",
        )
        out = home / "runs" / "unpriced"
        record = run_agent("suite", inst, spec, out, RunOptions(time_limit=300), ctx)
    assert record["status"] == "ok", (out / "transcript.txt").read_text()[-2000:]
    assert record["model_calls"] == 1 and record["tokens"]["input"] > 0
    assert record["cost_usd"] is None
