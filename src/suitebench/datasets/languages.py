"""Which language a dataset's program is written in, and the file it becomes.

The contract with the toolchains (``suitebench.run.program``): C++ is written as ``.cpp``,
C as ``.c``, Python 3 as ``.py``, Java as ``.java``. A C or C++ program whose label names a standard
(``GNU C++20``, ``C11``) is listed in ``[languages]`` with it (``cpp:gnu++20``, built with
``-std=gnu++20``; GNU extensions on, as the judges' gcc builds have them). A program the
dataset says ran under PyPy is written as ``.py`` and listed in the problem's
``[languages]`` table (a glob relative to the problem directory -> ``"pypy3"``). Python 2 has
no interpreter here, and a program of unknown or other language cannot be judged: each is
dropped with its reason, counted in the import summary, never silently.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "ALL_LANGUAGES",
    "CODECONTESTS_LANGUAGES",
    "Dialect",
    "Lang",
    "LanguageDrop",
    "codecontests_language",
    "dialect_from_text",
    "language_from_text",
]


class Lang(StrEnum):
    """A language an imported program is written in (the names ``--languages`` takes)."""

    CPP = "cpp"
    C = "c"
    PYTHON3 = "python3"
    PYPY3 = "pypy3"
    JAVA = "java"

    @property
    def suffix(self) -> str:
        return _SUFFIX[self]

    @property
    def table_name(self) -> str | None:
        """The name written in ``[languages]``, for languages the suffix alone does not say."""
        return "pypy3" if self is Lang.PYPY3 else None


_SUFFIX = {
    Lang.CPP: ".cpp",
    Lang.C: ".c",
    Lang.PYTHON3: ".py",
    Lang.PYPY3: ".py",
    Lang.JAVA: ".java",
}
ALL_LANGUAGES = tuple(Lang)

PYTHON2_REASON = "python2: no interpreter"
UNKNOWN_REASON = "unknown language"


@dataclass(frozen=True)
class LanguageDrop:
    """A program that cannot be imported for its language, and why (the summary's reason)."""

    reason: str


#: CodeContests' ``language`` class label (the dataset card's order).
CODECONTESTS_LANGUAGES: dict[int, Lang | LanguageDrop] = {
    0: LanguageDrop(UNKNOWN_REASON),
    1: LanguageDrop(PYTHON2_REASON),  # PYTHON: the card says Python 2
    2: Lang.CPP,
    3: Lang.PYTHON3,
    4: Lang.JAVA,
}
_CODECONTESTS_NAMES = {"UNKNOWN_LANGUAGE": 0, "PYTHON": 1, "CPP": 2, "PYTHON3": 3, "JAVA": 4}


def codecontests_language(label: int | str) -> Lang | LanguageDrop:
    """A CodeContests class label, as its integer (parquet) or its name."""
    if isinstance(label, str):
        if label.strip().isdigit():
            label = int(label)
        elif label.strip().upper() in _CODECONTESTS_NAMES:
            label = _CODECONTESTS_NAMES[label.strip().upper()]
        else:
            return language_from_text(label)
    return CODECONTESTS_LANGUAGES.get(label, LanguageDrop(f"{UNKNOWN_REASON} ({label})"))


def language_from_text(text: str) -> Lang | LanguageDrop:
    """A judge's language name (Codeforces' ``programmingLanguage``: ``GNU C++17``,
    ``PyPy 3-64``, ``Python 3``, ``Java 21``, ...; short names ``cpp``, ``py3``, ``pypy3``)."""
    t = text.strip().lower()
    if not t:
        return LanguageDrop(UNKNOWN_REASON)
    if "pypy" in t:
        return LanguageDrop(PYTHON2_REASON) if re.search(r"pypy\s*2", t) else Lang.PYPY3
    if re.search(r"python\s*2|\bpy2\b", t):
        return LanguageDrop(PYTHON2_REASON)
    if re.search(r"python|\bpy3?\b", t):
        return Lang.PYTHON3
    if re.search(r"c\+\+|\bcpp|g\+\+|clang\+\+", t):
        return Lang.CPP
    if re.search(r"javascript|kotlin", t):
        return LanguageDrop(f"language {text.strip()}: not imported")
    if re.search(r"\bjava\b|^java\d", t):
        return Lang.JAVA
    if re.fullmatch(r"(gnu\s*)?c(\s*\d+)?(\s*\(.*\))?|c|gcc.*", t):
        return Lang.C
    return LanguageDrop(f"language {text.strip()}: not imported")


@dataclass(frozen=True)
class Dialect:
    """A language with the standard its label names (``GNU C++20`` -> cpp, ``gnu++20``)."""

    lang: Lang
    standard: str


# The standards g++ and gcc here take (-std=gnu++NN, -std=gnuNN); a label naming another is
# dropped with its name rather than built under a standard it was not written for.
_CPP_STANDARDS = {"98": "98", "03": "03", "0x": "11", "11": "11", "14": "14", "1y": "14"}
_CPP_STANDARDS |= {"17": "17", "1z": "17", "20": "20", "2a": "20", "23": "23", "2b": "23"}
_C_STANDARDS = {"89": "89", "90": "90", "99": "99", "11": "11", "17": "17", "18": "17"}
_C_STANDARDS |= {"23": "23", "2x": "23"}
_CPP_LABEL = re.compile(r"(?:c\+\+|g\+\+|clang\+\+|\bcpp)\s*(\d{2,4}|0x|1[yz]|2[abc])\b", re.I)
_C_LABEL = re.compile(r"\bc\s*(\d{2}|2x)\b", re.I)
# A Java release in a label: ``Java 8``, ``Java 1.8``, ``Java 21 64bit``, Polygon's ``java11``.
_JAVA_LABEL = re.compile(r"\bjava\s*(?:1\.)?([1-9]\d?)\b", re.I)


def dialect_from_text(text: str) -> Lang | Dialect | LanguageDrop:
    """A judge's language label with its standard where it names one: ``GNU C++20 (64)``,
    ``GNU G++17 7.3.0``, ``Clang++20 Diagnostics``, ``MS C++ 2017``, ``C++23``, ``GNU C11``;
    otherwise as :func:`language_from_text`. A standard g++/gcc here does not take
    (``C++26``) drops the program with the label's name."""
    lang = language_from_text(text)
    if lang is Lang.CPP:
        m = _CPP_LABEL.search(text)
        if m is None:
            return lang
        year = m.group(1).lower()
        year = year[2:] if len(year) == 4 else year  # MS C++ 2017
        std = _CPP_STANDARDS.get(year)
        if std is None:
            return LanguageDrop(f"language {text.strip()}: standard C++{year} not known here")
        return Dialect(lang, f"gnu++{std}")
    if lang is Lang.C:
        m = _C_LABEL.search(text)
        if m is None:
            return lang
        std = _C_STANDARDS.get(m.group(1).lower())
        if std is None:
            return LanguageDrop(f"language {text.strip()}: standard C{m.group(1)} not known here")
        return Dialect(lang, f"gnu{std}")
    if lang is Lang.JAVA:
        m = _JAVA_LABEL.search(text)
        return lang if m is None else Dialect(lang, m.group(1))
    return lang
