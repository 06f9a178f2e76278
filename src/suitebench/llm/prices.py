"""What a model call costs: a price table in USD per million tokens, extensible by the user.

The bundled table (``prices.toml`` beside this module) lists public list prices of a few
widely used models at the time it was written; prices change, so a user's own TOML file
(``--prices FILE`` or ``$SUITEBENCH_PRICES``) is read on top of it and wins::

    [models."my-model"]
    input = 0.50     # USD per million prompt tokens
    output = 1.50    # USD per million completion tokens

A model is looked up by its exact name, then without a ``provider/`` prefix, then by the
longest table name it starts with (so ``gpt-4o-2024-08-06`` is priced as ``gpt-4o`` and
``gpt-4o-mini-2024-07-18`` as ``gpt-4o-mini``). A model the table does not know has no price:
its cost is ``None``, never a guessed zero.
"""

from __future__ import annotations

import math
import os
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from suitebench.model.errors import FormatError

__all__ = ["BUNDLED_PRICES", "PRICES_ENV", "Price", "PriceTable", "load_prices"]

BUNDLED_PRICES = Path(__file__).with_name("prices.toml")
PRICES_ENV = "SUITEBENCH_PRICES"


@dataclass(frozen=True)
class Price:
    """USD per million prompt (``input``) and completion (``output``) tokens."""

    input: float
    output: float

    def cost(self, prompt_tokens: int, completion_tokens: int) -> float:
        return (prompt_tokens * self.input + completion_tokens * self.output) / 1_000_000


class PriceTable:
    """Model name -> :class:`Price`; later tables override earlier ones."""

    def __init__(self, prices: Mapping[str, Price] | None = None) -> None:
        self.prices: dict[str, Price] = dict(prices or {})

    def update(self, other: PriceTable) -> PriceTable:
        self.prices.update(other.prices)
        return self

    def lookup(self, model: str) -> Price | None:
        if model in self.prices:
            return self.prices[model]
        bare = model.rsplit("/", 1)[-1]
        if bare in self.prices:
            return self.prices[bare]
        best = max((n for n in self.prices if bare.startswith(n)), key=len, default=None)
        return self.prices[best] if best is not None else None

    def cost(self, model: str, prompt_tokens: int, completion_tokens: int) -> float | None:
        price = self.lookup(model)
        return None if price is None else price.cost(prompt_tokens, completion_tokens)

    @classmethod
    def from_file(cls, path: str | os.PathLike[str]) -> PriceTable:
        """Read a price TOML file; a malformed one raises :class:`FormatError`."""
        file = Path(path)
        try:
            data = tomllib.loads(file.read_text(encoding="utf-8"))
        except OSError as exc:
            raise FormatError(file, "(file)", f"a readable price table: {exc}") from None
        except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
            raise FormatError(file, "(syntax)", f"valid TOML: {exc}") from None
        unknown = set(data) - {"models"}
        if unknown:
            raise FormatError(file, sorted(unknown)[0], "unknown key (only [models.NAME] tables)")
        models = data.get("models", {})
        if not isinstance(models, dict):
            raise FormatError(file, "models", "a table of [models.NAME] entries")
        prices: dict[str, Price] = {}
        for name, entry in models.items():
            field = f"models.{name}"
            if not isinstance(entry, dict) or set(entry) != {"input", "output"}:
                raise FormatError(
                    file, field, "a table with exactly 'input' and 'output' (USD per 1M tokens)"
                )
            values = []
            for side in ("input", "output"):
                v = entry[side]
                if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
                    raise FormatError(file, f"{field}.{side}", f"a number >= 0, got {v!r}")
                if v < 0:
                    raise FormatError(file, f"{field}.{side}", f"a number >= 0, got {v!r}")
                values.append(float(v))
            prices[name] = Price(values[0], values[1])
        return cls(prices)


def load_prices(path: str | os.PathLike[str] | None = None) -> PriceTable:
    """The bundled table, then ``$SUITEBENCH_PRICES``, then ``path`` on top (each optional)."""
    table = PriceTable.from_file(BUNDLED_PRICES)
    env = os.environ.get(PRICES_ENV)
    if env:
        table.update(PriceTable.from_file(env))
    if path is not None:
        table.update(PriceTable.from_file(path))
    return table
