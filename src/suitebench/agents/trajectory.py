"""Trajectory analysis: every action an agent took, classified; executable and mutant creation
attempts; and the leak audit over held-out paths.

Each preset's transcript format is read into one list of :class:`Action` (a shell command, or a
file tool call with its path):

* ``mini-swe-agent`` -- ``trajectory.json``: assistant messages' ``extra.actions[].command``
  (the text-based mode's fenced ``mswea_bash_command`` blocks as a fallback); tokens from each
  response's ``usage``, cost from ``info.model_stats`` (see :func:`known_cost`);
* ``claude-code`` -- stream-json lines: ``tool_use`` blocks (``Bash``, ``Read``, ``Write``,
  ``Edit``, ``MultiEdit``, ``Glob``, ``Grep``, ``LS``, ...); usage and ``total_cost_usd`` from
  the final ``result`` line;
* ``codex`` -- ``exec --json`` lines: ``command_execution`` and ``file_change`` items; usage from
  ``turn.completed``;
* ``opencode`` -- ``run --format json`` lines: ``tool_use`` parts (``bash``, ``read``,
  ``write``, ``edit``, ``glob``, ``grep``, ``list``); tokens and cost from ``step_finish``;
* ``text`` (``--agent-cmd``) -- no structured actions unless the agent appends JSON lines
  ``{"command": ...}`` or ``{"tool": "write", "path": ...}`` to ``$SUITEBENCH_ACTIONS``.

Classes follow TestSuiteBench's tool-use analysis (App. A.4): **read** (file contents: ``cat``,
``head``, ``sed -n``), **search** (finding files or text: ``ls``, ``find``, ``grep``), **write**
(creating or editing files: redirections, ``tee``, ``sed -i``, file-writing tools), **execute**
(running tests or other programs), **other**. Executable and mutant creation attempts follow its
Table 3 rule-based parser; the leak audit follows the Auditors paper (§7: every recorded shell
and file action scanned for access to held-out materials), and also compares what was
collected with the held-out material by content (:mod:`suitebench.agents.leaks`).
"""

from __future__ import annotations

import json
import re
import shlex
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suitebench.agents.leaks import content_leaks, link_leaks
from suitebench.agents.leaks import path_leaks as leaks
from suitebench.llm.prices import load_prices
from suitebench.model.errors import FormatError

CLASSES = ("read", "search", "write", "execute", "other")
ACTIONS_FILE = "actions.jsonl"  # in the workspace's agent dir, for --agent-cmd agents

_READ = {"cat", "head", "tail", "less", "more", "nl", "view", "bat", "wc", "file", "stat", "xxd"}
_SEARCH = {"ls", "find", "grep", "rg", "ag", "tree", "locate", "fd", "which", "pwd", "du", "egrep"}
_WRITE = {"touch", "mkdir", "cp", "mv", "rm", "tee", "patch", "install", "ln", "chmod", "truncate"}
_OTHER = {"echo", "printf", "cd", "export", "true", "sleep", "date", "env", "set", ":"}
_REDIRECT = re.compile(r"(?<![0-9&<>])>>?\s*(?!&)([^\s;&|<>]+)")
_EXEC_TARGET = re.compile(
    r"(^|[\s/>])executable\b(?!\s*\))|-o\s+\S*executable\b|build\.sh", re.IGNORECASE
)
_IMPL_SOURCE = re.compile(r"\.(c|cc|cpp|cxx|h|rs|go|java)$")
_MUTANT = re.compile(r"mutant|mutation|mutate", re.IGNORECASE)


@dataclass(frozen=True)
class Action:
    """One recorded action: a shell command or a file tool call."""

    tool: str  # "shell" or the tool's name (read, write, edit, search, ...)
    command: str = ""
    path: str = ""

    @property
    def text(self) -> str:
        return f"{self.command} {self.path}".strip()


@dataclass
class TrajectoryReport:
    run: str
    format: str
    actions: int
    classes: dict[str, int]
    executable_attempt: bool
    mutant_attempt: bool
    leaks: list[dict[str, Any]] = field(default_factory=list)  # held-out paths named
    content_leaks: list[dict[str, Any]] = field(default_factory=list)  # held-out content kept
    collect_refused: list[dict[str, Any]] = field(default_factory=list)  # listed ones
    collect_refused_total: int = 0
    network_refused: list[str] = field(default_factory=list)
    mutation_score: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return {
            "run": self.run,
            "format": self.format,
            "actions": self.actions,
            "classes": self.classes,
            "executable_attempt": self.executable_attempt,
            "mutant_attempt": self.mutant_attempt,
            "leaks": self.leaks,
            "content_leaks": self.content_leaks,
            "collect_refused": self.collect_refused,
            "collect_refused_total": self.collect_refused_total,
            "network_refused": self.network_refused,
            "mutation_score": self.mutation_score,
        }


# -- reading transcripts ---------------------------------------------------------------------


def _json_lines(path: Path) -> Iterable[dict[str, Any]]:
    if not path.is_file():
        return
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.strip()
        if not line.startswith("{"):
            continue
        try:
            obj = json.loads(line)
        except ValueError:
            continue
        if isinstance(obj, dict):
            yield obj


_MSWEA_BLOCK = re.compile(r"```mswea_bash_command\s*\n(.*?)```", re.S)


def _mini_actions(run_dir: Path) -> list[Action]:
    path = run_dir / "trajectory.json"
    if not path.is_file():
        return []
    data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
    out: list[Action] = []
    for msg in data.get("messages", []):
        if msg.get("role") != "assistant":
            continue
        actions = (msg.get("extra") or {}).get("actions")
        if actions:
            out += [Action("shell", str(a.get("command", ""))) for a in actions]
        else:
            content = msg.get("content") or ""
            if isinstance(content, list):
                content = " ".join(str(c.get("text", "")) for c in content if isinstance(c, dict))
            out += [Action("shell", m.strip()) for m in _MSWEA_BLOCK.findall(str(content))]
    return out


_CLAUDE_TOOLS = {
    "bash": "shell",
    "read": "read",
    "write": "write",
    "edit": "write",
    "multiedit": "write",
    "notebookedit": "write",
    "glob": "search",
    "grep": "search",
    "ls": "search",
}


def _tool_action(name: str, args: dict[str, Any]) -> Action:
    kind = _CLAUDE_TOOLS.get(name.lower(), name.lower())
    if kind == "shell":
        return Action("shell", str(args.get("command", "")))
    path = args.get("file_path") or args.get("filePath") or args.get("path") or ""
    pattern = args.get("pattern") or ""
    return Action(kind, str(pattern), str(path))


def _claude_actions(run_dir: Path) -> list[Action]:
    out: list[Action] = []
    for obj in _json_lines(run_dir / "transcript.txt"):
        if obj.get("type") != "assistant":
            continue
        for block in (obj.get("message") or {}).get("content") or []:
            if isinstance(block, dict) and block.get("type") == "tool_use":
                out.append(_tool_action(str(block.get("name", "")), block.get("input") or {}))
    return out


def _codex_actions(run_dir: Path) -> list[Action]:
    out: list[Action] = []
    for obj in _json_lines(run_dir / "transcript.txt"):
        if obj.get("type") != "item.completed":
            continue
        item = obj.get("item") or {}
        if item.get("type") == "command_execution":
            out.append(Action("shell", str(item.get("command", ""))))
        elif item.get("type") == "file_change":
            for change in item.get("changes") or []:
                out.append(Action("write", "", str(change.get("path", ""))))
    return out


def _opencode_actions(run_dir: Path) -> list[Action]:
    out: list[Action] = []
    for obj in _json_lines(run_dir / "transcript.txt"):
        part = obj.get("part") or {}
        if obj.get("type") != "tool_use" and part.get("type") != "tool":
            continue
        name = str(part.get("tool", ""))
        args = (part.get("state") or {}).get("input") or {}
        kind = {"list": "search"}.get(name, name)
        out.append(_tool_action(kind, args))
    return out


def _text_actions(run_dir: Path) -> list[Action]:
    out: list[Action] = []
    for obj in _json_lines(run_dir / ACTIONS_FILE):
        if "command" in obj:
            out.append(Action("shell", str(obj["command"])))
        elif "tool" in obj:
            out.append(_tool_action(str(obj["tool"]), obj))
    return out


READERS = {
    "mini-swe-agent": _mini_actions,
    "claude-code": _claude_actions,
    "codex": _codex_actions,
    "opencode": _opencode_actions,
    "text": _text_actions,
}


def read_actions(fmt: str, run_dir: Path) -> list[Action]:
    return READERS.get(fmt, _text_actions)(run_dir)


def known_cost(reported: object, model: str | None, tokens: dict[str, int] | None) -> float | None:
    """A run's cost in USD, or None when nobody knows it: unknown is not free.

    An agent writes ``0.0`` for a model it has no price for (mini-swe-agent through litellm,
    Claude Code or OpenCode on another provider's endpoint), so a reported zero says nothing.
    suitebench's own price table (:func:`~suitebench.llm.prices.load_prices`, the one
    ``generate`` uses) prices the tokens when it knows the model, so agents and generated arms
    are costed alike; otherwise a non-zero cost the agent reported (its tool knew a price) is
    kept. A price file that does not parse prices nothing here: the run has already happened,
    and ``generate`` is where such a file is reported."""
    if model and tokens is not None:
        try:
            priced = load_prices().cost(model, tokens["input"], tokens["output"])
        except FormatError:
            priced = None
        if priced is not None:
            return priced
    if isinstance(reported, int | float) and not isinstance(reported, bool) and reported > 0:
        return float(reported)
    return None


def _mini_swe_agent_model(data: dict[str, Any]) -> str | None:
    """The model a mini-swe-agent trajectory says it used (``info.config.model.model_name``,
    e.g. ``openai/gpt-4o``; the price table looks it up without the provider prefix)."""
    config = ((data.get("info") or {}).get("config") or {}).get("model") or {}
    name = config.get("model_name")
    return name if isinstance(name, str) and name else None


def read_usage(fmt: str, run_dir: Path) -> dict[str, Any]:
    """Tokens, cost and model calls where the agent's transcript reports them (else None;
    the cost as :func:`known_cost` decides)."""
    tokens_in = tokens_out = 0
    reported: object = None
    model: str | None = None
    calls: int | None = None
    seen = False
    if fmt == "mini-swe-agent":
        path = run_dir / "trajectory.json"
        if path.is_file():
            data = json.loads(path.read_text(encoding="utf-8", errors="replace"))
            stats = (data.get("info") or {}).get("model_stats") or {}
            reported = stats.get("instance_cost")
            model = _mini_swe_agent_model(data)
            calls = stats.get("api_calls")
            for msg in data.get("messages", []):
                usage = ((msg.get("extra") or {}).get("response") or {}).get("usage") or {}
                if usage:
                    seen = True
                    tokens_in += int(usage.get("prompt_tokens") or 0)
                    tokens_out += int(usage.get("completion_tokens") or 0)
    elif fmt == "claude-code":
        for obj in _json_lines(run_dir / "transcript.txt"):
            if obj.get("type") == "result":
                usage = obj.get("usage") or {}
                seen = True
                tokens_in = int(usage.get("input_tokens") or 0)
                tokens_out = int(usage.get("output_tokens") or 0)
                reported = obj.get("total_cost_usd")
                calls = obj.get("num_turns")
    elif fmt == "codex":
        for obj in _json_lines(run_dir / "transcript.txt"):
            if obj.get("type") == "turn.completed":
                usage = obj.get("usage") or {}
                seen = True
                tokens_in += int(usage.get("input_tokens") or 0)
                tokens_out += int(usage.get("output_tokens") or 0)
    elif fmt == "opencode":
        for obj in _json_lines(run_dir / "transcript.txt"):
            part = obj.get("part") or {}
            if obj.get("type") == "step_finish" or part.get("type") == "step-finish":
                tokens = part.get("tokens") or {}
                seen = True
                tokens_in += int(tokens.get("input") or 0)
                tokens_out += int(tokens.get("output") or 0)
                spent = reported if isinstance(reported, float) else 0.0
                reported = spent + float(part.get("cost") or 0.0)
    tokens = {"input": tokens_in, "output": tokens_out} if seen else None
    return {"tokens": tokens, "cost_usd": known_cost(reported, model, tokens), "model_calls": calls}


# -- classifying ------------------------------------------------------------------------------


def _segments(command: str) -> list[list[str]]:
    """Simple commands of a shell line (split on ; && || | and newlines), as words."""
    parts = re.split(r"\|\||&&|[;|\n]", command)
    out = []
    for part in parts:
        try:
            words = shlex.split(part, comments=True)
        except ValueError:
            words = part.split()
        while words and "=" in words[0] and not words[0].startswith("="):
            words = words[1:]  # VAR=value prefixes
        if words:
            out.append(words)
    return out


def written_paths(action: Action) -> list[str]:
    """Files an action writes (redirections, tee, heredocs, file tools)."""
    if action.tool == "write":
        return [action.path] if action.path else []
    if action.tool != "shell":
        return []
    paths = [p for p in _REDIRECT.findall(action.command) if p not in ("/dev/null", "&1", "&2")]
    for words in _segments(action.command):
        if words[0] == "tee":
            paths += [w for w in words[1:] if not w.startswith("-")]
        if words[0] in ("cp", "mv", "install") and len(words) >= 3:
            paths.append(words[-1])
    return paths


def classify(action: Action) -> str:
    """read / search / write / execute / other (TestSuiteBench App. A.4)."""
    if action.tool in ("read", "search", "write"):
        return action.tool
    if action.tool != "shell":
        return "other"
    if written_paths(action):
        return "write"
    segs = _segments(action.command)
    if not segs:
        return "other"
    heads = [Path(w[0]).name for w in segs]
    if any(
        h == "sed" and any(a.startswith("-i") for a in w) for h, w in zip(heads, segs, strict=True)
    ):
        return "write"
    if any(h in _WRITE for h in heads):
        return "write"
    if any(h not in _READ | _SEARCH | _OTHER | {"sed"} for h in heads):
        return "execute"
    first = next((h for h in heads if h not in _OTHER), None)
    if first is None:
        return "other"
    return "search" if first in _SEARCH else "read"


def executable_attempt(action: Action) -> bool:
    """The agent builds its own program under test (Table 3's "Exec."): writes or compiles an
    ``executable`` or a ``build.sh``, or writes implementation source code."""
    targets = written_paths(action)
    for p in targets:
        name = Path(p).name
        if name in ("executable", "build.sh") or _IMPL_SOURCE.search(name):
            return True
    if action.tool == "shell":
        for words in _segments(action.command):
            head = Path(words[0]).name
            if head in ("gcc", "g++", "cc", "clang", "rustc", "go") and _EXEC_TARGET.search(
                " ".join(words)
            ):
                return True
            if head == "chmod" and any(Path(w).name == "executable" for w in words[1:]):
                return True
    return False


def mutant_attempt(action: Action) -> bool:
    """The agent creates mutants (Table 3's "Mutants"): an action mentioning mutation."""
    return bool(_MUTANT.search(action.text))


def analyse_run(run_dir: Path) -> TrajectoryReport:
    """Read one run directory (``agent.json`` + transcript) into a report."""
    record = json.loads((run_dir / "agent.json").read_text(encoding="utf-8"))
    fmt = str(record.get("transcript_format", "text"))
    dirs = [run_dir]
    if (run_dir / "rounds").is_dir():
        dirs = sorted(
            (d for d in (run_dir / "rounds").iterdir() if d.is_dir()), key=lambda d: int(d.name)
        )
    actions: list[Action] = []
    for d in dirs:
        actions += read_actions(fmt, d)
    counts = Counter(classify(a) for a in actions)
    refused: list[str] = []
    not_collected: list[dict[str, Any]] = []
    not_collected_total = 0
    for r in record.get("rounds", []):
        refused += list((r.get("gateway") or {}).get("refused", []))
        not_collected += list((r.get("collect") or {}).get("refused", []))
        not_collected_total += int((r.get("collect") or {}).get("refused_total", 0))
    held_out = record.get("held_out", [])
    score = record.get("score") or {}
    return TrajectoryReport(
        run=str(run_dir),
        format=fmt,
        actions=len(actions),
        classes={c: counts.get(c, 0) for c in CLASSES},
        executable_attempt=any(executable_attempt(a) for a in actions),
        mutant_attempt=any(mutant_attempt(a) for a in actions),
        leaks=leaks(actions, held_out)
        + link_leaks(not_collected, held_out, run_dir.resolve() / "workspace"),
        content_leaks=content_leaks(
            run_dir, record.get("held_out_content") or {}, record.get("held_out_lines") or {}
        ),
        collect_refused=not_collected,
        collect_refused_total=not_collected_total,
        network_refused=refused,
        mutation_score=score.get("mutation_score"),
    )
