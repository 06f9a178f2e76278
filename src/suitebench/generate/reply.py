"""Parsing a model's reply into ``===INPUT===`` blocks and ``===GENERATOR===`` + ``===SEEDS===``
pairs (the Auditors paper's Appendix D.2 output protocol; ``===VALIDATOR===`` for llm-genval).

The protocol asks for the blocks alone, but replies drift: prose before, between or after the
blocks, markdown fences around a block or around the whole reply, markers dressed as headings
(``### ===INPUT===``, ``**===SEEDS===**``), a generator without its seeds, seeds as words ("40
seeds"), a reply cut off mid-block. The parser survives all of them and says what it did in
``notes``; it never raises on a reply. What it cannot repair (a generator that does not compile,
an input that is not legal) is left to the build and the gate, which drop and count it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

__all__ = ["DEFAULT_SEEDS", "GeneratorBlock", "InputBlock", "ParsedReply", "parse_reply"]

# A generator whose ===SEEDS=== block is missing or holds no integer is swept over this many.
DEFAULT_SEEDS = 10
_MARKER = re.compile(
    r"^[\s>*#`_]*===\s*(INPUT|GENERATOR|SEEDS|VALIDATOR)\s*===[\s*`_:]*$", re.IGNORECASE
)
_FENCE = re.compile(r"^\s*(```|~~~)")
_INT = re.compile(r"[+-]?\d+")
# A trailing paragraph that reads as a sentence: words, spaces, ending in punctuation.
_PROSE = re.compile(r"^[A-Za-z][A-Za-z'’,;()\- ]*\b[A-Za-z]{3,}\b.*[.!?:]\s*$")


@dataclass(frozen=True)
class InputBlock:
    """A literal input: its raw stdin text (one trailing newline)."""

    text: str
    index: int  # position among the reply's blocks


@dataclass(frozen=True)
class GeneratorBlock:
    """A generator program and how many seeds (0..seeds-1) to sweep it over."""

    code: str
    seeds: int
    index: int
    seeds_given: bool = True


@dataclass
class ParsedReply:
    items: list[InputBlock | GeneratorBlock] = field(default_factory=list)
    validators: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    @property
    def inputs(self) -> list[InputBlock]:
        return [i for i in self.items if isinstance(i, InputBlock)]

    @property
    def generators(self) -> list[GeneratorBlock]:
        return [i for i in self.items if isinstance(i, GeneratorBlock)]


def _unfence(lines: list[str]) -> tuple[list[str], bool]:
    """The inside of the first fenced block if there is one (prose around it dropped); stray
    fence lines at either end (a fence opened before the marker, or cut off) are removed."""
    starts = [i for i, ln in enumerate(lines) if _FENCE.match(ln)]
    if len(starts) >= 2:
        return lines[starts[0] + 1 : starts[1]], True
    if len(starts) == 1:
        i = starts[0]
        rest = lines[:i] if not any(ln.strip() for ln in lines[i + 1 :]) else lines[i + 1 :]
        return rest, True
    return lines, False


def _strip_blank(lines: list[str]) -> list[str]:
    while lines and not lines[0].strip():
        lines = lines[1:]
    while lines and not lines[-1].strip():
        lines = lines[:-1]
    return lines


def _drop_trailing_prose(lines: list[str]) -> tuple[list[str], bool]:
    """Cut a last paragraph that is a sentence ("Hope these help.") off the last block."""
    paras: list[list[str]] = [[]]
    for ln in lines:
        if ln.strip():
            paras[-1].append(ln)
        elif paras[-1]:
            paras.append([])
    paras = [p for p in paras if p]
    if len(paras) >= 2 and all(_PROSE.match(ln.strip()) for ln in paras[-1]):
        last = paras[-1][0]
        idx = max(i for i, ln in enumerate(lines) if ln == last)
        return _strip_blank(lines[:idx]), True
    return lines, False


def parse_reply(text: str, *, max_seeds: int = 60) -> ParsedReply:
    """Blocks in reply order. Text outside blocks is ignored (and noted)."""
    out = ParsedReply()
    lines = text.replace("\r\n", "\n").split("\n")
    blocks: list[tuple[str, list[str]]] = []
    preamble: list[str] = []
    for ln in lines:
        m = _MARKER.match(ln)
        if m:
            blocks.append((m.group(1).upper(), []))
        elif blocks:
            blocks[-1][1].append(ln)
        else:
            preamble.append(ln)
    if any(ln.strip() and not _FENCE.match(ln) for ln in preamble):
        out.notes.append("text before the first block ignored")
    if not blocks:
        out.notes.append("no ===INPUT=== or ===GENERATOR=== block in the reply")
        return out

    pending: tuple[str, int] | None = None  # a generator waiting for its seeds
    for n, (kind, body) in enumerate(blocks):
        content, fenced = _unfence(body)
        content = _strip_blank(content)
        if not fenced and n == len(blocks) - 1 and kind != "SEEDS":
            content, cut = _drop_trailing_prose(content)
            if cut:
                out.notes.append(f"block {n + 1}: trailing prose removed")
        if kind != "SEEDS" and pending is not None:
            out.items.append(_missing_seeds(pending, out))
            pending = None
        if kind == "INPUT":
            if not content:
                out.notes.append(f"block {n + 1}: empty ===INPUT=== ignored")
                continue
            body_text = "\n".join(ln.rstrip() for ln in content) + "\n"
            out.items.append(InputBlock(body_text, n))
        elif kind == "GENERATOR":
            if not content:
                out.notes.append(f"block {n + 1}: empty ===GENERATOR=== ignored")
                continue
            pending = ("\n".join(content) + "\n", n)
        elif kind == "VALIDATOR":
            if content:
                out.validators.append("\n".join(content) + "\n")
            else:
                out.notes.append(f"block {n + 1}: empty ===VALIDATOR=== ignored")
        else:  # SEEDS
            if pending is None:
                out.notes.append(f"block {n + 1}: ===SEEDS=== without a generator ignored")
                continue
            m = _INT.search(" ".join(content))
            if m is None:
                out.notes.append(
                    f"block {n + 1}: ===SEEDS=== holds no integer; {DEFAULT_SEEDS} seeds swept"
                )
                out.items.append(GeneratorBlock(pending[0], DEFAULT_SEEDS, pending[1], False))
            else:
                seeds = int(m.group(0))
                if not 0 <= seeds <= max_seeds:
                    clamped = min(max(seeds, 0), max_seeds)
                    out.notes.append(
                        f"block {n + 1}: {seeds} seeds asked, {clamped} swept (at most {max_seeds})"
                    )
                    seeds = clamped
                out.items.append(GeneratorBlock(pending[0], seeds, pending[1]))
            pending = None
    if pending is not None:
        out.items.append(_missing_seeds(pending, out))
    return out


def _missing_seeds(pending: tuple[str, int], out: ParsedReply) -> GeneratorBlock:
    out.notes.append(
        f"block {pending[1] + 1}: ===GENERATOR=== without ===SEEDS===; {DEFAULT_SEEDS} seeds swept"
    )
    return GeneratorBlock(pending[0], DEFAULT_SEEDS, pending[1], False)
