"""Writing generated mutants into an instance: diff files, a manifest, and a marked block of
``[[mutants]]`` tables in ``instance.toml``.

Each generator (operator mutants, requirement-targeted mutants) owns one block, delimited by
two marker comments naming it, and one manifest under ``mutants/``; a re-run replaces its own
block and diff files only, so hand-written mutants and the other generator's stay.
"""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from suitebench.model.instance import Instance, InstanceError

__all__ = [
    "OPERATOR",
    "REQUIREMENT",
    "Generator",
    "MutantRecord",
    "prepare_target",
    "write_generated",
]


@dataclass(frozen=True)
class Generator:
    """One mutant generator's share of an instance."""

    name: str  # as in the marker comments
    prefix: str  # of mutant ids
    manifest: str  # under mutants/

    @property
    def begin(self) -> str:
        return f"# >>> suitebench {self.name} (generated; a re-run replaces this block)"

    @property
    def end(self) -> str:
        return f"# <<< suitebench {self.name}"


OPERATOR = Generator("build mutants", "op", "operators.json")
REQUIREMENT = Generator("build mutants --llm", "rq", "requirements.json")


@dataclass(frozen=True)
class MutantRecord:
    """A written mutant: its id, diff file and where and how it changes the source."""

    id: str
    patch: str  # relative to the instance directory
    file: str  # relative to the source directory
    line: int
    operator: str
    description: str
    function: str = ""
    section: str | None = None
    target: str | None = None
    equivalent: str | None = None  # "tce": compiles to the reference's code

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def prepare_target(instance: Instance, out: Path | None) -> Path:
    """The directory to write into: the instance itself, or ``out`` as a fresh copy of it."""
    if out is None:
        return instance.root
    out = Path(out).resolve()
    if out == instance.root:
        return out
    if out.exists() and any(out.iterdir()):
        raise FileExistsError(f"{out}: --out must be a new or empty directory")
    shutil.copytree(instance.root, out, dirs_exist_ok=True)
    return out


def split_block(text: str, generator: Generator) -> tuple[str, str]:
    """``instance.toml`` without the generator's block, and the block itself."""
    begin = text.find(generator.begin)
    if begin < 0:
        return text, ""
    end = text.find(generator.end, begin)
    end = len(text) if end < 0 else end + len(generator.end)
    return text[:begin].rstrip("\n") + "\n" + text[end:].lstrip("\n"), text[begin:end]


def _toml_string(value: str) -> str:
    return json.dumps(value, ensure_ascii=False)  # a JSON string is a valid TOML basic string


def write_generated(
    target: Path,
    generator: Generator,
    diffs: list[tuple[MutantRecord, bytes]],
    manifest: dict[str, Any],
) -> list[MutantRecord]:
    """Number and write the mutants (ids ``<prefix>0001``...), replacing the generator's
    previous ones; return the records as written.

    A ProgramBench task has no ``instance.toml``: its manifest under ``mutants/`` is then the
    list the task loader reads, and no block is written."""
    toml_path = target / "instance.toml"
    listed = toml_path.is_file()
    text = toml_path.read_text(encoding="utf-8") if listed else ""
    body, block = split_block(text, generator)
    ours = set(re.findall(r'^id = "([^"]+)"', block, flags=re.M))
    others = set(re.findall(r'^\s*id\s*=\s*"([^"]+)"', body, flags=re.M)) - ours
    mutants_dir = target / "mutants"
    mutants_dir.mkdir(exist_ok=True)
    old_manifest = mutants_dir / generator.manifest
    if old_manifest.is_file():
        try:
            previous = json.loads(old_manifest.read_text(encoding="utf-8"))
        except json.JSONDecodeError:
            previous = {}
        for record in previous.get("mutants", []):
            old = (target / str(record.get("patch", ""))).resolve()
            if old.parent == mutants_dir.resolve() and old.is_file():
                old.unlink()
    width = max(4, len(str(len(diffs))))
    written: list[MutantRecord] = []
    for number, (record, diff) in enumerate(diffs, start=1):
        mutant_id = f"{generator.prefix}{number:0{width}d}"
        if mutant_id in others:
            raise InstanceError(
                toml_path, "mutants", f"expected no hand-written mutant named {mutant_id!r}"
            )
        (mutants_dir / f"{mutant_id}.diff").write_bytes(diff)
        written.append(
            MutantRecord(
                **{**record.to_dict(), "id": mutant_id, "patch": f"mutants/{mutant_id}.diff"}
            )
        )
    manifest = {**manifest, "mutants": [r.to_dict() for r in written]}
    old_manifest.write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
    if not listed:
        return written
    lines = [generator.begin]
    for m in written:
        lines += [
            "",
            "[[mutants]]",
            f"id = {_toml_string(m.id)}",
            f"patch = {_toml_string(m.patch)}",
        ]
        if m.section is not None:
            lines.append(f"section = {_toml_string(m.section)}")
        if m.target is not None:
            lines.append(f"target = {_toml_string(m.target)}")
        lines += [
            f"operator = {_toml_string(m.operator)}",
            f"description = {_toml_string(m.description)}",
        ]
        if m.equivalent is not None:
            lines.append(f"equivalent = {_toml_string(m.equivalent)}")
    lines.append(generator.end)
    toml_path.write_text(body.rstrip("\n") + "\n\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return written
