"""Where a mutant is: the function a changed line is in, and its change on one line, as the
survivors listing prints them (expected values read off the sources below by hand)."""

from __future__ import annotations

from suitebench.suite.select.locate import function_at, function_line, main_change

PY = """LIMIT = 10


class Cart:
    def total(self, prices):
        return sum(prices)

    @staticmethod
    def empty():
        return []


def price(qty):
    if qty > LIMIT:
        return qty - 1
    return qty
"""

C = """#include <stdio.h>

typedef struct {
    int depth;
} Stack;

static int push(Stack *s, int v) {
    if (s->depth > 31) return 1;
    return 0;
}

int main(int argc, char **argv) {
    for (int i = 0; i < argc; i++)
        puts(argv[i]);
    return 0;
}
"""


def test_python_function_by_its_lines() -> None:
    assert function_at(PY, 1) == ""  # module level
    assert function_at(PY, 6) == "Cart.total"
    assert function_at(PY, 8) == "Cart.empty"  # its decorator's line
    assert function_at(PY, 15) == "price"
    assert function_at("def broken(:\n", 1) == ""


def test_c_function_by_the_diff_p_rule() -> None:
    assert function_line(C, 4) == ""  # inside a struct, no function head above
    assert function_line(C, 8) == "push"
    assert function_line(C, 14) == "main"  # `for (` is no function
    assert function_line(C, 11) == ""  # between two functions


def test_main_change_of_a_diff() -> None:
    diff = (
        "--- a/pkg/m.py\n+++ b/pkg/m.py\n@@ -13,4 +13,4 @@\n def price(qty):\n"
        "-    if qty > LIMIT:\n+    if qty >= LIMIT:\n         return qty - 1\n     return qty\n"
    )
    change = main_change(diff)
    assert change is not None
    assert (change.path, change.line) == ("pkg/m.py", 14)  # the hunk starts at 13: def, then it
    assert change.one_line() == "if qty > LIMIT:  ->  if qty >= LIMIT:"
    assert main_change("not a diff") is None
