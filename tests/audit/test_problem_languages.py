"""The ``[languages]`` table of problem.toml: globs relative to the problem naming the language
of the programs they match (the first match decides, else the extension), validated with
errors that name the file, the field and what was expected."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from suitebench.audit.runs import AuditEngine
from suitebench.model.problem import LANGUAGES, ProblemError, declared_language, load_problem
from suitebench.run.program import Language

from .problems import REF_PY, write_next_int

SUBS = {"a.py": REF_PY, "b.py": REF_PY, "c.txt": REF_PY}


def test_the_first_matching_glob_decides_and_the_extension_otherwise(tmp_path: Path) -> None:
    table = (
        "[languages]\n"
        '"submissions/a.py" = "pypy3"\n'
        '"submissions/*.py" = "python"\n'
        '"submissions/*.txt" = "pypy3"\n'
    )
    d = write_next_int(tmp_path / "p", SUBS, extra=table)
    p = load_problem(d)
    assert p.languages == (
        ("submissions/a.py", "pypy3"),
        ("submissions/*.py", "python"),
        ("submissions/*.txt", "pypy3"),
    )
    sub = d / "submissions"
    assert p.language_of(sub / "a.py") == "pypy3"  # before the broader glob
    assert p.language_of(sub / "b.py") == "python"
    assert p.language_of(sub / "c.txt") == "pypy3"  # no extension of its own
    assert p.language_of(d / "refs" / "ref.c") is None  # its extension decides
    # What the engine asks: the table of the problem holding the file.
    assert declared_language(sub / "a.py") == "pypy3"
    assert declared_language(d / "refs" / "ref.c") is None
    assert declared_language(tmp_path / "elsewhere.py") is None
    assert load_problem(write_next_int(tmp_path / "q", SUBS)).languages == ()


def test_the_engine_builds_in_the_language_the_table_names(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    d = write_next_int(tmp_path / "p", SUBS, extra='[languages]\n"submissions/c.txt" = "pypy3"\n')
    engine = make_engine()
    built = engine.build(d / "submissions" / "c.txt")
    assert built.ok and built.language is Language.PYPY3, built.message
    assert engine.build(d / "submissions" / "b.py").language is Language.PYTHON


@pytest.mark.parametrize(
    ("table", "field", "expected"),
    [
        ('"submissions/*.py" = "python2"', 'languages."submissions/*.py"', "no Python 2"),
        ('"submissions/*.py" = "kotlin"', 'languages."submissions/*.py"', "one of c, cpp"),
        ('"submissions/*.py" = 3', 'languages."submissions/*.py"', "a language name"),
        ('"/abs/*.py" = "python"', 'languages."/abs/*.py"', "relative to the problem"),
        ('"../x/*.py" = "python"', 'languages."../x/*.py"', "no '..'"),
        ('"nope/*.java" = "java"', 'languages."nope/*.java"', "matches no file"),
    ],
)
def test_a_bad_languages_entry_names_the_file_the_field_and_what_was_expected(
    tmp_path: Path, table: str, field: str, expected: str
) -> None:
    d = write_next_int(tmp_path / "p", SUBS, extra=f"[languages]\n{table}\n")
    with pytest.raises(ProblemError) as err:
        load_problem(d)
    assert err.value.field == field and expected in str(err.value)
    assert str(d / "problem.toml") in str(err.value)


def test_languages_must_be_a_table(tmp_path: Path) -> None:
    d = write_next_int(tmp_path / "p", SUBS, extra='languages = "pypy3"\n')
    with pytest.raises(ProblemError) as err:
        load_problem(d)
    assert err.value.field == "languages"


def test_the_language_names_are_the_engines() -> None:
    assert set(LANGUAGES) == {str(lang) for lang in Language} - {"script"}


def test_globs_follow_globs_own_rules(tmp_path: Path) -> None:
    """``**`` crosses directories, ``*`` stays within one and skips hidden files, as the glob
    that must match at load time does."""
    d = write_next_int(
        tmp_path / "p",
        SUBS,
        extra='[languages]\n"submissions/*/*.py" = "pypy3"\n"**/deep/*.py" = "python"\n',
    )
    for rel in ("submissions/x/n.py", "submissions/x/.h.py", "a/b/deep/m.py"):
        (d / rel).parent.mkdir(parents=True, exist_ok=True)
        (d / rel).write_text(REF_PY)
    p = load_problem(d)
    assert p.language_of(d / "submissions" / "x" / "n.py") == "pypy3"
    assert p.language_of(d / "submissions" / "x" / ".h.py") is None  # * skips a leading dot
    assert p.language_of(d / "submissions" / "a.py") is None  # one level too high
    assert declared_language(d / "a" / "b" / "deep" / "m.py") == "python"


CPP20_RANGES = """#include <algorithm>
#include <iostream>
#include <vector>
int main() {
    long long n; std::cin >> n;
    std::vector<long long> v{n, 1};
    std::ranges::sort(v);  // C++20: 'ranges' has not been declared under gnu++17
    std::cout << v[0] + v[1] << "\\n";
}
"""


def test_a_standard_after_the_language_sets_gccs_std(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    subs = {"r20.cpp": CPP20_RANGES, "r17.cpp": CPP20_RANGES}
    table = '[languages]\n"submissions/r20.cpp" = "cpp:gnu++20"\n'
    d = write_next_int(tmp_path / "p", subs, extra=table)
    assert load_problem(d).language_of(d / "submissions/r20.cpp") == "cpp:gnu++20"
    engine = make_engine()
    built = engine.build(d / "submissions" / "r20.cpp")
    assert built.ok, built.message
    # the same source under the default standard (gnu++17) does not build
    plain = engine.build(d / "submissions" / "r17.cpp")
    assert not plain.ok and "ranges" in plain.message


@pytest.mark.parametrize("value", ["cpp:gnu++99", "c:c++20", "cpp:", "java:1.8", "java:gnu11"])
def test_a_standard_gcc_does_not_take_is_refused(tmp_path: Path, value: str) -> None:
    d = write_next_int(tmp_path / "p", SUBS, extra=f'[languages]\n"submissions/a.py" = "{value}"\n')
    with pytest.raises(ProblemError) as err:
        load_problem(d)
    assert err.value.field == 'languages."submissions/a.py"'


# A Java 10 feature (``var``): a judge running Java 8 refuses it, one running Java 11 takes it.
JAVA_VAR = """import java.util.Scanner;
public class Main {
    public static void main(String[] args) {
        var in = new Scanner(System.in);
        System.out.println(in.nextLong() + 1);
    }
}
"""


def test_a_java_release_after_the_language_holds_javac_to_it(
    make_engine: Callable[..., AuditEngine], tmp_path: Path
) -> None:
    subs = {"j8.java": JAVA_VAR, "j11.java": JAVA_VAR}
    table = '[languages]\n"submissions/j8.java" = "java:8"\n"submissions/j11.java" = "java:11"\n'
    d = write_next_int(tmp_path / "p", subs, extra=table)
    assert load_problem(d).language_of(d / "submissions/j8.java") == "java:8"
    engine = make_engine()
    eleven = engine.build(d / "submissions" / "j11.java")
    assert eleven.ok, eleven.message
    eight = engine.build(d / "submissions" / "j8.java")
    assert not eight.ok and "var" in eight.message, eight.message
