"""Agent presets: how each coding agent is started in a workspace, and how its transcript reads.

A preset turns a :class:`PresetContext` (the brief, the model, the endpoint as seen from inside
the sandbox, the key) into an :class:`AgentCommand`: argv, environment, where its trajectory
file lands, which transcript format to parse. Presets live in one registry, :data:`PRESETS`, so
adding an agent is one function.

``mini-swe-agent`` is the preset exercised end to end (text-based mode against any
OpenAI-compatible endpoint); the Claude Code, Codex CLI and OpenCode presets build the commands
their vendors document for non-interactive runs; they need their vendors' APIs.
"""

from __future__ import annotations

import json
import shutil
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from suitebench.agents.gateway import Endpoint
from suitebench.agents.workspace import AGENT_DIR

TRAJECTORY = f"{AGENT_DIR}/trajectory.json"
RUN_PROMPT = (
    "Read AGENTS.md in the current directory and carry out the task it describes, "
    "working only in the current directory."
)


class PresetError(ValueError):
    """An unknown preset or one that cannot run here (names it and what is missing)."""


@dataclass(frozen=True)
class PresetContext:
    brief: str
    model: str | None
    endpoint: Endpoint | None
    api_key: str | None
    time_limit: float


@dataclass(frozen=True)
class AgentCommand:
    """What the harness starts inside the sandbox."""

    argv: list[str]
    env: dict[str, str] = field(default_factory=dict)
    transcript_format: str = "text"  # how trajectories.py reads the transcript
    trajectory_file: str | None = None  # relative to the workspace; moved out after the run
    install_hint: str = ""


def _proxy_env(ctx: PresetContext) -> dict[str, str]:
    """https endpoints go through the gateway's CONNECT proxy inside the sandbox."""
    if ctx.endpoint is None or ctx.endpoint.scheme != "https":
        return {}
    proxy = f"http://127.0.0.1:{ctx.endpoint.inner_port}"
    return {"HTTPS_PROXY": proxy, "https_proxy": proxy, "NO_PROXY": "", "no_proxy": ""}


def _need_model(ctx: PresetContext, preset: str) -> tuple[str, Endpoint]:
    if ctx.endpoint is None or not ctx.model:
        raise PresetError(f"preset {preset} needs --model and --endpoint (the model's base URL)")
    return ctx.model, ctx.endpoint


def mini_swe_agent(ctx: PresetContext) -> AgentCommand:
    """mini-swe-agent in text-based mode (one ``mswea_bash_command`` block per reply) through
    litellm's OpenAI-compatible client: any chat-completions endpoint works."""
    model, endpoint = _need_model(ctx, "mini-swe-agent")
    mini = Path(sys.executable).parent / "mini"
    argv = [
        str(mini) if mini.exists() else "mini",
        "-c",
        "mini_textbased.yaml",
        "-c",
        "model.model_class=litellm_textbased",
        "-m",
        model if "/" in model else f"openai/{model}",
        "-t",
        ctx.brief,
        "-y",
        "--exit-immediately",
        "--cost-limit",
        "0",
        "-o",
        TRAJECTORY,
    ]
    env = {
        "OPENAI_BASE_URL": endpoint.inner_url(),
        "OPENAI_API_KEY": ctx.api_key or "none",
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",  # else litellm fetches its price map online
        "MSWEA_CONFIGURED": "true",
        "MSWEA_COST_TRACKING": "ignore_errors",  # an unpriced model is otherwise fatal
        **_proxy_env(ctx),
    }
    return AgentCommand(
        argv,
        env,
        "mini-swe-agent",
        TRAJECTORY,
        "pip install mini-swe-agent (or suitebench[agents])",
    )


def claude_code(ctx: PresetContext) -> AgentCommand:
    """Claude Code headless: ``claude -p`` reads CLAUDE.md itself; stream-json is the transcript."""
    model, endpoint = _need_model(ctx, "claude-code")
    argv = [
        "claude",
        "-p",
        RUN_PROMPT.replace("AGENTS.md", "CLAUDE.md"),
        "--output-format",
        "stream-json",
        "--verbose",
        "--dangerously-skip-permissions",  # the sandbox is the permission boundary
        "--model",
        model,
    ]
    env = {
        "ANTHROPIC_API_KEY": ctx.api_key or "",
        "DISABLE_AUTOUPDATER": "1",
        "DISABLE_TELEMETRY": "1",
        "DISABLE_ERROR_REPORTING": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
        **_proxy_env(ctx),
    }
    if endpoint.scheme == "http":
        env["ANTHROPIC_BASE_URL"] = endpoint.inner_url()
    return AgentCommand(argv, env, "claude-code", None, "npm install -g @anthropic-ai/claude-code")


def codex(ctx: PresetContext) -> AgentCommand:
    """Codex CLI non-interactive: ``codex exec --json`` reads AGENTS.md itself; JSONL events."""
    model, endpoint = _need_model(ctx, "codex")
    argv = [
        "codex",
        "exec",
        "--json",
        "--skip-git-repo-check",
        "--dangerously-bypass-approvals-and-sandbox",  # our sandbox already contains it
        "-m",
        model,
        RUN_PROMPT,
    ]
    env = {"OPENAI_API_KEY": ctx.api_key or "", "CODEX_HOME": "/tmp/home/.codex"}
    env.update(_proxy_env(ctx))
    if endpoint.scheme == "http":
        env["OPENAI_BASE_URL"] = endpoint.inner_url()
    return AgentCommand(argv, env, "codex", None, "npm install -g @openai/codex")


def opencode(ctx: PresetContext) -> AgentCommand:
    """OpenCode non-interactive: ``opencode run --format json``; an OpenAI-compatible provider
    named ``suitebench`` is configured inline (``OPENCODE_CONFIG_CONTENT``)."""
    model, endpoint = _need_model(ctx, "opencode")
    config = {
        "$schema": "https://opencode.ai/config.json",
        "autoupdate": False,
        "share": "disabled",
        "provider": {
            "suitebench": {
                "npm": "@ai-sdk/openai-compatible",
                "options": {"baseURL": endpoint.inner_url(), "apiKey": "{env:OPENAI_API_KEY}"},
                "models": {model: {}},
            }
        },
    }
    argv = ["opencode", "run", "--format", "json", "-m", f"suitebench/{model}", RUN_PROMPT]
    env = {
        "OPENAI_API_KEY": ctx.api_key or "",
        "OPENCODE_CONFIG_CONTENT": json.dumps(config),
        **_proxy_env(ctx),
    }
    return AgentCommand(argv, env, "opencode", None, "npm install -g opencode-ai")


PRESETS: dict[str, Callable[[PresetContext], AgentCommand]] = {
    "mini-swe-agent": mini_swe_agent,
    "claude-code": claude_code,
    "codex": codex,
    "opencode": opencode,
}


def preset_command(name: str, ctx: PresetContext) -> AgentCommand:
    try:
        build = PRESETS[name]
    except KeyError:
        known = ", ".join(PRESETS)
        raise PresetError(f"unknown agent preset {name!r} (known: {known})") from None
    return build(ctx)


def custom_command(cmd: str) -> AgentCommand:
    """``--agent-cmd CMD``: any program, run by ``/bin/sh -c`` in the workspace."""
    return AgentCommand(["/bin/sh", "-c", cmd], {}, "text", None)


def resolve_program(command: AgentCommand) -> AgentCommand:
    """Absolute argv[0] (as found on this machine's PATH), or a PresetError with the install
    hint: the sandbox gets exactly the installation it needs bound read-only."""
    argv0 = command.argv[0]
    if "/" in argv0:
        if not Path(argv0).exists():
            raise PresetError(f"{argv0} not found; install it: {command.install_hint}")
        return command
    found = shutil.which(argv0)
    if found is None:
        raise PresetError(f"{argv0!r} not found on PATH; install it: {command.install_hint}")
    return AgentCommand(
        [found, *command.argv[1:]],
        command.env,
        command.transcript_format,
        command.trajectory_file,
        command.install_hint,
    )
