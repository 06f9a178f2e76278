"""``build refine`` tells a mutant that special-cases its target's literals from a genuine one
by re-running the target with the literals perturbed (TestSuiteBench, Figure 13).

The instance is a small CLI, ``httpstatus``, that names the class of an HTTP status code
(``class 404`` -> ``404 client error``) and the range of a class (``range 4`` -> ``400-499``).
Its candidate mutants:

* ``s01`` special-cases the target's own input: ``if code == 404: return "server error"``;
* ``s02`` a real logic bug that happens to add the same literal: the client-error range ends
  at 403 (``if code >= 404: return "server error"``), wrong for 96 of the 100 4xx codes;
* ``s03`` a real logic bug adding no literal of the test: 4xx is named "server error";
* ``s04`` special-cases ``range 4``: every perturbation of 4 changes the expected range, so the
  reference fails the perturbed target and the check is not applicable.
"""

from __future__ import annotations

import difflib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from suitebench.construct.literals import (
    Flagged,
    check_literals,
    perturb_test_file,
    perturbations,
)
from suitebench.construct.refine import refine_instance
from suitebench.model.instance import load_instance
from suitebench.run.store import Store

MAIN_PY = textwrap.dedent(
    '''\
    """httpstatus: the class of an HTTP status code, and the codes of a class."""
    import sys

    CLASSES = {
        1: "informational",
        2: "success",
        3: "redirection",
        4: "client error",
        5: "server error",
    }


    def status_class(code):
        if not 100 <= code <= 599:
            raise ValueError(f"not an HTTP status code: {code}")
        return CLASSES[code // 100]


    def class_range(digit):
        if digit not in CLASSES:
            raise ValueError(f"no such class: {digit}")
        low = digit * 100
        return f"{low}-{low + 99}"


    def main(argv):
        if len(argv) != 3 or argv[1] not in ("class", "range"):
            print("usage: httpstatus class CODE | range DIGIT", file=sys.stderr)
            return 2
        try:
            number = int(argv[2])
            if argv[1] == "class":
                print(f"{number} {status_class(number)}")
            else:
                print(class_range(number))
        except ValueError as exc:
            print(exc, file=sys.stderr)
            return 2
        return 0


    sys.exit(main(sys.argv))
    '''
)

BUILD_SH = (
    "#!/bin/sh\nset -eu\n"
    'printf \'#!/bin/sh\\nexec python3 "$(dirname "$0")/main.py" "$@"\\n\' > executable\n'
    "chmod +x executable\n"
)

TESTS = {
    "test_class.py": textwrap.dedent(
        """\
        import subprocess


        def run(*args):
            return subprocess.run(
                ["./executable", *args], capture_output=True, text=True, timeout=30
            )


        def test_continue_is_informational():
            assert run("class", "100").stdout == "100 informational\\n"


        def test_ok_is_a_success():
            assert run("class", "200").stdout == "200 success\\n"


        def test_moved_is_a_redirection():
            assert run("class", "301").stdout == "301 redirection\\n"


        def test_not_found_is_a_client_error():
            assert run("class", "404").stdout == "404 client error\\n"


        def test_unavailable_is_a_server_error():
            assert run("class", "503").stdout == "503 server error\\n"


        def test_codes_past_599_are_rejected():
            done = run("class", "600")
            assert done.returncode == 2 and "not an HTTP status code" in done.stderr


        def test_words_are_rejected():
            assert run("class", "teapot").returncode == 2
        """
    ),
    "test_range.py": textwrap.dedent(
        """\
        import subprocess


        def run(*args):
            return subprocess.run(
                ["./executable", *args], capture_output=True, text=True, timeout=30
            )


        def test_client_errors_range():
            assert run("range", "4").stdout == "400-499\\n"


        def test_successes_range():
            assert run("range", "2").stdout == "200-299\\n"


        def test_unknown_class_is_rejected():
            assert run("range", "7").returncode == 2


        def test_usage():
            assert run().returncode == 2
        """
    ),
}

CLIENT = "tests/test_class.py::test_not_found_is_a_client_error"
RANGE = "tests/test_range.py::test_client_errors_range"
LOOKUP = "    return CLASSES[code // 100]\n"
MUTANTS = [
    ("s01", "Classes", CLIENT, LOOKUP,
     '    if code == 404:\n        return "server error"\n' + LOOKUP),
    ("s02", "Classes", CLIENT, LOOKUP,
     '    if code >= 404:\n        return "server error"\n' + LOOKUP),
    ("s03", "Classes", CLIENT, '    4: "client error",\n', '    4: "server error",\n'),
    ("s04", "Ranges", RANGE, "    low = digit * 100\n",
     '    if digit == 4:\n        return "400-498"\n    low = digit * 100\n'),
]  # fmt: skip


def write_httpstatus(root: Path) -> Path:
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text(MAIN_PY)
    (root / "src" / "build.sh").write_text(BUILD_SH)
    (root / "tests").mkdir()
    for name, text in TESTS.items():
        (root / "tests" / name).write_text(text)
    (root / "spec.md").write_text(
        "# httpstatus\n\n## Classes\n\n`class CODE` names the class.\n\n"
        "## Ranges\n\n`range DIGIT` prints the codes of a class.\n"
    )
    (root / "mutants").mkdir()
    lines = ['name = "httpstatus"', 'spec = "spec.md"', 'source = "src"', 'build = "build.sh"']
    lines.append('tests = "tests"')
    for mid, section, target, old, new in MUTANTS:
        assert MAIN_PY.count(old) == 1
        after = MAIN_PY.replace(old, new)
        diff = difflib.unified_diff(
            MAIN_PY.splitlines(keepends=True),
            after.splitlines(keepends=True),
            "a/main.py",
            "b/main.py",
        )
        (root / "mutants" / f"{mid}.diff").write_text("".join(diff))
        lines += ["", "[[mutants]]", f'id = "{mid}"', f'patch = "mutants/{mid}.diff"']
        lines += [f'section = "{section}"', f'target = "{target}"']
    (root / "instance.toml").write_text("\n".join(lines) + "\n")
    return root


def test_perturbations_are_near_in_range_and_never_collide() -> None:
    assert perturbations("404")[:2] == ["405", "403"]
    assert perturbations("3", avoid="run(4)") == ["2", "5", "1", "6", "0"]  # never negative
    assert "2000" in perturbations("1900") and "1800" in perturbations("1900")
    assert perturbations("-5")[:2] == ["-4", "-6"]
    assert perturbations("2.50")[:2] == ["2.51", "2.49"]
    renamed = perturbations("site1.test")
    assert renamed[0] == "tite1.test" and all(len(v) == len("site1.test") for v in renamed)
    # "site2.test" is already in the test: renaming site1 to it would merge two domains.
    assert "site2.test" not in perturbations("site1.test", avoid='["site2.test"]')


def test_only_the_target_function_is_perturbed() -> None:
    text = TESTS["test_class.py"]
    new = perturb_test_file(text, CLIENT, {"404": "405"})
    assert new is not None
    assert 'run("class", "405").stdout == "405 client error\\n"' in new
    assert new.replace("405", "404") == text
    # The target's other literals and the other tests stay byte for byte.
    assert perturb_test_file(text, CLIENT, {"999": "998"}) is None
    assert perturb_test_file(text, "tests/test_class.py::test_nowhere", {"404": "405"}) is None


def test_several_literals_are_renamed_in_one_pass() -> None:
    text = (
        "class TestHosts:\n"
        "    def test_add(self):\n"
        '        out = run("add", "site1.test", "site12", "3307")\n'
        '        assert out == "site1.test site12 3307 33070\\n"\n'
    )
    new = perturb_test_file(
        text,
        "tests/t.py::TestHosts::test_add",
        {"site1.test": "tite1.test", "site12": "site13", "3307": "3308"},
    )
    # Each occurrence once: "site13" is not renamed again, 33070 is another number.
    assert new is not None
    assert 'run("add", "tite1.test", "site13", "3308")' in new
    assert '"tite1.test site13 3308 33070\\n"' in new


@pytest.mark.slow
def test_refine_drops_the_literal_special_case_and_keeps_the_logic_mutant(tmp_path: Path) -> None:
    root = write_httpstatus(tmp_path / "httpstatus")
    store = Store(tmp_path / "store.sqlite")
    report = refine_instance(
        load_instance(root), store=store, out=tmp_path / "refined", cache_dir=tmp_path / "b"
    )
    store.close()
    d = {m.id: m for m in report.mutants}
    # All four are killed by their target and by no other test: the single-test criterion
    # cannot tell them apart.
    for mid in d:
        assert d[mid].killed_by_target and d[mid].unrelated == 0, (mid, d[mid])
    assert d["s01"].hardcoded == ["404"] == d["s02"].hardcoded
    assert d["s03"].hardcoded == [] and d["s03"].literal_check is None
    # s01: the target with 404 -> 405 (and 403) passes on it, as on the reference, while it
    # still kills s03 (the control): it only differs on the target's literal. Dropped.
    s01 = d["s01"].literal_check
    assert s01 is not None and s01.outcome == "literal_special_case"
    assert s01.perturbations == [{"404": "405"}, {"404": "403"}] and s01.killed_under == [
        False,
        False,
    ]
    assert s01.controls == ["s03"]
    assert not d["s01"].kept and d["s01"].reason.startswith("literal_special_case: ")
    # s02 adds the same literal but breaks the logic: the perturbed target still kills it.
    s02 = d["s02"].literal_check
    assert s02 is not None and s02.outcome == "genuine_kill" and s02.killed_under[0]
    assert d["s02"].kept and "404 -> 405 still kills it" in d["s02"].reason
    # s04: no perturbation of 4 keeps test_client_errors_range passing on the reference.
    s04 = d["s04"].literal_check
    assert s04 is not None and s04.outcome == "not_applicable" and s04.perturbations == []
    assert s04.tried == 6 and "with 4 -> 5 / 4 -> 3 / 4 -> 6" in s04.reason
    assert s04.reason.endswith("the target fails on the reference")
    assert d["s04"].kept and d["s04"].reason.startswith("not_applicable (kept, for a hand audit)")
    # The figures before and after.
    assert report.before["hardcodes_target_literal"] == 3
    assert report.before["literal_special_case"] == 1
    assert report.before["genuine_kill"] == 1 and report.before["not_applicable"] == 1
    assert report.after["mutants"] == 3 and report.after["literal_special_case"] == 0
    saved = json.loads((tmp_path / "refined" / "refine.json").read_text())
    assert saved["mutants"][0]["literal_check"]["outcome"] == "literal_special_case"
    assert [m.id for m in load_instance(tmp_path / "refined").mutants] == ["s02", "s03", "s04"]


@pytest.mark.slow
def test_cli_refine_reports_the_literal_checks(tmp_path: Path) -> None:
    root = write_httpstatus(tmp_path / "httpstatus")
    exe = Path(sys.executable).parent / "suitebench"
    base = [str(exe), "--store", str(tmp_path / "s.sqlite"), "build", "refine", str(root)]
    proc = subprocess.run(
        [*base, "--out", str(tmp_path / "a")], capture_output=True, text=True, timeout=600
    )
    assert proc.returncode == 0, proc.stderr
    assert "literal special cases" in proc.stdout
    assert "s01  literal_special_case: the target with 404 -> 405" in proc.stdout
    # Without the check the special case is only flagged, and kept.
    off = subprocess.run(
        [*base, "--out", str(tmp_path / "b"), "--no-literal-check"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert off.returncode == 0, off.stderr
    assert [m.id for m in load_instance(tmp_path / "b").mutants] == ["s01", "s02", "s03", "s04"]


LEAP_PY = textwrap.dedent(
    """\
    import sys


    def is_leap(year):
        return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)


    year = int(sys.argv[1])
    print(f"{year}: {'leap' if is_leap(year) else 'common'}")
    """
)

LEAP_TESTS = textwrap.dedent(
    """\
    import subprocess


    def run(year):
        return subprocess.run(["./executable", year], capture_output=True, text=True).stdout


    def test_century_is_common():
        assert run("1900") == "1900: common\\n"


    def test_fourth_year_is_leap():
        assert run("2024") == "2024: leap\\n"
    """
)

CENTURY = "tests/test_leap.py::test_century_is_common"


def write_leap(root: Path) -> Path:
    """``leap YEAR``; c01 special-cases 1900, c02 forgets the century rule (the control)."""
    (root / "src").mkdir(parents=True)
    (root / "src" / "main.py").write_text(LEAP_PY)
    (root / "src" / "build.sh").write_text(BUILD_SH)
    (root / "tests").mkdir()
    (root / "tests" / "test_leap.py").write_text(LEAP_TESTS)
    rule = "    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)\n"
    lines = ['name = "leap"', 'source = "src"', 'build = "build.sh"', 'tests = "tests"']
    for mid, new in (
        ("c01", "    if year == 1900:\n        return True\n" + rule),
        ("c02", "    return year % 4 == 0\n"),
    ):
        diff = difflib.unified_diff(
            LEAP_PY.splitlines(keepends=True),
            LEAP_PY.replace(rule, new).splitlines(keepends=True),
            "a/main.py",
            "b/main.py",
        )
        (root / "mutants").mkdir(exist_ok=True)
        (root / "mutants" / f"{mid}.diff").write_text("".join(diff))
        lines += ["", "[[mutants]]", f'id = "{mid}"', f'patch = "mutants/{mid}.diff"']
        lines += ['section = "Leap years"', f'target = "{CENTURY}"']
    (root / "instance.toml").write_text("\n".join(lines) + "\n")
    return root


@pytest.mark.slow
def test_a_perturbation_that_stops_testing_the_requirement_is_not_used(tmp_path: Path) -> None:
    """1900 -> 1901 still passes on the reference, but 1901 is no century: the target no longer
    kills c02 (which forgot the century rule), so that perturbation says nothing of c01.
    Only a century that is not a fourth one (1800, 2100) keeps the test meaningful."""
    instance = load_instance(write_leap(tmp_path / "leap"))
    flagged = [Flagged("c01", CENTURY, ("1900",))]
    store = Store(tmp_path / "store.sqlite")
    near = check_literals(
        instance, flagged, {CENTURY: ["c02"]}, store=store, cache_dir=tmp_path / "b"
    )["c01"]
    assert near.outcome == "not_applicable" and near.tried == 6
    assert "with 1900 -> 1901 / 1900 -> 1899" in near.reason
    assert near.reason.endswith("the target no longer kills c02")
    far = check_literals(
        instance, flagged, {CENTURY: ["c02"]}, store=store, cache_dir=tmp_path / "b", max_tries=14
    )["c01"]
    store.close()
    assert far.outcome == "literal_special_case"
    assert far.perturbations == [{"1900": "1800"}, {"1900": "2100"}]
    assert far.killed_under == [False, False] and far.tried == 13  # 2100 is the 13th
