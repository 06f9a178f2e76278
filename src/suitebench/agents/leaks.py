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

from suitebench.agents.nearcopy import HeldOutLines, held_out_lines, line_hashes

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


def _contents(roots: Iterable[Path]) -> dict[Path, bytes]:
    out: dict[Path, bytes] = {}
    for i, path in enumerate(_files(roots)):
        if i >= MAX_FILES:
            break
        try:
            if path.stat().st_size > MAX_HASHED:
                continue
            out[path] = path.read_bytes()
        except OSError:
            continue
    return out


def _digests(contents: dict[Path, bytes]) -> dict[str, Path]:
    out: dict[str, Path] = {}
    for path, data in contents.items():
        digest = content_digest(data)
        if digest is not None:
            out.setdefault(digest, path)
    return out


def held_out_digests(held_out: Sequence[Path], given: Path) -> dict[str, str]:
    """Content digest -> held-out file, for every file under ``held_out`` whose content the
    workspace ``given`` (as laid out, before the agent ran) does not hold."""
    shown = set(_digests(_contents([given])))
    return {d: str(p) for d, p in _digests(_contents(held_out)).items() if d not in shown}


def held_out_line_hashes(held_out: Sequence[Path], given: Path) -> dict[str, list[str]]:
    """Held-out file -> the hashes of its significant lines (:mod:`~suitebench.agents.nearcopy`),
    the lines the workspace ``given`` holds left out."""
    shown = {str(p): data for p, data in _contents([given]).items()}
    return held_out_lines({str(p): d for p, d in _contents(held_out).items()}, shown)


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


def content_leaks(
    run_dir: Path,
    held_out_content: dict[str, str],
    held_out_lines: dict[str, list[str]] | None = None,
) -> list[dict[str, Any]]:
    """Collected files whose content is that of a held-out file (``kind`` ``copy``), or most
    of it (``near-copy``, with the figures that made it one); then each round's output taken
    together, when it is a near-copy and no file of it was reported."""
    if not held_out_content and not held_out_lines:
        return []
    held = HeldOutLines(held_out_lines or {})
    found: list[dict[str, Any]] = []
    groups: dict[Path, tuple[list[str], bool]] = {}  # an output dir: its lines, reported?
    for path in collected_files(run_dir):
        try:
            if path.stat().st_size > MAX_HASHED:
                continue
            data = path.read_bytes()
        except OSError:
            continue
        rel = path.relative_to(run_dir).as_posix()
        digest = content_digest(data)
        hashes = line_hashes(data, path.name)
        group = _output_dir(run_dir, path)
        lines, reported = groups.get(group, ([], False))
        lines += hashes
        if digest is not None and digest in held_out_content:
            held_path = held_out_content[digest]
            found.append({"file": rel, "held_out": held_path, "kind": "copy", "sha256": digest})
            reported = True
        elif (m := held.match(hashes)).is_near_copy:
            found.append({"file": rel, "held_out": m.held_out, "kind": "near-copy", **m.to_dict()})
            reported = True
        groups[group] = (lines, reported)
    for group, (lines, reported) in groups.items():
        if not reported and (m := held.match(lines)).is_near_copy:
            rel = f"{group.relative_to(run_dir).as_posix()}/*"
            found.append({"file": rel, "held_out": m.held_out, "kind": "near-copy", **m.to_dict()})
    return found


def _output_dir(run_dir: Path, path: Path) -> Path:
    """The output directory (``tests``, ``rounds/1/tests``) a collected file lies in."""
    for parent in path.parents:
        up = parent.parent
        if parent.name in OUTPUT_DIRS and (up == run_dir or up.parent == run_dir / "rounds"):
            return parent
    return path.parent
