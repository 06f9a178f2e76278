"""Operator mutants for C, C++, Rust, Go and shell scripts on tree-sitter syntax trees.

Only nodes of the syntax tree are mutated (binary and assignment operators, integer
literals, conditions, expression statements), so comments, string and character literals and
unparsed preprocessor text are never touched.  Nodes inside a parse error are skipped: a
mutant of a part the parser did not understand would mean nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from functools import cache
from typing import Any

from suitebench.construct.bash_ops import bash_edits, is_shell_script
from suitebench.construct.edits import Edit, MutationSite

__all__ = ["LANGUAGES", "grammar_installed", "language_of", "treesitter_sites"]

# file extension -> grammar
LANGUAGES = {
    ".c": "c",
    ".h": "c",
    ".cc": "cpp",
    ".cpp": "cpp",
    ".cxx": "cpp",
    ".hpp": "cpp",
    ".hh": "cpp",
    ".rs": "rust",
    ".go": "go",
    ".sh": "bash",
    ".bash": "bash",
}

RELATIONAL = {"<": ["<=", ">="], "<=": ["<", ">"], ">": [">=", "<="], ">=": [">", "<"],
              "==": ["!="], "!=": ["=="]}  # fmt: skip
ARITHMETIC = {"+": ["-"], "-": ["+"], "*": ["/"], "/": ["*"], "%": ["*"], "<<": [">>"],
              ">>": ["<<"], "&": ["|"], "|": ["&"], "^": ["&"]}  # fmt: skip
LOGICAL = {"&&": ["||"], "||": ["&&"]}
ASSIGNMENT = {"+=": ["-="], "-=": ["+="], "*=": ["/="], "/=": ["*="], "%=": ["*="],
              "<<=": [">>="], ">>=": ["<<="], "&=": ["|="], "|=": ["&="], "^=": ["&="]}  # fmt: skip

_TABLES = {"relational": RELATIONAL, "arithmetic": ARITHMETIC, "logical": LOGICAL,
           "assignment": ASSIGNMENT}  # fmt: skip
_BINARY = "binary_expression"
_ASSIGN = {"assignment_expression", "compound_assignment_expr", "assignment_statement"}
_INTEGER = {"number_literal", "integer_literal", "int_literal"}
_CONDITIONAL = {"if_statement", "while_statement", "if_expression", "while_expression",
                "do_statement", "for_statement"}  # fmt: skip
_FUNCTIONS = {"function_definition", "function_item", "function_declaration",
              "method_declaration", "func_literal", "closure_expression",
              "lambda_expression"}  # fmt: skip
_DELETABLE = {"expression_statement", "inc_statement", "dec_statement"}
_INT_RE = re.compile(
    r"^(?P<body>0[xX][0-9a-fA-F_']+|0[bB][01_']+|0[oO]?[0-7_']*|[1-9][0-9_']*)"
    r"(?P<suffix>[uUlLzZ]*|(?:[iu](?:8|16|32|64|128|size)))$"
)


def language_of(path: str, head: bytes = b"") -> str | None:
    """The grammar of a file: by its extension, else (``head``: its first bytes) a shell
    script's ``#!`` line."""
    for ext, lang in LANGUAGES.items():
        if path.endswith(ext):
            return lang
    if head and "." not in path.rsplit("/", 1)[-1] and is_shell_script(head):
        return "bash"
    return None


def grammar_installed(lang: str) -> bool:
    """Whether the grammar package of ``lang`` (``tree_sitter_bash``...) is importable."""
    import importlib.util

    return importlib.util.find_spec(f"tree_sitter_{lang}") is not None


@cache
def _parser(lang: str) -> Any:
    import importlib

    import tree_sitter

    grammar = importlib.import_module(f"tree_sitter_{lang}")
    return tree_sitter.Parser(tree_sitter.Language(grammar.language()))


def _int_variants(text: str) -> list[tuple[str, str]]:
    """``(new literal, description)`` for an integer literal's value +1 and -1, keeping its
    base and suffix; floats and literals we cannot read are left alone."""
    match = _INT_RE.match(text)
    if not match:
        return []
    body, suffix = match.group("body"), match.group("suffix")
    clean = body.replace("_", "").replace("'", "")
    try:
        if clean[:2] in ("0x", "0X"):
            value, fmt = int(clean[2:], 16), (lambda v: f"{clean[:2]}{v:X}")
        elif clean[:2] in ("0b", "0B"):
            value, fmt = int(clean[2:], 2), (lambda v: f"{clean[:2]}{v:b}")
        elif clean[:2] in ("0o", "0O"):
            value, fmt = int(clean[2:], 8), (lambda v: f"{clean[:2]}{v:o}")
        elif clean.startswith("0") and len(clean) > 1:
            value, fmt = int(clean, 8), (lambda v: f"0{v:o}")
        else:
            value, fmt = int(clean), str
    except ValueError:
        return []
    out = [(fmt(value + 1) + suffix, f"{text} -> {value + 1}")]
    if value > 0:
        out.append((fmt(value - 1) + suffix, f"{text} -> {value - 1}"))
    return out


def _walk(node: Any, function: str, inside_error: bool) -> Iterator[tuple[Any, str]]:
    if node.type == "ERROR" or node.is_missing:
        inside_error = True
    if node.type in _FUNCTIONS:
        name = node.child_by_field_name("name") or node.child_by_field_name("declarator")
        while (
            name is not None
            and name.type not in ("identifier", "field_identifier")
            and (name.child_by_field_name("declarator") is not None)
        ):
            name = name.child_by_field_name("declarator")
        function = name.text.decode("utf-8", "replace") if name is not None else "<anonymous>"
    if not inside_error:
        yield node, function
    for child in node.children:
        yield from _walk(child, function, inside_error)


def _operator_child(node: Any) -> Any:
    op = node.child_by_field_name("operator")
    if op is not None:
        return op
    for child in node.children:  # grammars without an operator field: the unnamed token
        if not child.is_named:
            return child
    return None


def treesitter_sites(path: str, source: bytes) -> list[MutationSite]:
    """Every operator mutation of one C, C++, Rust, Go or shell file, in source order."""
    lang = language_of(path, source[:200])
    if lang is None:
        return []
    tree = _parser(lang).parse(source)
    sites: list[MutationSite] = []
    for node, function in _walk(tree.root_node, "", False):
        for operator, what, edit in _node_edits(node, function, lang):
            line = node.start_point[0] + 1
            where = f"{path}:{line}: {what}"
            sites.append(MutationSite(path, line, operator, where, function, edit, bool(function)))
    return sites


_NodeEdit = tuple[str, str, Edit]  # (operator, what it does, the edit)


def _node_edits(node: Any, function: str, lang: str) -> list[_NodeEdit]:
    """The mutations of one node, by its kind: an operator swapped, an integer changed, a
    condition negated, or (inside a function) a statement deleted."""
    kind = node.type
    if lang == "bash":
        return bash_edits(node, function, _TABLES)
    if kind == _BINARY or kind in _ASSIGN:
        return _operator_edits(node, kind in _ASSIGN)
    if kind in _INTEGER:
        text = node.text.decode("utf-8", "replace")
        return [
            ("constant", f"integer {what}", Edit(node.start_byte, node.end_byte, new.encode()))
            for new, what in _int_variants(text)
        ]
    if kind in _CONDITIONAL:
        return _negation_edits(node)
    if kind in _DELETABLE and function:
        return _deletion_edits(node, kind, lang)
    return []


def _operator_edits(node: Any, assign: bool) -> list[_NodeEdit]:
    """The node's operator swapped for each of its relational, arithmetic and logical
    replacements (or, in an assignment, its assignment ones)."""
    op = _operator_child(node)
    if op is None:
        return []
    token = op.text.decode()
    edits: list[_NodeEdit] = []
    table: dict[str, list[str]]
    for name, table in (
        ("relational", RELATIONAL),
        ("arithmetic", ARITHMETIC),
        ("logical", LOGICAL),
        ("assignment", ASSIGNMENT),
    ):
        if (name == "assignment") != assign:
            continue
        for new in table.get(token, []):
            edits.append(
                (name, f"'{token}' -> '{new}'", Edit(op.start_byte, op.end_byte, new.encode()))
            )
    return edits


def _negation_edits(node: Any) -> list[_NodeEdit]:
    """The condition of an ``if``/``while``/... negated, unless it is a declaration or a
    ``let`` pattern (which cannot be negated)."""
    cond = node.child_by_field_name("condition")
    if cond is None:
        return []
    inner = cond
    if cond.type in ("parenthesized_expression", "condition_clause"):
        named = [c for c in cond.children if c.is_named]
        if len(named) != 1 or named[0].type == "declaration":
            return []
        inner = named[0]
    if inner.type in ("let_condition", "let_chain", "init_declarator"):
        return []
    text = inner.text
    what = f"condition '{_short(text)}' negated"
    return [("negate_condition", what, Edit(inner.start_byte, inner.end_byte, b"!(" + text + b")"))]


def _deletion_edits(node: Any, kind: str, lang: str) -> list[_NodeEdit]:
    """The statement deleted (``;`` left in C and C++), unless it is a Rust block-like
    expression or an empty Go statement."""
    text = node.text
    if lang == "rust" and not text.rstrip().endswith(b";"):
        return []  # a block-like expression (if, match, loop): not a plain statement
    replacement = b";" if lang in ("c", "cpp") else b""
    if lang == "go" and kind == "expression_statement" and text.strip() == b"":
        return []
    what = f"statement '{_short(text)}' deleted"
    return [("delete_statement", what, Edit(node.start_byte, node.end_byte, replacement))]


def _short(text: bytes, width: int = 40) -> str:
    one = " ".join(text.decode("utf-8", "replace").split())
    return one if len(one) <= width else one[: width - 3] + "..."
