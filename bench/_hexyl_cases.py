"""A suite of the team's for hexyl 0.8.0 (a hex viewer): inputs, options and what it prints.

Each case is a fixture file (``eval/fixtures/<case>.bin``, the bytes of a UTF-8 text with
control characters, NULs and non-ASCII letters in it) shown as ``./executable [OPTIONS] FILE``.
The expected outputs are worked out here from hexyl's documented layout (its README and
``--help``): 16 bytes a line in two panels of 8; the offset in 8 hex digits; each byte as two
hex digits and a space, a separator and a space after the 8th; then the characters, ``0`` for
NUL, the character itself for printable ASCII and the space, ``_`` for other ASCII whitespace,
``•`` for other ASCII, ``×`` for the rest; a short line padded to the full width; a border
(``unicode``, the default, ``ascii`` or ``none``) above, beside and below; ``--color never``
for plain text, ``always`` (the default) colouring each byte by its category (NUL and the
offset grey 242, printable cyan, whitespace green, other ASCII purple, the rest yellow) as ANSI
codes. ``-n N`` shows only the first N bytes, ``-s N`` skips N (and the offset shown starts
there), ``-o N`` adds N to the offset shown; N in decimal, ``0x`` hex or with a unit (``kB`` =
1000, ``KiB`` = 1024). Every case passes ``-v`` or holds no line of 16 equal bytes, so no line
is squeezed into ``*``.
"""

from __future__ import annotations

import random
from collections.abc import Callable

from _lua_cases import Case

BORDERS = {  # outer, inner, (left, line, cross, right) above, below
    "unicode": ("│", "┊", ("┌", "─", "┬", "┐"), ("└", "─", "┴", "┘")),
    "ascii": ("|", "|", ("+", "-", "+", "+"), ("+", "-", "+", "+")),
    "none": (" ", " ", None, None),
}


def as_char(b: int) -> str:
    if b == 0:
        return "0"
    if 0x21 <= b <= 0x7E or b == 0x20:
        return chr(b)
    if b in (0x09, 0x0A, 0x0C, 0x0D):
        return "_"
    return "•" if b < 0x80 else "×"


def color(b: int) -> str:
    if b == 0:
        return "38;5;242"
    if 0x21 <= b <= 0x7E:
        return "36"
    if b in (0x20, 0x09, 0x0A, 0x0C, 0x0D):
        return "32"
    return "35" if b < 0x80 else "33"


def paint(text: str, code: str | None) -> str:
    return text if code is None else f"\x1b[{code}m{text}\x1b[0m"


def hexdump(data: bytes, border: str = "unicode", colored: bool = False, offset: int = 0) -> str:
    """What hexyl prints for ``data`` (see the module)."""
    outer, inner, top, bottom = BORDERS[border]

    def rule(parts: tuple[str, str, str, str] | None) -> str:
        if parts is None:
            return ""
        left, h, cross, right = parts
        return f"{left}{h * 8}{cross}{h * 25}{cross}{h * 25}{cross}{h * 8}{cross}{h * 8}{right}\n"

    out = rule(top)
    for at in range(0, len(data), 16):
        chunk = data[at : at + 16]
        n = len(chunk)
        line = outer + paint(f"{at + offset:08x}", "38;5;242" if colored else None) + outer + " "
        for k, b in enumerate(chunk, 1):
            line += paint(f"{b:02x} ", color(b) if colored else None)
            line += inner + " " if k == 8 else ""
        line += " " * (3 * (8 - n)) + inner + " " * 25 + outer if n < 8 else " " * 3 * (16 - n)
        line += "" if n < 8 else outer
        for k, b in enumerate(chunk, 1):
            line += paint(as_char(b), color(b) if colored else None)
            line += inner if k == 8 else ""
        line += " " * (8 - n) + inner + " " * 8 + outer if n < 8 else " " * (16 - n) + outer
        out += line + "\n"
    return out + rule(bottom)


ALPHABET = (
    [chr(c) for c in range(0x20, 0x7F)] * 4 + ["\x00", "\t", "\n", "\r", "\x0c", "\x01", "\x1b"]
    + ["\x7f", "é", "ß", "€", "ü"]
)  # fmt: skip


def text(r: random.Random, lo: int, hi: int) -> str:
    """A fixture's text: no line of 16 equal bytes (nothing for squeezing to do)."""
    while True:
        s = "".join(r.choice(ALPHABET) for _ in range(r.randint(lo, hi)))
        data = s.encode()
        if all(len(set(data[i : i + 16])) > 1 for i in range(0, len(data) - 15, 16)):
            return s


def count(n: int, r: random.Random) -> str:
    """N as hexyl's options take it: decimal, hex, ``+N``, or with a unit."""
    form = r.randrange(4)
    return [str(n), hex(n), f"+{n}", f"{n}b"][form]


Gen = Callable[[random.Random], tuple[list[str], str, str]]


def plain(r: random.Random) -> tuple[list[str], str, str]:
    s = text(r, 1, 70)
    return ["--color", "never"], s, hexdump(s.encode())


def borders(r: random.Random) -> tuple[list[str], str, str]:
    s, border = text(r, 1, 40), r.choice(["ascii", "none", "unicode"])
    return ["--color=never", f"--border={border}"], s, hexdump(s.encode(), border)


def length(r: random.Random) -> tuple[list[str], str, str]:
    s = text(r, 10, 60)
    n = r.randint(0, len(s.encode()) + 3)
    flag = r.choice(["-n", "-c", "--length"])
    return [flag, count(n, r), "--color", "never"], s, hexdump(s.encode()[:n])


def skip(r: random.Random) -> tuple[list[str], str, str]:
    s = text(r, 20, 60)
    data = s.encode()
    k = r.randint(1, len(data) - 1)
    args = ["-s", count(k, r), "--color", "never"]
    if r.random() < 0.4:  # an explicit offset shown instead of the skip
        o = r.randint(0, 0xFFFF)
        args += ["-o", hex(o)]
        return args, s, hexdump(data[k:], offset=o)
    return args, s, hexdump(data[k:], offset=k)


def offset(r: random.Random) -> tuple[list[str], str, str]:
    s = text(r, 1, 50)
    o = r.choice([r.randint(0, 255), r.randint(0, 2**32), 1000, 1024])
    form = r.choice(["dec", "hex", "unit"])
    if form == "unit" and o in (1000, 1024):
        arg = "1kB" if o == 1000 else "1KiB"
    else:
        arg = str(o) if form == "dec" else hex(o)
    return ["--display-offset", arg, "--color", "never", "-v"], s, hexdump(s.encode(), offset=o)


def colors(r: random.Random) -> tuple[list[str], str, str]:
    s = text(r, 1, 36)
    border = r.choice(["unicode", "ascii"])
    return ["--border", border], s, hexdump(s.encode(), border, colored=True)


GENERATORS: dict[str, Gen] = {
    "plain": plain,
    "borders": borders,
    "length": length,
    "skip": skip,
    "offset": offset,
    "colors": colors,
}


def cases(count_: int, seed: int = 0) -> list[Case]:
    """``count_`` cases, categories in turn, seeded."""
    out: list[Case] = []
    streams = {c: random.Random(f"{seed}:{c}") for c in GENERATORS}
    numbers = dict.fromkeys(GENERATORS, 0)
    while len(out) < count_:
        for category, gen in GENERATORS.items():
            if len(out) == count_:
                break
            args, s, want = gen(streams[category])
            numbers[category] += 1
            name = f"{category}_{numbers[category]:04d}"
            out.append(
                Case(
                    category,
                    name,
                    s,
                    want,
                    files=((f"{name}.bin", s),),
                    args=(*args, f"eval/fixtures/{name}.bin"),
                )
            )
    return out
