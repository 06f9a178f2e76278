"""Operator mutants for shell scripts (bash, sh) on tree-sitter-bash's syntax tree.

A ProgramBench task may be a shell script (its calculator example is one). The operators are
the compiled languages' where the shell has them -- arithmetic and ``[[ ]]``/``(( ))``
comparisons, ``&&``/``||`` between commands, integer words -- plus the shell's own: a test
operator swapped (``-gt`` -> ``-ge``, ``-z`` -> ``-n``), an ``if``/``while``/``elif``
condition negated (``! { cond; }``, which negates any command list) and a command statement
replaced by the no-op ``:``.  Words, strings and comments are never touched.
"""

from __future__ import annotations

import re
from typing import Any

from suitebench.construct.edits import Edit

__all__ = ["SHELL_NAMES", "bash_edits", "is_shell_script"]

TEST_OPERATORS = {
    "-eq": ["-ne"], "-ne": ["-eq"], "-lt": ["-le", "-ge"], "-le": ["-lt", "-gt"],
    "-gt": ["-ge", "-le"], "-ge": ["-gt", "-lt"], "-z": ["-n"], "-n": ["-z"],
    "=": ["!="], "==": ["!="], "!=": ["=="], "<": [">"], ">": ["<"],
}  # fmt: skip
SHELL_NAMES = rb"\b(ba|da|k|z)?sh\b"
_STATEMENT_PARENTS = {"program", "compound_statement", "do_group", "if_statement",
                      "elif_clause", "else_clause", "case_item", "subshell"}  # fmt: skip
_NEGATABLE = {"if_statement", "elif_clause", "while_statement"}

_NodeEdit = tuple[str, str, Edit]


def is_shell_script(head: bytes) -> bool:
    """Whether a file's first bytes are a ``#!`` line naming a POSIX-family shell."""
    first = head.split(b"\n", 1)[0]
    return first.startswith(b"#!") and re.search(SHELL_NAMES, first) is not None


def bash_edits(
    node: Any, function: str, tables: dict[str, dict[str, list[str]]]
) -> list[_NodeEdit]:
    """The mutations of one node of a shell script's tree (``tables``: the shared operator
    tables by operator name, so ``+`` becomes ``-`` in a shell as in C)."""
    kind = node.type
    if kind == "binary_expression":
        return _binary_edits(node, tables)
    if kind == "unary_expression":
        return _test_operator_edits(node)
    if kind == "list":
        return _swapped(node, {"logical": tables["logical"]})
    if kind == "number" and _counts(node):
        return _number_edits(node)
    if kind in _NEGATABLE:
        return _negation_edits(node)
    if kind == "command" and _is_statement(node):
        what = f"command '{_short(node.text)}' replaced by ':'"
        return [("delete_statement", what, Edit(node.start_byte, node.end_byte, b":"))]
    return []


def _operator(node: Any) -> Any:
    op = node.child_by_field_name("operator")
    if op is not None:
        return op
    return next((c for c in node.children if not c.is_named or c.type == "test_operator"), None)


def _swapped(node: Any, tables: dict[str, dict[str, list[str]]]) -> list[_NodeEdit]:
    op = _operator(node)
    if op is None:
        return []
    token = op.text.decode("utf-8", "replace")
    return [
        (name, f"'{token}' -> '{new}'", Edit(op.start_byte, op.end_byte, new.encode()))
        for name, table in tables.items()
        for new in table.get(token, [])
    ]


def _binary_edits(node: Any, tables: dict[str, dict[str, list[str]]]) -> list[_NodeEdit]:
    op = _operator(node)
    if op is not None and op.type == "test_operator":
        return _swapped(node, {"relational": TEST_OPERATORS})
    # Inside [[ ]], == and != compare strings, < and > sort them: the test table; in (( ))
    # and $(( )) the C-like tables.
    if _inside(node, "test_command"):
        return _swapped(node, {"relational": TEST_OPERATORS})
    return _swapped(node, {k: v for k, v in tables.items() if k != "assignment"})


def _test_operator_edits(node: Any) -> list[_NodeEdit]:
    op = _operator(node)
    if op is None or op.type != "test_operator":
        return []
    return _swapped(node, {"relational": TEST_OPERATORS})


def _number_edits(node: Any) -> list[_NodeEdit]:
    text = node.text.decode("utf-8", "replace")
    if not text.isdigit():
        return []
    value = int(text)
    news = [value + 1] + ([value - 1] if value > 0 else [])
    return [
        (
            "constant",
            f"integer {text} -> {new}",
            Edit(node.start_byte, node.end_byte, str(new).encode()),
        )
        for new in news
    ]


def _negation_edits(node: Any) -> list[_NodeEdit]:
    """The condition (every child the grammar marks ``condition``, the ``;`` included) negated
    as ``! { cond; }``: ``!`` alone would negate only the list's last pipeline."""
    parts = [c for i, c in enumerate(node.children) if node.field_name_for_child(i) == "condition"]
    commands = [c for c in parts if c.is_named]
    if not commands:
        return []
    start, end = commands[0].start_byte, commands[-1].end_byte
    text = node.text[start - node.start_byte : end - node.start_byte]
    what = f"condition '{_short(text)}' negated"
    return [("negate_condition", what, Edit(start, end, b"! { " + text + b"; }"))]


def _counts(node: Any) -> bool:
    """A number the script computes with: in an expression, an assignment, or the status of
    ``exit``/``return`` -- not any other command's argument (``echo 5`` prints a word)."""
    parent = node.parent
    if parent is None or parent.type != "command":
        return True
    name = parent.child_by_field_name("name")
    return name is not None and name.text in (b"exit", b"return")


def _is_statement(node: Any) -> bool:
    parent = node.parent
    if parent is None or parent.type not in _STATEMENT_PARENTS:
        return False
    index = next(i for i, c in enumerate(parent.children) if c.id == node.id)
    return parent.field_name_for_child(index) != "condition"


def _inside(node: Any, kind: str) -> bool:
    parent = node.parent
    while parent is not None:
        if parent.type == kind:
            return True
        if parent.type in ("arithmetic_expansion", "compound_statement", "program"):
            return False
        parent = parent.parent
    return False


def _short(text: bytes, width: int = 40) -> str:
    one = " ".join(text.decode("utf-8", "replace").split())
    return one if len(one) <= width else one[: width - 3] + "..."
