"""The leak audit (the Auditors paper's §7): did held-out material reach the agent or its output?

Three checks, reported apart because they mean different things:

* **path leaks** -- a recorded shell or file action names a held-out path (the paper's
  access-level audit), and so does a link the collector refused (``tests/ref.c ->
  .../src/rpn.c``): the agent *tried* to reach held-out material;
* **content leaks** -- a collected file (``tests/``, ``final/``, ``implementation/``) has the
  content of a held-out file: the instance's source, tests or mutant diffs, the problem's
  references, brute-force solutions, pools or official tests. Path strings miss a copy made by
  any means the transcript does not show; a hash does not. Contents are compared after
  normalising line ends and trailing white space (a re-saved copy is still a copy), and files
  the workspace itself gave the agent (the spec, the inputs task's first reference) are not
  held out.

The digests of the held-out files are computed when the run starts and kept in ``agent.json``
(``held_out_content``), so that ``agent trajectories`` re-audits a run without the instance.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

MIN_BYTES = 32  # shorter contents ("3\n", an empty __init__.py) match by chance, not by copying
MAX_HASHED = 64 * 1024 * 1024  # a held-out file larger than this is not hashed
MAX_FILES = 20_000
OUTPUT_DIRS = ("tests", "final", "implementation")


def content_digest(data: bytes) -> str | None:
    """sha256 of ``data`` with CRLF made LF, trailing white space of each line and blank lines
    at either end dropped; None when what is left is too short to mean anything."""
    lines = [line.rstrip() for line in data.replace(b"\r\n", b"\n").split(b"\n")]
    text = b"\n".join(lines).strip(b"\n")
    if len(text) < MIN_BYTES:
        return None
    return hashlib.sha256(text).hexdigest()


def _files(roots: Iterable[Path]) -> Iterable[Path]:
    """Regular files under ``roots`` (themselves trusted: the instance, the problem, the
    workspace the harness just laid out), never through a link."""
    for root in roots:
        if root.is_symlink():
            continue
        if root.is_file():
            yield root
        elif root.is_dir():
            for dirpath, _dirs, names in os.walk(root):
                for name in sorted(names):
                    p = Path(dirpath) / name
                    if not p.is_symlink() and p.is_file():
                        yield p


def _digests(roots: Iterable[Path]) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for i, path in enumerate(_files(roots)):
        if i >= MAX_FILES:
            break
        try:
            if path.stat().st_size > MAX_HASHED:
                continue
            digest = content_digest(path.read_bytes())
        except OSError:
            continue
        if digest is not None:
            out.setdefault(digest, path)
    return out


def held_out_digests(held_out: Sequence[Path], given: Path) -> dict[str, str]:
    """Content digest -> held-out file, for every file under ``held_out`` whose content the
    workspace ``given`` (as laid out, before the agent ran) does not hold."""
    shown = set(_digests([given]))
    return {d: str(p) for d, p in _digests(held_out).items() if d not in shown}


def path_leaks(actions: Sequence[Any], held_out: Sequence[str]) -> list[dict[str, Any]]:
    """Actions (anything with a ``text``) that name a held-out path."""
    roots = [h.rstrip("/") for h in held_out if h and h != "/"]
    found = []
    for i, a in enumerate(actions):
        text = a.text
        for root in roots:
            if root in text:
                found.append({"action": i, "path": root, "text": text[:300]})
                break
    return found


def link_leaks(
    refused: Sequence[dict[str, Any]], held_out: Sequence[str], workspace: Path
) -> list[dict[str, Any]]:
    """Refused links whose target names a held-out path, as written or as it resolves from
    where the link lay in ``workspace`` (``../../data/rpn-c/src/rpn.c``)."""
    roots = [h.rstrip("/") for h in held_out if h and h != "/"]
    found = []
    for r in refused:
        target = r.get("target")
        if not target:
            continue
        landed = os.path.normpath(os.path.join(workspace, os.path.dirname(r["path"]), target))
        hit = next(
            (h for h in roots if h in target or landed == h or landed.startswith(h + "/")), None
        )
        if hit is not None:
            text = f"{r['path']} -> {target}"
            found.append({"link": r["path"], "path": hit, "text": text[:300]})
    return found


def collected_files(run_dir: Path) -> list[Path]:
    """What the harness collected into a run directory, every round's included."""
    dirs = [run_dir / d for d in OUTPUT_DIRS]
    rounds = run_dir / "rounds"
    if rounds.is_dir():
        dirs += [r / d for r in sorted(rounds.iterdir()) for d in OUTPUT_DIRS]
    return list(_files(d for d in dirs if d.is_dir()))


def content_leaks(run_dir: Path, held_out_content: dict[str, str]) -> list[dict[str, Any]]:
    """Collected files whose content is that of a held-out file."""
    if not held_out_content:
        return []
    found = []
    for path in collected_files(run_dir):
        try:
            if path.stat().st_size > MAX_HASHED:
                continue
            digest = content_digest(path.read_bytes())
        except OSError:
            continue
        if digest in held_out_content:
            rel = path.relative_to(run_dir).as_posix()
            found.append({"file": rel, "held_out": held_out_content[digest], "sha256": digest})
    return found
