"""Operator mutants for Python on libcst's concrete syntax tree (as mutmut does).

Every mutation is an edit of the exact source range of one node, so the rest of the file --
comments, formatting, quotes -- is untouched and the diff shows only the change.  Type
annotations and docstrings are never mutated: a mutant there changes nothing a test can see.
"""

from __future__ import annotations

from collections.abc import Sequence

import libcst as cst
from libcst.metadata import CodeRange, MetadataWrapper, PositionProvider

from suitebench.construct.edits import Edit, MutationSite

__all__ = ["PYTHON_OPERATORS", "python_sites"]

_ARITH: dict[type[cst.CSTNode], Sequence[str]] = {
    cst.Add: ["-"],
    cst.Subtract: ["+"],
    cst.Multiply: ["/"],
    cst.Divide: ["*"],
    cst.FloorDivide: ["/"],
    cst.Modulo: ["/"],
    cst.Power: ["*"],
    cst.LeftShift: [">>"],
    cst.RightShift: ["<<"],
    cst.BitAnd: ["|"],
    cst.BitOr: ["&"],
    cst.BitXor: ["&"],
}
_AUG: dict[type[cst.CSTNode], Sequence[str]] = {
    cst.AddAssign: ["-="],
    cst.SubtractAssign: ["+="],
    cst.MultiplyAssign: ["/="],
    cst.DivideAssign: ["*="],
    cst.FloorDivideAssign: ["/="],
    cst.ModuloAssign: ["/="],
    cst.BitAndAssign: ["|="],
    cst.BitOrAssign: ["&="],
}
_COMPARE: dict[type[cst.CSTNode], Sequence[str]] = {
    cst.LessThan: ["<=", ">="],
    cst.LessThanEqual: ["<", ">"],
    cst.GreaterThan: [">=", "<="],
    cst.GreaterThanEqual: [">", "<"],
    cst.Equal: ["!="],
    cst.NotEqual: ["=="],
    cst.In: ["not in"],
    cst.NotIn: ["in"],
    cst.Is: ["is not"],
    cst.IsNot: ["is"],
}
PYTHON_OPERATORS = (
    "arithmetic",
    "assignment",
    "comparison",
    "boolean",
    "unary",
    "constant",
    "string",
    "return_value",
    "delete_statement",
    "remove_call",
    "slice_bound",
    "range_bound",
    "swap_arguments",
    "break_continue",
)


class _Collector(cst.CSTVisitor):
    METADATA_DEPENDENCIES = (PositionProvider,)

    def __init__(self, path: str, source: bytes) -> None:
        self.path = path
        self.source = source
        self.text = source.decode("utf-8")
        self.line_starts = [0]
        for line in source.splitlines(keepends=True):
            self.line_starts.append(self.line_starts[-1] + len(line))
        self.lines = self.text.splitlines(keepends=True)
        self.sites: list[MutationSite] = []
        self.functions: list[str] = []
        self.annotation_depth = 0
        self.body_depth = 0  # function bodies entered (not their decorators or defaults)

    # -- positions --------------------------------------------------------------------------

    def _offset(self, line: int, column: int) -> int:
        prefix = self.lines[line - 1][:column] if line - 1 < len(self.lines) else ""
        return self.line_starts[line - 1] + len(prefix.encode("utf-8"))

    def _range(self, node: cst.CSTNode) -> tuple[int, int, int]:
        pos: CodeRange = self.get_metadata(PositionProvider, node)
        start = self._offset(pos.start.line, pos.start.column)
        end = self._offset(pos.end.line, pos.end.column)
        return start, end, pos.start.line

    def _outer(self, node: cst.CSTNode) -> tuple[int, int, int]:
        """``_range`` with the node's own parentheses (``not (a < b)``: the operand is
        ``(a < b)``; libcst's positions leave them out), so an edit keeps them paired."""
        start, end, line = self._range(node)
        lpar = getattr(node, "lpar", None)
        rpar = getattr(node, "rpar", None)
        if lpar:
            start, _, line = self._range(lpar[0])
        if rpar:
            _, end, _ = self._range(rpar[-1])
        return start, end, line

    def _code(self, node: cst.CSTNode) -> str:
        start, end, _ = self._range(node)
        return self.source[start:end].decode("utf-8")

    def _add(self, node: cst.CSTNode, operator: str, what: str, replacement: str) -> None:
        start, end, line = self._range(node)
        self._add_range(start, end, line, operator, what, replacement)

    def _add_range(
        self, start: int, end: int, line: int, operator: str, what: str, replacement: str
    ) -> None:
        if self.annotation_depth:
            return
        self.sites.append(
            MutationSite(
                self.path,
                line,
                operator,
                f"{self.path}:{line}: {what}",
                ".".join(self.functions),
                Edit(start, end, replacement.encode("utf-8")),
                self.body_depth > 0,
            )
        )

    # -- scopes -----------------------------------------------------------------------------

    def visit_FunctionDef(self, node: cst.FunctionDef) -> None:
        self.functions.append(node.name.value)

    def leave_FunctionDef(self, original_node: cst.FunctionDef) -> None:
        self.functions.pop()

    def visit_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        self.body_depth += 1

    def leave_FunctionDef_body(self, node: cst.FunctionDef) -> None:
        self.body_depth -= 1

    def visit_ClassDef(self, node: cst.ClassDef) -> None:
        self.functions.append(node.name.value)

    def leave_ClassDef(self, original_node: cst.ClassDef) -> None:
        self.functions.pop()

    def visit_Annotation(self, node: cst.Annotation) -> None:
        self.annotation_depth += 1

    def leave_Annotation(self, original_node: cst.Annotation) -> None:
        self.annotation_depth -= 1

    def visit_Expr(self, node: cst.Expr) -> bool:
        if isinstance(node.value, (cst.SimpleString, cst.ConcatenatedString, cst.FormattedString)):
            return False  # a docstring or a bare string: nothing to observe
        if isinstance(node.value, cst.Call) and self.functions:
            self._add(
                node, "delete_statement", f"call '{_short(self._code(node))}' removed", "pass"
            )
        return True

    def visit_Assign(self, node: cst.Assign) -> bool:
        names = {t.target.value for t in node.targets if isinstance(t.target, cst.Name)}
        return not names & {"__all__", "__version__", "__slots__"}  # declarations, not logic

    def visit_Import(self, node: cst.Import) -> bool:
        return False

    def visit_ImportFrom(self, node: cst.ImportFrom) -> bool:
        return False

    def visit_Decorator(self, node: cst.Decorator) -> bool:
        return False

    # -- operators --------------------------------------------------------------------------

    def visit_BinaryOperation(self, node: cst.BinaryOperation) -> None:
        for new in _ARITH.get(type(node.operator), []):
            old = self._code(node.operator)
            self._add(node.operator, "arithmetic", f"'{old}' -> '{new}'", new)

    def visit_AugAssign(self, node: cst.AugAssign) -> None:
        for new in _AUG.get(type(node.operator), []):
            old = self._code(node.operator)
            self._add(node.operator, "assignment", f"'{old}' -> '{new}'", new)

    def visit_ComparisonTarget(self, node: cst.ComparisonTarget) -> None:
        for new in _COMPARE.get(type(node.operator), []):
            old = " ".join(self._code(node.operator).split())
            self._add(node.operator, "comparison", f"'{old}' -> '{new}'", new)

    def visit_BooleanOperation(self, node: cst.BooleanOperation) -> None:
        new = "or" if isinstance(node.operator, cst.And) else "and"
        old = "and" if new == "or" else "or"
        self._add(node.operator, "boolean", f"'{old}' -> '{new}'", new)

    def visit_UnaryOperation(self, node: cst.UnaryOperation) -> None:
        if isinstance(node.operator, cst.Plus):
            return
        start, _, line = self._range(node)
        operand_start, _, _ = self._outer(node.expression)
        old = self._code(node.operator).strip()
        self._add_range(start, operand_start, line, "unary", f"'{old}' removed", "")

    def visit_Integer(self, node: cst.Integer) -> None:
        try:
            value = int(node.value.replace("_", ""), 0)
        except ValueError:
            return
        self._add(node, "constant", f"{node.value} -> {value + 1}", str(value + 1))
        if value > 0:
            self._add(node, "constant", f"{node.value} -> {value - 1}", str(value - 1))

    def visit_SimpleString(self, node: cst.SimpleString) -> None:
        prefix_len = len(node.prefix) + len(node.quote)
        start, end, line = self._range(node)
        body = node.value[prefix_len : len(node.value) - len(node.quote)]
        new = node.value[:prefix_len] + "XX" + body + "XX" + node.quote
        self._add_range(
            start, end, line, "string", f"string {_short(node.value)} -> {_short(new)}", new
        )

    def visit_Name(self, node: cst.Name) -> None:
        swap = {"True": "False", "False": "True", "None": '""'}.get(node.value)
        if swap is not None:
            self._add(node, "constant", f"{node.value} -> {swap}", swap)

    def visit_Return(self, node: cst.Return) -> None:
        value = node.value
        if value is None or (isinstance(value, cst.Name) and value.value == "None"):
            return
        self._add(
            value, "return_value", f"'return {_short(self._code(value))}' -> 'return None'", "None"
        )

    def visit_Break(self, node: cst.Break) -> None:
        self._add(node, "break_continue", "'break' -> 'continue'", "continue")

    def visit_Continue(self, node: cst.Continue) -> None:
        self._add(node, "break_continue", "'continue' -> 'break'", "break")

    def visit_Slice(self, node: cst.Slice) -> None:
        if node.lower is not None:
            start, _, line = self._range(node.lower)
            _, end, _ = self._range(node.lower)
            self._add_range(start, end, line, "slice_bound", "slice lower bound removed", "")
        if node.upper is not None:
            start, end, line = self._range(node.upper)
            self._add_range(start, end, line, "slice_bound", "slice upper bound removed", "")

    def visit_Call(self, node: cst.Call) -> None:
        positional = [a for a in node.args if a.keyword is None and not a.star]
        func = node.func
        if isinstance(func, cst.Name) and func.value == "range" and 1 <= len(positional) <= 3:
            stop = positional[1] if len(positional) >= 2 else positional[0]
            code = self._code(stop.value)
            for delta in ("+ 1", "- 1"):
                self._add(
                    stop.value,
                    "range_bound",
                    f"range stop {code} -> {code} {delta}",
                    f"({code}) {delta}",
                )
        if len(positional) >= 2 and positional[0] is node.args[0] and positional[1] is node.args[1]:
            first, second = positional[0].value, positional[1].value
            s1, e1, line = self._outer(first)
            s2, e2, _ = self._outer(second)
            a, b = self.source[s1:e1].decode("utf-8"), self.source[s2:e2].decode("utf-8")
            if a != b:
                between = self.source[e1:s2].decode("utf-8")
                self._add_range(
                    s1, e2, line, "swap_arguments", f"arguments {_short(a)}, {_short(b)} swapped",
                    b + between + a,
                )  # fmt: skip


def _short(text: str, width: int = 40) -> str:
    one = " ".join(text.split())
    return one if len(one) <= width else one[: width - 3] + "..."


def python_sites(path: str, source: bytes) -> list[MutationSite]:
    """Every operator mutation of one Python file, in source order.

    Raises ``libcst.ParserSyntaxError`` (or ``UnicodeDecodeError``) for a file that is not
    valid Python; the caller reports it.
    """
    module = cst.parse_module(source)
    wrapper = MetadataWrapper(module, unsafe_skip_copy=True)
    collector = _Collector(path, source)
    wrapper.visit(collector)
    return sorted(collector.sites, key=lambda s: (s.edit.start, s.edit.end, s.operator))
