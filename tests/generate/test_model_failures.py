"""When the model side goes wrong, ``generate`` still says what it knows: an unknown cost is
``null``, a failed call keeps what earlier calls gave and a rerun resumes, a hanging endpoint
is reported within minutes with every retry printed, and a call that gave nothing says why.

Every model call goes to a scripted server on 127.0.0.1 over real HTTP; the command-line tests
run ``suitebench`` as a separate process on a store in the test's directory.
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from suitebench.agents.fakeserver import FakeChatServer, Scripted
from suitebench.audit.runs import AuditEngine
from suitebench.generate.arms import GenerateOptions, generate_arm
from suitebench.llm.client import ModelClient

from .conftest import problem, reply
from .test_cli_generate import MAXSUM, run_cli

PROSE_ONLY = (
    "Good tests for this problem would include a single element, all negative values and\n"
    "the largest allowed values. Let me know if you would like me to write them out!\n"
)
# A generator that compiles but does not link: g++'s last line is collect2's "ld returned 1
# exit status", the cause is the linker's "undefined reference to `main'".
NO_MAIN = "===GENERATOR===\nint helper(int x) { return x + 1; }\n===SEEDS===\n5\n"


def log_of(directory: Path) -> dict[str, Any]:
    data = json.loads((directory / "generate.json").read_text())
    assert isinstance(data, dict)
    return data


def inputs_of(directory: Path) -> list[bytes]:
    return [p.read_bytes() for p in sorted(directory.glob("*.in"))]


def test_an_unpriced_models_cost_is_null_not_zero(tmp_path: Path) -> None:
    args = "--budget 3 --model local-llama --max-calls 1 --out a"
    with FakeChatServer([reply("01-well-formed.txt")]) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
        done = run_cli(tmp_path, "generate llm-single", MAXSUM, args, env=env)
    assert done.returncode == 0, done.stderr
    log = log_of(tmp_path / "a")
    usage = log["usage"]
    assert isinstance(usage, dict)
    assert usage["calls"] == 1 and usage["unpriced_calls"] == 1
    assert usage["cost_usd"] is None and usage["spent_usd"] is None
    (component,) = log["components"]
    assert component["calls"][0]["cost_usd"] is None
    assert "cost unknown" in done.stdout


def test_a_failed_call_keeps_what_was_kept_and_a_rerun_resumes(tmp_path: Path) -> None:
    # Call 1 yields one legal input (its generator prints nothing); call 2 gets a 500 on
    # every one of its 1 + 2 attempts.
    script = [reply("06-prints-nothing.txt")] + [Scripted(status=500, error_message="down")] * 3
    args = "--budget 5 --model m --max-calls 3 --retries 2 --out a"
    with FakeChatServer(script) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
        done = run_cli(tmp_path, "generate llm-single", MAXSUM, args, env=env)
        first = list(server.requests)
    assert done.returncode == 1, done.stderr
    assert len(first) == 4  # call 1, then call 2 three times
    call1_seed, call2_seed = first[0]["seed"], first[1]["seed"]
    assert {r["seed"] for r in first[1:]} == {call2_seed} != {call1_seed}
    assert inputs_of(tmp_path / "a") == [b"1\n42\n"]
    log = log_of(tmp_path / "a")
    errors = log["model_errors"]
    assert isinstance(errors, list) and len(errors) == 1
    assert errors[0].startswith("call 2 failed:") and "HTTP 500: down, after 3 attempt" in errors[0]
    assert log["kept"] == 1 and log["reached_budget"] is False
    assert "model call failed (HTTP 500), retry 1/2" in done.stderr
    assert "model call failed (HTTP 500), retry 2/2" in done.stderr
    assert "model error: call 2 failed" in done.stderr
    assert "llm-single on maxsum: 1/5 legal inputs kept" in done.stdout

    # The endpoint is back: call 1 comes from the store, only call 2 is asked again.
    with FakeChatServer([reply("01-well-formed.txt")]) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
        again = run_cli(tmp_path, "generate llm-single", MAXSUM, args, env=env)
        second = list(server.requests)
    assert again.returncode == 0, again.stderr
    assert [r["seed"] for r in second] == [call2_seed]
    resumed = inputs_of(tmp_path / "a")
    assert resumed[0] == b"1\n42\n" and resumed[1:4] == [
        b"1\n5\n",
        b"3\n7 7 1\n",
        b"2\n1000000000 1000000000\n",
    ]
    assert len(resumed) == 5 and log_of(tmp_path / "a")["model_errors"] == []
    usage = log_of(tmp_path / "a")["usage"]
    assert isinstance(usage, dict) and (usage["calls"], usage["cached_calls"]) == (2, 1)


def test_a_hanging_endpoint_is_reported_in_bounded_time_with_each_retry(tmp_path: Path) -> None:
    # The server accepts every request and never answers (until it is closed).
    with FakeChatServer([Scripted(delay=3600, text="never")] * 5) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
        args = "--budget 3 --model m --timeout 0.5 --out a"
        t0 = time.monotonic()
        done = run_cli(tmp_path, "generate llm-single", MAXSUM, args, env=env)
        elapsed = time.monotonic() - t0
        served = len(server.requests)
    assert done.returncode == 1, done.stderr
    # default retries: 3 attempts of 0.5 s and 1 s + 2 s of backoff, plus start-up
    assert served == 3 and elapsed < 60
    lines = done.stderr.splitlines()
    retries = [ln.strip() for ln in lines if "model call failed" in ln]
    assert retries == [
        "model call failed (timeout after 0.5 s), retry 1/2",
        "model call failed (timeout after 0.5 s), retry 2/2",
    ]
    assert "no reply within 0.5 s, after 3 attempt(s)" in done.stderr
    assert log_of(tmp_path / "a")["kept"] == 0


def test_the_default_wait_on_a_dead_endpoint_is_minutes_not_half_an_hour() -> None:
    client = ModelClient("m", base_url="http://127.0.0.1:9/v1")
    attempts = client.max_retries + 1
    backoff = sum(client.backoff * 2**k for k in range(client.max_retries))
    assert (client.timeout, client.max_retries) == (60.0, 2)
    assert client.timeout * attempts + backoff <= 4 * 60


def test_a_prose_only_reply_says_why_nothing_was_kept(tmp_path: Path) -> None:
    with FakeChatServer([PROSE_ONLY]) as server:
        env = {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "k"}
        args = "--budget 10 --model m --max-calls 1 --out a"
        done = run_cli(tmp_path, "generate llm-single", MAXSUM, args, env=env)
    assert done.returncode == 0, done.stderr
    assert "0/10 legal inputs kept, 0 tried" in done.stdout
    why = "call 1: no input blocks in the reply (the reply is prose only)"
    assert why in done.stdout
    assert log_of(tmp_path / "a")["notes"] == [why]


def gxx_first_error(source: str, name: str, directory: Path) -> str:
    """What g++ itself says first when building ``source`` as ``name``.cpp (the oracle)."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.cpp").write_text(source)
    done = subprocess.run(
        ["g++", "-O2", "-std=c++17", "-o", "executable", f"{name}.cpp"],
        cwd=directory,
        capture_output=True,
        text=True,
        env={"PATH": "/usr/bin:/bin", "LC_ALL": "C.UTF-8"},
    )
    assert done.returncode != 0
    return done.stderr


def test_a_generator_that_does_not_build_is_counted_with_the_compilers_error(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    engine = make_engine()
    with FakeChatServer([reply("05-does-not-compile.txt"), NO_MAIN]) as server:
        client = ModelClient("m", base_url=server.base_url, api_key="k", store=engine.store)
        opts = GenerateOptions(budget=5, seed=0, max_calls=2)
        res = generate_arm(
            "llm-single", problem("maxsum"), engine, tmp_path / "o", opts, client=client
        )
    log = res.log
    assert len(server.requests) == 2
    # call 1: a generator (8 seeds) that does not compile, then one literal input;
    # call 2: a generator that does not link
    assert log["dropped"] == {"generator_failed": 2}
    assert log["tried"] == log["kept"] + 2 + log["beyond_budget"] == 3
    assert inputs_of(tmp_path / "o") == [b"2\n-4 -4\n"]
    drops = {d["origin"]: d["detail"] for d in log["drops"]}
    assert set(drops) == {"call 1 block 1 gen", "call 2 block 1 gen"}

    code = reply("05-does-not-compile.txt").split("===SEEDS===")[0].split("===GENERATOR===\n")[1]
    said = gxx_first_error(code, "call1-gen1", tmp_path / "gxx")
    first = next(ln.strip() for ln in said.splitlines() if "error:" in ln)
    assert first.startswith("call1-gen1.cpp:4:") and "expected" in first
    assert drops["call 1 block 1 gen"] == f"did not build (8 seeds not run): {first}"

    linked = gxx_first_error(NO_MAIN.split("\n", 1)[1].split("===SEEDS===")[0], "x", tmp_path / "l")
    assert "ld returned 1 exit status" in linked.splitlines()[-1]
    assert "undefined reference to `main'" in drops["call 2 block 1 gen"]
    assert "ld returned" not in drops["call 2 block 1 gen"]
    programs = log["components"][0]["programs"]
    assert [p["error"] for p in programs] == [first, drops["call 2 block 1 gen"].split(": ", 1)[1]]
    assert log["notes"] == [
        f"call 1 block 1: the generator did not build: {first}",
        f"call 2 block 1: the generator did not build: {programs[1]['error']}",
    ]
