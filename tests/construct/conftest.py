"""Fixtures of the construction tests: small programs in every language operator mutants support,
each with operators, digits and comparisons hidden in comments and strings no mutant may touch."""

from __future__ import annotations

import textwrap

import pytest

# Text that must survive every mutant byte for byte: it sits in comments and strings.
PROTECTED = {
    "c": ["/* keep: a < b + 1 && c */", '"x <= 2 || y - 3\\n"', "// keep: i += 1"],
    "cpp": ["/* keep: a < b + 1 && c */", '"x <= 2 || y - 3"', "// keep: i += 1"],
    "rust": ["/* keep: a < b + 1 && c */", '"x <= 2 || y - 3"', "// keep: i += 1"],
    "go": ["/* keep: a < b + 1 && c */", '"x <= 2 || y - 3"', "// keep: i += 1"],
    "python": ["# keep: a < b + 1 and c", '"x <= 2 or y - 3"', '"""Doc: n + 1 < 2."""'],
}

PROGRAMS = {
    "clamp.c": textwrap.dedent(
        """\
        #include <stdio.h>
        /* keep: a < b + 1 && c */
        static long clamp(long x, long lo, long hi) {
            if (x < lo) return lo; // keep: i += 1
            if (x > hi && hi >= 0) return hi;
            return x;
        }
        int main(void) {
            long total = 0;
            for (int i = 0; i < 10; i++) total += clamp(i * 3, 2, 0x1F);
            printf("x <= 2 || y - 3\\n");
            printf("%ld\\n", total);
            return 0;
        }"""
    ),
    "clamp.cpp": textwrap.dedent(
        """\
        #include <iostream>
        /* keep: a < b + 1 && c */
        static long clamp(long x, long lo, long hi) {
            if (x < lo) return lo; // keep: i += 1
            if (x > hi && hi >= 0) return hi;
            return x;
        }
        int main() {
            long total = 0;
            for (int i = 0; i < 10; i++) total += clamp(i * 3, 2, 31);
            std::cout << "x <= 2 || y - 3" << std::endl;
            std::cout << total << std::endl;
            return 0;
        }
        """
    ),
    "clamp.rs": textwrap.dedent(
        """\
        /* keep: a < b + 1 && c */
        fn clamp(x: i64, lo: i64, hi: i64) -> i64 {
            if x < lo {
                return lo; // keep: i += 1
            }
            if x > hi && hi >= 0 {
                return hi;
            }
            x
        }

        fn main() {
            let mut total: i64 = 0;
            for i in 0..10 {
                total += clamp(i * 3, 2, 1_000);
            }
            println!("x <= 2 || y - 3");
            println!("{}", total);
        }
        """
    ),
    "clamp.go": textwrap.dedent(
        """\
        package main

        import "fmt"

        /* keep: a < b + 1 && c */
        func clamp(x, lo, hi int) int {
        \tif x < lo {
        \t\treturn lo // keep: i += 1
        \t}
        \tif x > hi && hi >= 0 {
        \t\treturn hi
        \t}
        \treturn x
        }

        func main() {
        \ttotal := 0
        \tfor i := 0; i < 10; i++ {
        \t\ttotal += clamp(i*3, 2, 31)
        \t}
        \tfmt.Println("x <= 2 || y - 3")
        \tfmt.Println(total)
        }
        """
    ),
    "clamp.py": textwrap.dedent(
        '''\
        """Doc: n + 1 < 2."""
        # keep: a < b + 1 and c


        def clamp(x: int, lo: int, hi: int) -> int:
            if x < lo:
                return lo
            if x > hi and hi >= 0:
                return hi
            return x


        def main() -> None:
            total = 0
            for i in range(10):
                total += clamp(i * 3, 2, 31)
                if total > 1000:
                    break
            print("x <= 2 or y - 3")
            print(total, [1, 2, 3][1:2], not total, -total)


        __all__ = ["clamp", "main"]
        '''
    ),
}

LANGUAGE = {"clamp.c": "c", "clamp.cpp": "cpp", "clamp.rs": "rust", "clamp.go": "go",
            "clamp.py": "python"}  # fmt: skip


@pytest.fixture
def programs() -> dict[str, str]:
    return PROGRAMS


@pytest.fixture
def protected() -> dict[str, list[str]]:
    """Per program: text in comments and strings that must survive every mutant."""
    return {
        name: [t for t in PROTECTED[lang] if t in PROGRAMS[name]] for name, lang in LANGUAGE.items()
    }
