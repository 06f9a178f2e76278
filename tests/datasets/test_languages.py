"""Judges' language labels with their standards (``GNU C++20``, ``C11``, ``MS C++ 2017``)."""

from __future__ import annotations

import pytest

from suitebench.datasets.languages import Dialect, Lang, LanguageDrop, dialect_from_text
from suitebench.datasets.polygon import polygon_language


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("GNU C++17", Dialect(Lang.CPP, "gnu++17")),
        ("GNU C++20 (64)", Dialect(Lang.CPP, "gnu++20")),
        ("GNU G++20 11.2.0 (64 bit, winlibs)", Dialect(Lang.CPP, "gnu++20")),
        ("GNU G++17 7.3.0", Dialect(Lang.CPP, "gnu++17")),
        ("GNU C++11", Dialect(Lang.CPP, "gnu++11")),
        ("GNU C++0x", Dialect(Lang.CPP, "gnu++11")),
        ("Clang++20 Diagnostics", Dialect(Lang.CPP, "gnu++20")),
        ("MS C++ 2017", Dialect(Lang.CPP, "gnu++17")),
        ("C++23 (GCC 14-64, msys2)", Dialect(Lang.CPP, "gnu++23")),
        ("C++", Lang.CPP),  # no standard named: the judge's default
        ("GNU C11", Dialect(Lang.C, "gnu11")),
        ("C99", Dialect(Lang.C, "gnu99")),
        ("GNU C", Lang.C),
        ("Java 21", Dialect(Lang.JAVA, "21")),  # javac --release 21
        ("Java 1.8", Dialect(Lang.JAVA, "8")),
        ("Java 11 64bit", Dialect(Lang.JAVA, "11")),
        ("Java", Lang.JAVA),  # no release named: this JDK's
        ("Python 3", Lang.PYTHON3),
        ("PyPy 3-64", Lang.PYPY3),
        ("Python 2", LanguageDrop("python2: no interpreter")),
        ("C++26", LanguageDrop("language C++26: standard C++26 not known here")),
        ("Kotlin 1.9", LanguageDrop("language Kotlin 1.9: not imported")),
    ],
)
def test_labels(label: str, expected: object) -> None:
    assert dialect_from_text(label) == expected


@pytest.mark.parametrize(
    ("kind", "expected"),
    [
        ("cpp.g++17", Dialect(Lang.CPP, "gnu++17")),
        ("cpp.gcc13-64-winlibs-g++20", Dialect(Lang.CPP, "gnu++20")),
        ("cpp.msys2-mingw64-9-g++17", Dialect(Lang.CPP, "gnu++17")),
        ("cpp.g++", Lang.CPP),
        ("c.gcc", Dialect(Lang.C, "gnu11")),
        ("java11", Dialect(Lang.JAVA, "11")),
        ("java8", Dialect(Lang.JAVA, "8")),
        ("python.3", Lang.PYTHON3),
        ("python.pypy3", Lang.PYPY3),
        ("python.2", LanguageDrop("python2: no interpreter")),
        ("kotlin17", LanguageDrop("language kotlin17: not imported")),
    ],
)
def test_polygon_types(kind: str, expected: object) -> None:
    assert polygon_language(kind) == expected
