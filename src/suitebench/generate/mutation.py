"""The two mutation baselines of the Auditors paper's CF-fresh comparison.

* ``cc-mutation`` -- CodeContests-style (AlphaCode's description: "randomly incrementing or
  decrementing integers, swapping and changing characters in strings", bit flips of binary
  strings), widened as the issue of this arm asks: integers +-1 and boundary values, digit and
  character edits, swaps and duplications of lines or tokens. Each mutant is one or two
  operators applied to an official or sample input drawn at random; mutants are not mutated
  again (the original mutated the dataset's tests).
* ``evalplus`` -- EvalPlus-style type-aware mutation. stdin carries no types, so (as the paper
  did) tokens are classified as integers, floats or strings; each mutant changes one token by
  its type (+-1, scaling, character edits), replaces it with an *ingredient* (a value of the
  same type seen in the seed pool), or injects a boundary value (0, 1, -1, the pool's max and
  min, the empty string); a smaller share of mutants are list edits of one line (remove,
  repeat or insert an element). As in EvalPlus, every mutant that passes the gate joins the
  seed pool and its values join the ingredients.

Inputs are tokenised into lines of whitespace-separated tokens and written back with single
spaces and newlines (the layout strict validators expect). Everything is driven by one
``random.Random`` seeded from ``--seed``: same seed, same bytes.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import Any

from suitebench.generate.records import Candidate, GenerateError
from suitebench.run.toolchain import Built

__all__ = ["CCMutation", "EvalPlusMutation", "Tokens", "parse_tokens", "render_tokens"]

Tokens = list[list[str]]
_INT = re.compile(r"^[+-]?\d+$")
_FLOAT = re.compile(r"^[+-]?(\d+\.\d*|\.\d+|\d+(\.\d*)?[eE][+-]?\d+)$")


def parse_tokens(data: bytes) -> Tokens:
    return [line.split() for line in data.decode("utf-8", "replace").splitlines()]


def render_tokens(lines: Tokens) -> bytes:
    return "".join(" ".join(t) + "\n" for t in lines).encode()


def kind_of(token: str) -> str:
    if _INT.match(token):
        return "int"
    if _FLOAT.match(token):
        return "float"
    return "str"


def _sites(lines: Tokens, pred: Callable[[str], bool]) -> list[tuple[int, int]]:
    return [(i, j) for i, ln in enumerate(lines) for j, t in enumerate(ln) if pred(t)]


def _edit_char(rng: random.Random, token: str) -> str:
    """Change one character to another of its class (a 0/1 string gets a bit flip)."""
    if not token:
        return token
    k = rng.randrange(len(token))
    c = token[k]
    if set(token) <= {"0", "1"}:
        new = "1" if c == "0" else "0"
    elif c.islower():
        new = rng.choice([x for x in "abcdefghijklmnopqrstuvwxyz" if x != c])
    elif c.isupper():
        new = rng.choice([x for x in "ABCDEFGHIJKLMNOPQRSTUVWXYZ" if x != c])
    elif c.isdigit():
        new = rng.choice([x for x in "0123456789" if x != c])
    else:
        new = rng.choice("abcxyz.#")
    return token[:k] + new + token[k + 1 :]


@dataclass
class _Base:
    seeds: Sequence[tuple[str, bytes]]  # (name, data) of the inputs mutated
    rng: random.Random

    def own_validator(self) -> Built | None:
        return None

    def details(self) -> dict[str, Any]:
        return {"seed_inputs": [n for n, _ in self.seeds]}

    def kept(self, candidate: Candidate) -> None:
        pass


class CCMutation(_Base):
    """CodeContests-style mutation of the official and sample inputs."""

    OPERATORS = (
        "int_step",
        "int_boundary",
        "digit_edit",
        "char_edit",
        "char_swap",
        "token_swap",
        "token_dup",
        "line_swap",
        "line_dup",
    )

    def __init__(self, seeds: Sequence[tuple[str, bytes]], rng: random.Random) -> None:
        if not seeds:
            raise GenerateError("cc-mutation needs official or sample inputs to mutate")
        super().__init__(seeds, rng)
        ints = [int(t) for _, d in seeds for ln in parse_tokens(d) for t in ln if _INT.match(t)]
        self.boundaries = [-1, 0, 1]
        if ints:
            lo, hi = min(ints), max(ints)
            self.boundaries = sorted({0, 1, -1, lo, hi, -hi, hi + 1, lo - 1})

    def _apply(self, op: str, lines: Tokens) -> bool:
        rng = self.rng
        nums = _sites(lines, lambda t: _INT.match(t) is not None)
        strs = _sites(lines, lambda t: kind_of(t) == "str")
        toks = _sites(lines, lambda t: True)
        if op in ("int_step", "int_boundary", "digit_edit") and not nums:
            return False
        if op in ("char_edit", "char_swap") and not strs:
            return False
        if op in ("token_swap", "token_dup") and not toks:
            return False
        if op in ("line_swap", "line_dup") and not lines:
            return False
        if op == "int_step":
            i, j = rng.choice(nums)
            lines[i][j] = str(int(lines[i][j]) + rng.choice((-1, 1)))
        elif op == "int_boundary":
            i, j = rng.choice(nums)
            lines[i][j] = str(rng.choice(self.boundaries))
        elif op == "digit_edit":
            i, j = rng.choice(nums)
            t = lines[i][j]
            sign, digits = ("-", t[1:]) if t.startswith(("-", "+")) else ("", t)
            digits = _edit_char(rng, digits).lstrip("0") or "0"
            lines[i][j] = sign + digits if digits != "0" else "0"
        elif op == "char_edit":
            i, j = rng.choice(strs)
            lines[i][j] = _edit_char(rng, lines[i][j])
        elif op == "char_swap":
            i, j = rng.choice(strs)
            chars = list(lines[i][j])
            if len(chars) < 2:
                return False
            a, b = rng.sample(range(len(chars)), 2)
            chars[a], chars[b] = chars[b], chars[a]
            lines[i][j] = "".join(chars)
        elif op == "token_swap":
            i = rng.choice([i for i, ln in enumerate(lines) if ln] or [0])
            if len(lines[i]) < 2:
                return False
            a, b = rng.sample(range(len(lines[i])), 2)
            lines[i][a], lines[i][b] = lines[i][b], lines[i][a]
        elif op == "token_dup":
            i, j = rng.choice(toks)
            lines[i].insert(j, lines[i][j])
        elif op == "line_swap":
            if len(lines) < 2:
                return False
            a, b = rng.sample(range(len(lines)), 2)
            lines[a], lines[b] = lines[b], lines[a]
        elif op == "line_dup":
            i = rng.randrange(len(lines))
            lines.insert(i, list(lines[i]))
        return True

    def candidates(self) -> Iterator[Candidate]:
        while True:
            name, data = self.rng.choice(self.seeds)
            lines = parse_tokens(data)
            applied: list[str] = []
            for _ in range(self.rng.choice((1, 1, 2))):
                for _ in range(8):  # an operator with no site to act on is redrawn
                    op = self.rng.choice(self.OPERATORS)
                    if self._apply(op, lines):
                        applied.append(op)
                        break
            yield Candidate(
                f"mutation of {name}: {'+'.join(applied) or 'none'}", render_tokens(lines)
            )


class EvalPlusMutation(_Base):
    """EvalPlus-style type-aware mutation with an ingredient pool and boundary injection."""

    def __init__(self, seeds: Sequence[tuple[str, bytes]], rng: random.Random) -> None:
        if not seeds:
            raise GenerateError("evalplus needs official or sample inputs as its seed pool")
        super().__init__(seeds, rng)
        if not any(parse_tokens(d) and any(parse_tokens(d)) for _, d in seeds):
            raise GenerateError("evalplus: the seed inputs hold no tokens to mutate")
        self.pool: list[tuple[str, bytes]] = list(seeds)
        self.ingredients: dict[str, set[str]] = {"int": set(), "float": set(), "str": set()}
        for _, d in seeds:
            self._add_ingredients(d)

    def _add_ingredients(self, data: bytes) -> None:
        for ln in parse_tokens(data):
            for t in ln:
                self.ingredients[kind_of(t)].add(t)

    def kept(self, candidate: Candidate) -> None:
        self.pool.append((candidate.origin, candidate.data))
        self._add_ingredients(candidate.data)

    def details(self) -> dict[str, Any]:
        return {**super().details(), "pool_size": len(self.pool)}

    def _ingredient(self, kind: str, default: str) -> str:
        values = sorted(self.ingredients[kind])
        return self.rng.choice(values) if values else default

    def _mutate_token(self, t: str) -> tuple[str | None, str]:
        """A new value of the same type (None: the token is removed) and the operator's name."""
        rng = self.rng
        kind = kind_of(t)
        op = rng.choice(("value", "value", "ingredient", "boundary"))
        if kind == "int":
            ints = sorted(int(x) for x in self.ingredients["int"]) or [0]
            if op == "value":
                return str(int(t) + rng.choice((-1, 1))), "int+-1"
            if op == "ingredient":
                return self._ingredient("int", t), "int-ingredient"
            return str(rng.choice((0, 1, -1, ints[-1], ints[0]))), "int-boundary"
        if kind == "float":
            x = float(t)
            if op == "value":
                return repr(rng.choice((x + 1, x - 1, x * 2, x / 2))), "float-value"
            if op == "ingredient":
                return self._ingredient("float", t), "float-ingredient"
            floats = sorted(float(v) for v in self.ingredients["float"]) or [0.0]
            return repr(rng.choice((0.0, 1.0, -1.0, floats[-1], floats[0]))), "float-boundary"
        if op == "value":
            if len(t) > 1 and rng.random() < 0.5:
                k = rng.randrange(len(t))
                return t[:k] + t[k + 1 :], "str-remove-char"
            return _edit_char(rng, t), "str-edit-char"
        if op == "ingredient":
            other = self._ingredient("str", t)
            if rng.random() < 0.5:
                return other, "str-ingredient"
            k = rng.randrange(len(t) + 1)
            return t[:k] + rng.choice(other) + t[k:], "str-insert-char"
        return None, "str-empty"

    def candidates(self) -> Iterator[Candidate]:
        rng = self.rng
        while True:
            name, data = rng.choice(self.pool)
            lines = parse_tokens(data)
            sites = _sites(lines, lambda t: True)
            if not sites:
                continue
            if rng.random() < 0.8:
                i, j = rng.choice(sites)
                new, op = self._mutate_token(lines[i][j])
                if new is None:
                    del lines[i][j]
                else:
                    lines[i][j] = new
            else:
                i = rng.choice(sorted({i for i, _ in sites}))
                j = rng.randrange(len(lines[i]))
                op = rng.choice(("list-remove", "list-repeat", "list-insert"))
                if op == "list-remove":
                    del lines[i][j]
                elif op == "list-repeat":
                    lines[i].insert(j, lines[i][j])
                else:
                    lines[i].insert(j, self._ingredient(kind_of(lines[i][j]), lines[i][j]))
            short = name if len(name) < 60 else name[:57] + "..."
            yield Candidate(f"{op} of {short}", render_tokens(lines))
