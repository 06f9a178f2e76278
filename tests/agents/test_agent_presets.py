"""The command, environment and transcript format each agent preset builds; and a preset run
through the harness with a stand-in program on PATH that speaks the vendor's stream format."""

from __future__ import annotations

import json
import shutil
import stat
import sys
import textwrap
from pathlib import Path

import pytest

from suitebench.agents.gateway import Endpoint
from suitebench.agents.harness import AgentSpec, RunOptions, run_agent
from suitebench.agents.presets import (
    PRESETS,
    TRAJECTORY,
    PresetContext,
    PresetError,
    preset_command,
    resolve_program,
)
from suitebench.agents.scoring import ScoreContext
from suitebench.agents.trajectory import analyse_run
from suitebench.data import INSTANCES_DIR

from ..cli_helpers import run_suitebench

BRIEF = "# Test-suite task -- demo\n\nWrite tests.\n"
LOCAL = Endpoint.parse("http://127.0.0.1:8123/v1")
REMOTE = Endpoint.parse("https://api.vendor.test/v1")


def ctx_for(endpoint: Endpoint | None, model: str | None = "m-1") -> PresetContext:
    return PresetContext(BRIEF, model, endpoint, "sk-123", 600.0)


def test_mini_swe_agent_preset_runs_text_based_mode_against_the_endpoint() -> None:
    cmd = preset_command("mini-swe-agent", ctx_for(LOCAL))
    argv = cmd.argv
    assert Path(argv[0]).name == "mini"
    assert argv[argv.index("-m") + 1] == "openai/m-1"
    assert argv[argv.index("-t") + 1] == BRIEF  # mini reads no AGENTS.md: the brief is its task
    assert {"-y", "--exit-immediately"} <= set(argv)
    assert argv[argv.index("--cost-limit") + 1] == "0"
    assert argv[argv.index("-o") + 1] == TRAJECTORY
    assert "mini_textbased.yaml" in argv and "model.model_class=litellm_textbased" in argv
    assert cmd.env["OPENAI_BASE_URL"] == "http://127.0.0.1:8123/v1"
    assert cmd.env["OPENAI_API_KEY"] == "sk-123"
    assert cmd.env["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
    assert cmd.env["MSWEA_CONFIGURED"] == "true"
    assert cmd.env["MSWEA_COST_TRACKING"] == "ignore_errors"
    assert cmd.transcript_format == "mini-swe-agent"


def test_claude_code_preset_reads_claude_md_and_streams_json() -> None:
    cmd = preset_command("claude-code", ctx_for(LOCAL))
    assert cmd.argv[:2] == ["claude", "-p"]
    assert "CLAUDE.md" in cmd.argv[2]
    assert cmd.argv[cmd.argv.index("--output-format") + 1] == "stream-json"
    assert "--dangerously-skip-permissions" in cmd.argv
    assert cmd.argv[cmd.argv.index("--model") + 1] == "m-1"
    assert cmd.env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:8123/v1"
    assert cmd.env["ANTHROPIC_API_KEY"] == "sk-123"
    assert cmd.env["CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC"] == "1"
    assert "HTTPS_PROXY" not in cmd.env
    remote = preset_command("claude-code", ctx_for(REMOTE))
    assert "ANTHROPIC_BASE_URL" not in remote.env  # the vendor's own URL, through the proxy
    assert remote.env["HTTPS_PROXY"] == "http://127.0.0.1:3128"
    assert remote.env["NO_PROXY"] == ""


def test_codex_preset_execs_non_interactively_with_json_events() -> None:
    cmd = preset_command("codex", ctx_for(LOCAL))
    assert cmd.argv[:3] == ["codex", "exec", "--json"]
    assert "--skip-git-repo-check" in cmd.argv
    assert "--dangerously-bypass-approvals-and-sandbox" in cmd.argv
    assert cmd.argv[cmd.argv.index("-m") + 1] == "m-1"
    assert "AGENTS.md" in cmd.argv[-1]
    assert cmd.env["OPENAI_BASE_URL"] == "http://127.0.0.1:8123/v1"
    assert cmd.env["OPENAI_API_KEY"] == "sk-123"
    assert cmd.env["CODEX_HOME"].startswith("/tmp/")  # the sandbox's private, writable /tmp
    assert cmd.transcript_format == "codex"


def test_opencode_preset_configures_an_openai_compatible_provider_inline() -> None:
    cmd = preset_command("opencode", ctx_for(LOCAL))
    assert cmd.argv[:4] == ["opencode", "run", "--format", "json"]
    assert cmd.argv[cmd.argv.index("-m") + 1] == "suitebench/m-1"
    config = json.loads(cmd.env["OPENCODE_CONFIG_CONTENT"])
    provider = config["provider"]["suitebench"]
    assert provider["options"]["baseURL"] == "http://127.0.0.1:8123/v1"
    assert "m-1" in provider["models"]
    assert config["autoupdate"] is False


@pytest.mark.parametrize("name", sorted(PRESETS))
def test_every_preset_needs_a_model_and_an_endpoint(name: str) -> None:
    with pytest.raises(PresetError, match="--model and --endpoint"):
        preset_command(name, ctx_for(None))
    with pytest.raises(PresetError, match="--model and --endpoint"):
        preset_command(name, ctx_for(LOCAL, model=None))


def test_unknown_preset_and_missing_program_name_what_to_do(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    with pytest.raises(PresetError, match="known: mini-swe-agent, claude-code, codex, opencode"):
        preset_command("aider", ctx_for(LOCAL))
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(PresetError, match="npm install -g @openai/codex"):
        resolve_program(preset_command("codex", ctx_for(LOCAL)))


FAKE_CLAUDE = textwrap.dedent(
    """\
    #!{python}
    # A stand-in for `claude -p ... --output-format stream-json`: does the work, prints events.
    import json, os, pathlib, sys
    assert "--output-format" in sys.argv and os.path.exists("CLAUDE.md")
    def emit(obj):
        print(json.dumps(obj), flush=True)
    emit({{"type": "system", "subtype": "init", "model": sys.argv[sys.argv.index("--model") + 1]}})
    def tool(name, **args):
        emit({{"type": "assistant", "message": {{"content": [
            {{"type": "tool_use", "id": "t", "name": name, "input": args}}]}}}})
    tool("Read", file_path=os.path.abspath("spec.md"))
    tool("Grep", pattern="Operators", path=".")
    test = "def test_truth():\\n    assert True\\n"
    pathlib.Path("tests/test_claude.py").write_text(test)
    tool("Write", file_path=os.path.abspath("tests/test_claude.py"), content=test)
    tool("Bash", command="python -m pytest -q tests")
    tool("Bash", command="mkdir -p mutants && cp spec.md mutants/m1.md")
    emit({{"type": "result", "subtype": "success", "num_turns": 6, "total_cost_usd": 0.0123,
          "usage": {{"input_tokens": 1500, "output_tokens": 230}},
          "base_url": os.environ.get("ANTHROPIC_BASE_URL")}})
    """
)


def test_claude_code_preset_through_the_harness_reads_usage_and_actions(
    home: Path, ctx: ScoreContext, monkeypatch: pytest.MonkeyPatch
) -> None:
    bin_dir = home / "vendor" / "bin"
    bin_dir.mkdir(parents=True)
    claude = bin_dir / "claude"
    claude.write_text(FAKE_CLAUDE.format(python=sys.executable))
    claude.chmod(claude.stat().st_mode | stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin")
    inst = home / "data" / "rpn-c"
    shutil.copytree(INSTANCES_DIR / "rpn-c", inst)
    spec = AgentSpec(
        preset="claude-code", model="m-1", endpoint="http://127.0.0.1:9/v1", api_key="k"
    )
    out = home / "runs" / "claude"
    record = run_agent("suite", inst, spec, out, RunOptions(time_limit=60), ctx)
    assert record["status"] == "ok", (out / "transcript.stderr.txt").read_text()
    assert record["transcript_format"] == "claude-code"
    assert record["tokens"] == {"input": 1500, "output": 230}
    assert record["cost_usd"] == pytest.approx(0.0123)
    # The fake agent writes 6 calls in its transcript but asks no server: the gateway, which
    # relays every model call of a contained agent, relayed none, and its count is the record.
    assert record["model_calls"] == 0
    last = json.loads((out / "transcript.txt").read_text().splitlines()[-1])
    # Port 9 cannot be bound by the agent's uid: the relay listens on another loopback port.
    assert last["base_url"] == "http://127.0.0.1:18080/v1"
    report = analyse_run(out)
    assert report.classes == {"read": 1, "search": 1, "write": 2, "execute": 1, "other": 0}
    assert report.mutant_attempt and not report.executable_attempt
    assert record["score"]["tests"] == 1


def test_cli_rejects_a_bad_agent_before_preparing_anything(tmp_path: Path) -> None:
    inst = tmp_path / "rpn-c"
    shutil.copytree(INSTANCES_DIR / "rpn-c", inst)
    cases = [
        (["--agent", "aider"], "unknown agent preset 'aider'"),
        (["--agent", "mini-swe-agent"], "needs --model and --endpoint"),
        (["--agent", "codex", "--model", "m", "--endpoint", "ftp://x"], "expected http://"),
        (["--agent", "codex", "--agent-cmd", "true"], "exactly one of --agent"),
    ]
    for extra, message in cases:
        out = tmp_path / "out"
        res = run_suitebench(
            "agent", "run", "suite", inst, *extra, "--out", out,
            store=tmp_path / "s.sqlite", timeout=120, cwd=tmp_path,
        )  # fmt: skip
        assert res.returncode == 2, res.stderr
        assert message in " ".join(res.stderr.split()), res.stderr
        assert not out.exists()
