"""The literals of source code, found by the language's own tokenizer (TestSuiteBench Figure 13).

Two steps of candidate refinement ask which literals a piece of code holds: the hard-coding
check (a mutant that adds a literal its target test uses may only differ on the test's own
inputs) and the literal-perturbation re-run (which renames those literals in the test).  Both
must see the same literals, and every one of them: a regular expression over the text cannot
tell ``" ".join(["1"] * 33)`` from a string ``".join(["`` and miss the ``33``, nor a digit in a
comment from one in code.  So the literals come from a tokenizer:

* Python through :mod:`tokenize`: NUMBER and STRING tokens, a unary minus directly before a
  number making it negative, strings decoded by :func:`ast.literal_eval`, and the constant
  parts (and numbers) of f-strings;
* C, C++, Rust and Go through their tree-sitter grammars (the operator mutants' parsers): the
  number, string, character and raw-string literal nodes, a ``#define``'s body parsed too.

Comments are never literals.  A literal's ``value`` is what it means, not how it is spelt
(``0x21``, ``33u`` and ``33`` are all ``33``; ``'a'`` in C and ``"a"`` in Python are both
``a``), so a C mutant's bound compares with a Python test's input.  Code fragments (the lines
of a diff) are tokenized as far as they go: a tokenizer error restarts on the next line.
"""

from __future__ import annotations

import ast
import io
import keyword
import re
import tokenize
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from suitebench.construct.treesitter_ops import _parser
from suitebench.construct.treesitter_ops import language_of as treesitter_language

__all__ = ["LiteralKind", "SourceLiteral", "find_literals", "language_for", "literal_values"]


class LiteralKind(StrEnum):
    NUMBER = "number"
    STRING = "string"


@dataclass(frozen=True)
class SourceLiteral:
    """One literal: its kind, its value, and where it is written (character offsets, 0-based
    lines).  An f-string yields one record per constant part, each spanning the whole string."""

    kind: LiteralKind
    value: str
    start: int
    end: int
    first_line: int
    last_line: int


def language_for(path: str) -> str:
    """The tokenizer for a file: its tree-sitter grammar, else Python's (whose tokens --
    numbers, quoted strings, ``#`` comments -- fit most other languages' data too)."""
    language = treesitter_language(path)
    return "python" if language in (None, "bash") else language  # shell: no literal reader


def find_literals(text: str, language: str) -> list[SourceLiteral]:
    """Every literal of ``text`` in ``language`` (``python``, ``c``, ``cpp``, ``rust``,
    ``go``), in source order."""
    if language == "python":
        return list(_python_literals(text))
    return _treesitter_literals(text, language)


def literal_values(text: str, language: str) -> set[str]:
    return {lit.value for lit in find_literals(text, language)}


# -- numbers ------------------------------------------------------------------------------------

_C_INT = re.compile(
    r"(?P<body>0x[0-9a-f]+|0b[01]+|0o?[0-7]+|[0-9]+)(?:[ulz]*|[iu](?:8|16|32|64|128|size))",
    re.IGNORECASE,
)
_C_FLOAT = re.compile(
    r"(?P<body>(?:\d+\.\d*|\.\d+|\d+)(?:e[+-]?\d+)?)(?:[fl]|f16|f32|f64|f128|bf16)?",
    re.IGNORECASE,
)
_HEX_FLOAT = re.compile(r"0x[0-9a-f]*\.?[0-9a-f]*p[+-]?\d+[fl]?", re.IGNORECASE)


def _canonical(value: object, spelling: str) -> str:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return spelling
    return str(value) if isinstance(value, int) else repr(value)


def _python_number(spelling: str) -> str:
    try:
        return _canonical(ast.literal_eval(spelling), spelling)
    except (ValueError, SyntaxError):
        return spelling


def _c_number(spelling: str) -> str:
    """The value of a C, C++, Rust or Go number literal, digit separators and suffixes gone;
    its spelling when it is none we can read (an imaginary number, a user-defined suffix)."""
    clean = spelling.replace("_", "").replace("'", "")
    sign, clean = ("-", clean[1:].lstrip()) if clean.startswith("-") else ("", clean)
    value: int | float | None = None
    if match := _C_INT.fullmatch(clean):
        body = match.group("body").lower()
        if body.startswith(("0x", "0b", "0o")):
            value = int(body, {"x": 16, "b": 2, "o": 8}[body[1]])
        else:
            value = int(body, 8 if len(body) > 1 and body.startswith("0") else 10)
    elif match := _C_FLOAT.fullmatch(clean):
        value = float(match.group("body"))
    elif _HEX_FLOAT.fullmatch(clean):
        value = float.fromhex(clean.rstrip("fFlL"))
    if value is None:
        return spelling
    return _canonical(-value if sign else value, spelling)


# -- Python -------------------------------------------------------------------------------------

_SKIPPED = {tokenize.COMMENT, tokenize.NL, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}
_CLOSERS = {")", "]", "}"}
_FSTRING_START = getattr(tokenize, "FSTRING_START", None)  # Python 3.12 splits f-strings
_FSTRING_END = getattr(tokenize, "FSTRING_END", None)


def _tolerant_tokens(lines: list[str]) -> Iterator[tokenize.TokenInfo]:
    """The tokens of possibly broken code (a diff's lines: a dedent to nowhere, an unclosed
    bracket): after an error, tokenizing starts again on the line after the last token."""
    first = 0
    while first < len(lines):
        last = first
        try:
            source = io.StringIO("".join(lines[first:])).readline
            for tok in tokenize.generate_tokens(source):
                shift = (tok.start[0] + first, tok.start[1]), (tok.end[0] + first, tok.end[1])
                last = max(last, shift[1][0] - 1)
                yield tok._replace(start=shift[0], end=shift[1])
            return
        except (tokenize.TokenError, SyntaxError):
            first = max(last + 1, first + 1)


def _unary(previous: tokenize.TokenInfo | None) -> bool:
    """Whether a ``-`` after ``previous`` is a sign (``[-1]``, ``return -1``), not a minus."""
    if previous is None or previous.type == tokenize.NEWLINE:
        return True
    if previous.type == tokenize.OP:
        return previous.string not in _CLOSERS
    return (
        previous.type == tokenize.NAME
        and keyword.iskeyword(previous.string)
        and (previous.string not in {"True", "False", "None"})
    )


def _string_value(spelling: str) -> str | None:
    try:
        value = ast.literal_eval(spelling)
    except (ValueError, SyntaxError):
        return None
    if isinstance(value, bytes):
        return value.decode("utf-8", "backslashreplace")
    return value if isinstance(value, str) else None


def _fstring_constants(spelling: str) -> list[tuple[LiteralKind, str]]:
    """The constant text and the numbers of an f-string (``f"{n} of 33"``: ``" of 33"``)."""
    try:
        tree = ast.parse(spelling.strip(), mode="eval")
    except SyntaxError:
        return []
    found: list[tuple[LiteralKind, str]] = []

    def visit(node: ast.AST) -> None:  # depth first: the parts in the order they are written
        if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
            operand = node.operand
            if isinstance(operand, ast.Constant) and isinstance(operand.value, (int, float)):
                found.append((LiteralKind.NUMBER, _canonical(-operand.value, "")))
                return
        if isinstance(node, ast.Constant):
            if isinstance(node.value, str):
                found.append((LiteralKind.STRING, node.value))
            elif isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
                found.append((LiteralKind.NUMBER, _canonical(node.value, repr(node.value))))
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _python_literals(text: str) -> Iterator[SourceLiteral]:
    lines = text.splitlines(keepends=True)
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line))

    def offset(point: tuple[int, int]) -> int:
        row = min(point[0] - 1, len(starts) - 1)
        return starts[row] + point[1]

    previous: tokenize.TokenInfo | None = None
    sign: tokenize.TokenInfo | None = None  # a unary minus just seen
    fstring: list[tokenize.TokenInfo] = []  # a 3.12 f-string's start tokens, nested
    for tok in _tolerant_tokens(lines):
        if _FSTRING_START is not None and tok.type == _FSTRING_START:
            fstring.append(tok)
            continue
        if fstring:
            if tok.type == _FSTRING_END:
                opened = fstring.pop()
                if not fstring:
                    tok = tok._replace(
                        type=tokenize.STRING,
                        start=opened.start,
                        string=text[offset(opened.start) : offset(tok.end)],
                    )
            if fstring:
                continue
        if tok.type in _SKIPPED:
            continue
        start, end = offset(tok.start), offset(tok.end)
        rows = tok.start[0] - 1, tok.end[0] - 1
        if tok.type == tokenize.NUMBER:
            value = _python_number(tok.string)
            if sign is not None:
                start, rows = offset(sign.start), (sign.start[0] - 1, rows[1])
                value = value[1:] if value.startswith("-") else "-" + value
            yield SourceLiteral(LiteralKind.NUMBER, value, start, end, *rows)
        elif tok.type == tokenize.STRING:
            prefix = tok.string[: len(tok.string) - len(tok.string.lstrip("rRbBuUfF"))]
            if "f" in prefix.lower():
                for kind, value in _fstring_constants(tok.string):
                    yield SourceLiteral(kind, value, start, end, *rows)
            elif (decoded := _string_value(tok.string)) is not None:
                yield SourceLiteral(LiteralKind.STRING, decoded, start, end, *rows)
        sign = tok if tok.type == tokenize.OP and tok.string == "-" and _unary(previous) else None
        previous = tok


# -- C, C++, Rust, Go ---------------------------------------------------------------------------

_TS_NUMBERS = {"number_literal", "integer_literal", "float_literal", "int_literal",
               "imaginary_literal", "negative_literal"}  # fmt: skip
_TS_STRINGS = {"string_literal", "char_literal", "raw_string_literal",
               "interpreted_string_literal", "rune_literal"}  # fmt: skip
_TS_TEXT = {"string_content", "character", "raw_string_content",
            "raw_string_literal_content", "interpreted_string_literal_content"}  # fmt: skip
_RUST_UNICODE = re.compile(r"\\u\{([0-9a-fA-F]+)\}")


def _unescape(sequence: str) -> str:
    """One escape sequence of a C-family string (``\\n``, ``\\x41``, ``\\101``, ``\\u{41}``)."""
    if match := _RUST_UNICODE.fullmatch(sequence):
        return chr(int(match.group(1), 16))
    decoded = _string_value('"' + sequence + '"')
    return decoded if decoded is not None else sequence


def _ts_string(node: Any, source: bytes) -> str:
    def text(n: Any) -> str:
        return source[n.start_byte : n.end_byte].decode("utf-8", "replace")

    parts = [
        _unescape(text(c)) if c.type == "escape_sequence" else text(c)
        for c in node.children
        if c.type in _TS_TEXT or c.type == "escape_sequence"
    ]
    if parts or node.child_count:
        return "".join(parts)
    body = text(node)[1:-1]  # a leaf (Go's rune literal): its quotes stripped
    return _unescape(body) if body.startswith("\\") else body


def _negated(node: Any) -> bool:
    """``-5`` parsed as a unary minus applied to the literal ``5``."""
    parent = node.parent
    return (
        parent is not None
        and parent.type == "unary_expression"
        and parent.child_count == 2
        and parent.children[0].type == "-"
        and parent.children[1].id == node.id
    )


def _treesitter_literals(text: str, language: str, base: int = 0) -> list[SourceLiteral]:
    source = text.encode("utf-8")
    tree = _parser(language).parse(source)
    ascii_only = len(source) == len(text)

    def chars(byte: int) -> int:
        offset = byte if ascii_only else len(source[:byte].decode("utf-8", "replace"))
        return base + offset

    found: list[SourceLiteral] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type in _TS_NUMBERS:
            spelling = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
            outer = node.parent if _negated(node) else node
            if outer is not node:
                spelling = "-" + spelling
            found.append(
                SourceLiteral(
                    LiteralKind.NUMBER, _c_number(spelling), chars(outer.start_byte),
                    chars(node.end_byte), outer.start_point[0], node.end_point[0],
                )
            )  # fmt: skip
        elif node.type in _TS_STRINGS:
            found.append(
                SourceLiteral(
                    LiteralKind.STRING, _ts_string(node, source), chars(node.start_byte),
                    chars(node.end_byte), node.start_point[0], node.end_point[0],
                )
            )  # fmt: skip
        elif node.type == "preproc_arg":
            # A macro's body is unparsed text to the grammar: ``#define MAX_DEPTH 33``.
            body = source[node.start_byte : node.end_byte].decode("utf-8", "replace")
            line = node.start_point[0]
            for lit in _treesitter_literals(body, language, chars(node.start_byte)):
                found.append(
                    SourceLiteral(lit.kind, lit.value, lit.start, lit.end,
                                  lit.first_line + line, lit.last_line + line)
                )  # fmt: skip
        else:
            stack.extend(reversed(node.children))
    found.sort(key=lambda lit: lit.start)
    return found
