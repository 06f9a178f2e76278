"""The model client against a scripted OpenAI-compatible server on 127.0.0.1.

Every reply kind a real endpoint produces on a bad day is scripted: 429s with Retry-After,
500s, stalls past the timeout, bodies that are not JSON or not a completion, unknown models,
refused keys, and an address where nothing listens. No test leaves the machine.
"""

from __future__ import annotations

import json
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from suitebench.agents.fakeserver import ISOLATING_ENV, FakeChatServer, Scripted, load_script
from suitebench.llm.client import (
    KIND_CHAT,
    ModelAuthError,
    ModelClient,
    ModelConfigError,
    ModelNotFoundError,
    ModelReplyError,
    ModelRequestError,
    ModelServerError,
    ModelUnreachableError,
)
from suitebench.llm.prices import PriceTable, load_prices
from suitebench.run.store import Store

MESSAGES = [
    {"role": "system", "content": "You write test inputs."},
    {"role": "user", "content": "Give one input for: sum of n integers."},
]


@pytest.fixture(autouse=True)
def _no_proxy_no_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Loopback traffic must not go through a proxy; the caller's model settings must not leak
    into a test."""
    for var in ISOLATING_ENV:
        monkeypatch.delenv(var, raising=False)


@pytest.fixture
def store(tmp_path: Path) -> Iterator[Store]:
    with Store(tmp_path / "store.sqlite") as s:
        yield s


def client_for(server: FakeChatServer, **kw: object) -> ModelClient:
    kw.setdefault("api_key", "test-key")
    kw.setdefault("backoff", 0.01)
    kw.setdefault("timeout", 5.0)
    return ModelClient("gpt-4o-mini", base_url=server.base_url, **kw)


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_a_reply_is_text_with_tokens_and_cost(store: Store) -> None:
    reply_usage = {"prompt_tokens": 1000, "completion_tokens": 2000}
    with FakeChatServer([Scripted(text="3\n1 2 3\n", usage=reply_usage)]) as server:
        client = client_for(server, store=store)
        reply = client.chat(MESSAGES, temperature=0.7, max_tokens=300, seed=11)
    assert reply.text == "3\n1 2 3\n"
    assert (reply.prompt_tokens, reply.completion_tokens) == (1000, 2000)
    # gpt-4o-mini in the bundled table: 0.15 in, 0.60 out per million tokens
    assert reply.cost_usd == pytest.approx((1000 * 0.15 + 2000 * 0.60) / 1e6)
    assert not reply.cached and reply.finish_reason == "stop"
    sent = server.requests[0]
    assert sent["model"] == "gpt-4o-mini" and sent["messages"] == MESSAGES
    assert (sent["temperature"], sent["max_tokens"], sent["seed"]) == (0.7, 300, 11)
    assert client.usage.calls == 1 and client.usage.spent_usd == pytest.approx(reply.cost_usd)


def test_a_rerun_comes_from_the_store_and_works_offline(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with FakeChatServer(["first answer"]) as server, Store(path) as s:
        first = client_for(server, store=s).chat(MESSAGES, seed=1)
        assert first.text == "first answer" and not first.cached
    # A new process-like start: another Store object on the file, no key, nothing listening.
    with Store(path) as s:
        offline = ModelClient(
            "gpt-4o-mini", base_url=f"http://127.0.0.1:{closed_port()}/v1", store=s
        )
        again = offline.chat(MESSAGES, seed=1)
        assert again.text == "first answer" and again.cached
        assert again.cost_usd == first.cost_usd
        assert offline.usage.cached_calls == 1 and offline.usage.spent_usd == 0.0
        assert s.count(KIND_CHAT) == 1
        # A different request is not in the store: the offline client must say why it fails.
        with pytest.raises(ModelConfigError, match="no API key"):
            offline.chat(MESSAGES, seed=2)


def test_every_parameter_is_part_of_the_key(store: Store) -> None:
    with FakeChatServer(
        responder=lambda req: f"seed {req.get('seed')} t {req['temperature']}"
    ) as server:
        client = client_for(server, store=store)
        a = client.chat(MESSAGES, seed=1)
        b = client.chat(MESSAGES, seed=2)
        c = client.chat(MESSAGES, seed=1, temperature=1.0)
        d = client.chat(MESSAGES, seed=1)
        e = client.chat(MESSAGES[:1], seed=1)
    assert [a.cached, b.cached, c.cached, d.cached, e.cached] == [False, False, False, True, False]
    assert d.text == a.text == "seed 1 t 0.0"
    assert len(server.requests) == 4


def test_429_and_500_are_retried_with_backoff(store: Store) -> None:
    script = [
        Scripted(status=429, headers={"retry-after-ms": "300"}, error_message="slow down"),
        Scripted(status=500),
        Scripted(status=503),
        "finally",
    ]
    with FakeChatServer(script) as server:
        client = client_for(server, store=store, max_retries=3)
        t0 = time.monotonic()
        reply = client.chat(MESSAGES)
        elapsed = time.monotonic() - t0
    assert reply.text == "finally"
    assert len(server.requests) == 4 and client.usage.retries == 3
    assert elapsed >= 0.3  # the server's Retry-After was honoured


def test_retries_run_out_with_a_clear_error() -> None:
    with FakeChatServer([Scripted(status=500, error_message="overloaded")] * 3) as server:
        client = client_for(server, max_retries=2)
        with pytest.raises(ModelServerError, match=r"HTTP 500: overloaded, after 3 attempt"):
            client.chat(MESSAGES)
    assert len(server.requests) == 3


def test_a_stall_times_out_and_is_retried() -> None:
    with FakeChatServer([Scripted(delay=5.0, text="too late"), "in time"]) as server:
        client = client_for(server, timeout=0.3, max_retries=1)
        t0 = time.monotonic()
        assert client.chat(MESSAGES).text == "in time"
        assert time.monotonic() - t0 < 4.0
    with FakeChatServer([Scripted(delay=5.0, text="late")] * 2) as server:
        client = client_for(server, timeout=0.3, max_retries=1)
        with pytest.raises(ModelUnreachableError, match=r"no reply within 0.3 s, after 2"):
            client.chat(MESSAGES)


def test_an_unreachable_endpoint_names_the_address() -> None:
    url = f"http://127.0.0.1:{closed_port()}/v1"
    client = ModelClient("m", base_url=url, api_key="k", max_retries=1, backoff=0.01)
    with pytest.raises(ModelUnreachableError, match="cannot connect") as info:
        client.chat(MESSAGES)
    assert url in str(info.value) and "after 2 attempt" in str(info.value)


@pytest.mark.parametrize(
    "body",
    [
        "this is not json {",
        json.dumps({"choices": []}),
        json.dumps({"choices": [{"index": 0}]}),
        json.dumps([1, 2]),
        json.dumps({"choices": [{"message": {"content": 5}}]}),
        json.dumps({"choices": [{"message": {"content": "x"}}], "usage": {"prompt_tokens": -1}}),
    ],
)
def test_a_reply_of_the_wrong_shape_is_a_reply_error(store: Store, body: str) -> None:
    with FakeChatServer([Scripted(body=body)]) as server:
        client = client_for(server, store=store)
        with pytest.raises(ModelReplyError, match=server.base_url):
            client.chat(MESSAGES)
    assert len(store) == 0  # nothing malformed is cached


def test_unknown_model_refused_key_and_bad_request() -> None:
    with (
        FakeChatServer(["hi"], models=["served-model"]) as server,
        pytest.raises(ModelNotFoundError, match="does not exist"),
    ):
        client_for(server).chat(MESSAGES)
    with FakeChatServer(["hi"], api_key="right") as server:
        with pytest.raises(ModelAuthError, match="refused the API key"):
            client_for(server, api_key="wrong").chat(MESSAGES)
        assert client_for(server, api_key="right").chat(MESSAGES).text == "hi"
    with FakeChatServer([Scripted(status=400, error_message="max_tokens too large")]) as server:
        with pytest.raises(ModelRequestError, match="max_tokens too large"):
            client_for(server, max_retries=3).chat(MESSAGES)
        assert len(server.requests) == 1  # a 400 is not retried


def test_missing_model_key_or_bad_address_fail_before_sending() -> None:
    with pytest.raises(ModelConfigError, match="no model"):
        ModelClient("")
    with pytest.raises(ModelConfigError, match="http"):
        ModelClient("m", base_url="127.0.0.1:8000")
    client = ModelClient("m", base_url="http://127.0.0.1:9/v1")
    with pytest.raises(ModelConfigError, match="OPENAI_API_KEY"):
        client.chat(MESSAGES)
    # a loopback address even here: a bad message must fail before sending, and if it did not,
    # nothing hosted may be reached
    nowhere = f"http://127.0.0.1:{closed_port()}/v1"
    with pytest.raises(ModelConfigError, match="message 0"):
        ModelClient("m", base_url=nowhere, api_key="k").chat([{"role": "user"}])


def test_from_env_reads_the_sdk_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    with FakeChatServer(["from env"]) as server:
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", "env-key")
        monkeypatch.setenv("SUITEBENCH_MODEL", "env-model")
        client = ModelClient.from_env(backoff=0.01)
        assert (client.model, client.base_url, client.api_key) == (
            "env-model",
            server.base_url,
            "env-key",
        )
        assert client.chat(MESSAGES).text == "from env"
        assert ModelClient.from_env("explicit").model == "explicit"


def test_prices_are_extensible_and_unknown_models_have_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    table = load_prices()
    assert table.lookup("gpt-4o-2024-08-06") == table.lookup("gpt-4o")
    assert table.lookup("gpt-4o-mini-2024-07-18") == table.lookup("gpt-4o-mini")
    assert table.lookup("openai/gpt-4.1") == table.lookup("gpt-4.1")
    assert table.cost("local-llama", 10, 10) is None
    mine = tmp_path / "prices.toml"
    mine.write_text('[models."local-llama"]\ninput = 1.0\noutput = 3\n')
    assert load_prices(mine).cost("local-llama", 10**6, 10**6) == pytest.approx(4.0)
    monkeypatch.setenv("SUITEBENCH_PRICES", str(mine))
    assert load_prices().cost("local-llama", 2 * 10**6, 0) == pytest.approx(2.0)
    with FakeChatServer(["x"]) as server:
        client = ModelClient("local-llama", base_url=server.base_url, api_key="k")
        client.prices = PriceTable()
        reply = client.chat(MESSAGES)
        assert reply.cost_usd is None and client.usage.unpriced == 1


def test_totals_with_an_unpriced_reply_are_unknown_not_zero(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite"
    with FakeChatServer(["a", "b"]) as server, Store(path) as s:
        client = ModelClient("local-llama", base_url=server.base_url, api_key="k", store=s)
        client.chat(MESSAGES, seed=1)
        client.chat(MESSAGES, seed=2)
        totals = client.usage.to_dict()
    assert (totals["calls"], totals["unpriced_calls"]) == (2, 2)
    assert totals["cost_usd"] is None and totals["spent_usd"] is None
    with Store(path) as s:  # the same requests again: from the store, nothing spent now
        again = ModelClient("local-llama", base_url="http://127.0.0.1:9/v1", store=s)
        again.chat(MESSAGES, seed=1)
        totals = again.usage.to_dict()
    assert totals["cost_usd"] is None and totals["spent_usd"] == 0.0


def test_each_retry_is_reported_as_it_happens(capsys: pytest.CaptureFixture[str]) -> None:
    script = [Scripted(status=500), Scripted(delay=5.0, text="late"), "in time"]
    lines: list[str] = []
    with FakeChatServer(script) as server:
        client = client_for(server, timeout=0.3, max_retries=2, on_retry=lines.append)
        assert client.chat(MESSAGES).text == "in time"
    assert lines == [
        "model call failed (HTTP 500), retry 1/2",
        "model call failed (timeout after 0.3 s), retry 2/2",
    ]
    assert capsys.readouterr().err == ""  # given a callback, nothing else is printed
    with FakeChatServer([Scripted(status=503), "ok"]) as server:
        assert client_for(server, max_retries=1).chat(MESSAGES).text == "ok"
    assert capsys.readouterr().err == "model call failed (HTTP 503), retry 1/1\n"


@pytest.mark.parametrize(
    ("text", "field"),
    [
        ('[models."m"]\ninput = 1\n', "models.m"),
        ('[models."m"]\ninput = -1\noutput = 1\n', "models.m.input"),
        ('[models."m"]\ninput = "cheap"\noutput = 1\n', "models.m.input"),
        ("[other]\n", "other"),
        ("[models\n", "(syntax)"),
    ],
)
def test_a_bad_price_file_names_the_field(tmp_path: Path, text: str, field: str) -> None:
    from suitebench.model.errors import FormatError

    f = tmp_path / "p.toml"
    f.write_text(text)
    with pytest.raises(FormatError) as info:
        load_prices(f)
    assert info.value.field == field and str(f) in str(info.value)


def test_script_from_files(tmp_path: Path) -> None:
    (tmp_path / "01.json").write_text(json.dumps({"status": 429, "headers": {"retry-after": "0"}}))
    (tmp_path / "02.json").write_text(json.dumps({"body": "{broken"}))
    (tmp_path / "03.txt").write_text("===INPUT===\n1\n7\n")
    script = load_script(tmp_path)
    with FakeChatServer(script) as server:
        client = client_for(server, max_retries=1)
        with pytest.raises(ModelReplyError, match="not JSON"):
            client.chat(MESSAGES)  # 429, retried, then the broken body
        assert client.chat(MESSAGES, seed=3).text == "===INPUT===\n1\n7\n"
    (tmp_path / "04.json").write_text(json.dumps({"colour": "red"}))
    from suitebench.model.errors import FormatError

    with pytest.raises(FormatError, match="colour"):
        load_script(tmp_path)
