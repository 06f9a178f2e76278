"""Run one agent contained: sandboxed, its workspace the only writable path, the model endpoint
its only network, nothing held out visible, nothing left running.

:func:`run_contained` is the one place an agent process is started. It

1. probes, with the very sandbox configuration the agent gets, whether any held-out file (the
   instance or problem directory, mutants, pools, official tests, the store and build cache, the
   user's tree) can be read, and refuses to start the agent if one can;
2. serves the model endpoint through a :class:`~suitebench.agents.gateway.ModelGateway` (a Unix
   socket bound read-only into the sandbox; the launcher inside relays ``127.0.0.1:PORT`` to it);
3. runs the agent under :func:`suitebench.run.sandbox.run` with a wall-clock limit, whose runner
   kills the agent's whole process tree when it ends or is stopped.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from suitebench.agents.gateway import Endpoint, ModelGateway
from suitebench.agents.presets import AgentCommand
from suitebench.agents.trajectory import ACTIONS_FILE
from suitebench.agents.workspace import AGENT_DIR
from suitebench.run import sandbox
from suitebench.run.layout import sandbox_path  # our interpreter's bin first
from suitebench.run.outcome import Limits, MiB, Outcome, Status

LAUNCHER = Path(__file__).resolve().with_name("_launcher.py").read_text(encoding="utf-8")
SANDBOX_HOME = "/tmp/home"  # private tmpfs: the agent's HOME (configs, caches) is not kept
_PROBE = (
    "import json, sys\n"
    "seen = []\n"
    "for p in json.loads(sys.argv[1]):\n"
    "    try:\n"
    "        with open(p, 'rb') as f:\n"
    "            f.read(1)\n"
    "        seen.append(p)\n"
    "    except OSError:\n"
    "        pass\n"
    "print(json.dumps(seen))\n"
)


class ContainmentError(RuntimeError):
    """Held-out material would be visible to the agent: the run is refused."""

    def __init__(self, visible: Sequence[str], backend: str, *, network: bool = True) -> None:
        self.visible = list(visible)
        shown = "\n  ".join(self.visible[:10])
        more = f"\n  ... and {len(self.visible) - 10} more" if len(self.visible) > 10 else ""
        what = (
            f"would see {len(self.visible)} held-out file(s):\n  {shown}{more}"
            if self.visible
            else "has no network isolation (the agent could reach any address)"
        )
        if not network and self.visible:
            what += "\nand has no network isolation"
        super().__init__(
            f"the agent's sandbox ({backend}) {what}\nrefusing to run the agent (keep held-out "
            "data where the sandbox hides it, or pass --allow-visible to run anyway and have it "
            "recorded)"
        )


@dataclass(frozen=True)
class AgentLimits:
    time_limit: float
    memory_mb: int | None = 4096
    processes: int = 512

    def limits(self) -> Limits:
        return Limits(
            wall_time=self.time_limit,
            cpu_time=self.time_limit,
            memory_mb=self.memory_mb,
            output_bytes=64 * MiB,
            file_size_bytes=1024 * MiB,
            processes=self.processes,
            network=False,
        )


@dataclass
class ContainedRun:
    outcome: Outcome
    wall_time: float
    stopped_by_limit: bool
    gateway: dict[str, Any] | None
    probe: dict[str, Any]
    binds: list[str] = field(default_factory=list)


def command_binds(command: AgentCommand, extra: Sequence[Path] = ()) -> list[Path]:
    """What the agent's program needs to see read-only: its installation (a ``bin/`` tool brings
    its prefix), absolute paths named in a custom command, our interpreter's installation, and
    ``extra``. A path inside another is bound once."""
    out: list[Path] = []
    argv0 = Path(command.argv[0])
    if argv0.is_absolute() and argv0.exists():
        real = Path(os.path.realpath(argv0))
        for p in (argv0, real):
            out.append(p.parent.parent if p.parent.name == "bin" else p.parent)
    if command.argv[:2] == ["/bin/sh", "-c"]:
        try:
            words = shlex.split(command.argv[2])
        except ValueError:
            words = []
        out += [Path(w) for w in words if os.path.isabs(w) and os.path.exists(w)]
    # The interpreter on the agent's PATH (``python``, ``pytest``, the workspace tools), named
    # explicitly rather than left to what the sandbox binds for its own runner.
    out += [Path(sys.prefix), Path(sys.base_prefix)]
    out += [Path(p) for p in extra]
    system = {Path("/"), Path("/usr"), Path("/usr/local"), Path("/bin"), Path("/usr/bin")}
    paths = [p for p in dict.fromkeys(Path(os.path.realpath(q)) for q in out) if p not in system]
    return [p for p in paths if not any(q in p.parents for q in paths)]


_CA_DIRS = ("/etc/ssl", "/etc/ca-certificates", "/etc/pki")


def _tls_binds(endpoint: Endpoint | None) -> list[Path]:
    """An https endpoint needs the system's CA certificates (a sandbox's minimal /etc may not
    have them)."""
    if endpoint is None or endpoint.scheme != "https":
        return []
    return [Path(d) for d in _CA_DIRS if Path(d).is_dir()]


def agent_env(
    workspace: Path,
    command: AgentCommand,
    *,
    endpoint: Endpoint | None,
    model: str | None,
    extra: Mapping[str, str] | None = None,
) -> dict[str, str]:
    env = {
        "PATH": sandbox_path(),
        "HOME": SANDBOX_HOME,
        "TMPDIR": "/tmp",
        "LANG": "C.UTF-8",
        "LC_ALL": "C.UTF-8",
        "TERM": "dumb",
        "PYTHONUNBUFFERED": "1",
        "SUITEBENCH_WORKSPACE": str(workspace),
        "SUITEBENCH_BRIEF": str(workspace / "AGENTS.md"),
        "SUITEBENCH_ACTIONS": str(workspace / AGENT_DIR / ACTIONS_FILE),
    }
    if model:
        env["SUITEBENCH_MODEL"] = model
    if endpoint is not None:
        env["SUITEBENCH_ENDPOINT"] = endpoint.inner_url()
        env.setdefault("OPENAI_BASE_URL", endpoint.inner_url())
        if endpoint.scheme == "https":  # reached through the gateway's CONNECT proxy
            proxy = f"http://127.0.0.1:{endpoint.inner_port}"
            env.update({"HTTPS_PROXY": proxy, "https_proxy": proxy, "NO_PROXY": "", "no_proxy": ""})
    env.update(extra or {})
    env.update(command.env)
    return env


def probe_visible(
    files: Sequence[Path],
    *,
    workspace: Path,
    env: Mapping[str, str],
    ro_binds: Sequence[Path],
) -> tuple[list[str], str]:
    """Which of ``files`` a program in the agent's sandbox can read, and the backend used."""
    if not files:
        return [], str(sandbox.detect_backend())
    oc = sandbox.run(
        [sys.executable, "-I", "-S", "-c", _PROBE, json.dumps([str(f) for f in files])],
        cwd=workspace,
        env=dict(env),
        limits=Limits(wall_time=60.0, memory_mb=512, output_bytes=16 * MiB),
        ro_binds=list(ro_binds),
    )
    if oc.status is not Status.OK:
        raise RuntimeError(f"the containment probe failed ({oc.status}): {oc.message}")
    return json.loads(oc.stdout.decode()), str(oc.backend)


def run_contained(
    command: AgentCommand,
    workspace: Path,
    *,
    limits: AgentLimits,
    endpoint: Endpoint | None = None,
    model: str | None = None,
    held_out: Sequence[Path] = (),
    user_tree: Sequence[Path] = (),
    extra_binds: Sequence[Path] = (),
    allow_visible: bool = False,
    extra_env: Mapping[str, str] | None = None,
    disk: Mapping[str, Any] | None = None,
) -> ContainedRun:
    """Start ``command`` in ``workspace`` contained; return when it ends or is stopped.

    ``held_out`` files must be invisible to the agent; ``user_tree`` files too, except those
    under a path the agent is explicitly given (``extra_binds``, the command's own script).
    ``disk`` is the workspace quota the launcher watches
    (:meth:`~suitebench.agents.quota.WorkspaceQuota.launcher_config`)."""
    workspace = workspace.resolve()
    env = agent_env(workspace, command, endpoint=endpoint, model=model, extra=extra_env)
    binds = command_binds(command, [*extra_binds, *_tls_binds(endpoint)])
    # The user's own files are held out unless the user gave them to the agent (the command's
    # script, --bind); the target's, the store's and the build cache's are held out always.
    probed = [*held_out]
    probed += [f for f in user_tree if not any(b == f or b in f.parents for b in binds)]
    visible, backend = probe_visible(probed, workspace=workspace, env=env, ro_binds=binds)
    isolated = sandbox.isolates_network(sandbox.detect_backend())
    if (visible or not isolated) and not allow_visible:
        raise ContainmentError(visible, backend, network=isolated)
    probe = {
        "backend": backend,
        "unsandboxed": backend == str(sandbox.Backend.PLAIN),
        "held_out_files_probed": len(probed),
        "held_out_visible": visible,
        "network_isolated": isolated,
    }
    cfg: dict[str, Any] = {"argv": command.argv, "make_dirs": [SANDBOX_HOME]}
    if disk:
        cfg["disk"] = dict(disk)
    started = time.monotonic()
    gateway_stats: dict[str, Any] | None = None
    launcher = [sys.executable, "-I", "-S", "-c", LAUNCHER]
    if endpoint is not None:
        with ModelGateway(endpoint) as gw:
            cfg["relay"] = {"port": endpoint.inner_port, "socket": str(gw.socket_path)}
            outcome = sandbox.run(
                [*launcher, json.dumps(cfg)],
                cwd=workspace,
                env=env,
                limits=limits.limits(),
                ro_binds=[*binds, gw.socket_dir],
            )
            gateway_stats = {"endpoint": endpoint.authority, **gw.stats.to_dict()}
    else:
        outcome = sandbox.run(
            [*launcher, json.dumps(cfg)],
            cwd=workspace,
            env=env,
            limits=limits.limits(),
            ro_binds=binds,
        )
    wall = time.monotonic() - started
    stopped = outcome.status is Status.TIMEOUT
    return ContainedRun(
        outcome, round(wall, 3), stopped, gateway_stats, probe, [str(b) for b in binds]
    )
