"""Loading instance.toml: strict, with errors that name the file, the field and the expectation."""

from __future__ import annotations

from pathlib import Path

import pytest

from suitebench.model.instance import InstanceError, InstanceKind, load_instance


def test_stats_instance_loads_with_sections_and_mutants(stats_instance: Path) -> None:
    inst = load_instance(stats_instance.parent)  # a directory works as well as the file
    assert inst.name == "stats"
    assert inst.kind is InstanceKind.CLI
    assert inst.build == "build.sh"  # picked up from the source, ProgramBench style
    assert inst.spec_sections() == ["stats", "Sum", "Max", "Clamp"]
    assert [m.id for m in inst.mutants][:2] == ["sum_no_overflow_check", "sum_neg_overflow"]
    first = inst.mutant("max_off_by_one")
    assert first.section == "Max"
    assert first.target == "tests/test_max.py::test_max_last"
    assert first.patch.is_file() and first.patch.is_absolute()


def test_python_instance_needs_its_package(intervals_instance: Path) -> None:
    inst = load_instance(intervals_instance)
    assert inst.kind is InstanceKind.PYTHON
    assert inst.package_dir() == inst.source / "intervals"
    text = intervals_instance.read_text().replace('package = "intervals"\n', "")
    intervals_instance.write_text(text)
    with pytest.raises(InstanceError) as err:
        load_instance(intervals_instance)
    assert err.value.field == "package"
    assert str(intervals_instance) in str(err.value)


@pytest.mark.parametrize(
    ("edit", "field", "expected"),
    [
        (lambda t: t.replace('name = "stats"', "name = 3"), "name", "non-empty string"),
        (lambda t: 'colour = "blue"\n' + t, "colour", "unknown key"),
        (lambda t: t + 'colour = "blue"\n', "mutants[7].colour", "unknown key"),
        (lambda t: t.replace('source = "src"', 'source = "nowhere"'), "source", "directory"),
        (lambda t: t.replace('kind = "cli"', 'kind = "rust"'), "kind", '"cli" or "python"'),
        (
            lambda t: t.replace("mutants/max_empty.diff", "mutants/gone.diff"),
            "mutants[3].patch",
            "existing file",
        ),
        (
            lambda t: t.replace('id = "max_empty"', 'id = "sum_neg_overflow"'),
            "mutants[3].id",
            "unique",
        ),
        (lambda t: t.replace('name = "stats"', 'name = "stats'), "<file>", "valid TOML"),
    ],
)
def test_bad_instance_names_file_field_and_expectation(
    stats_instance: Path, edit: object, field: str, expected: str
) -> None:
    stats_instance.write_text(edit(stats_instance.read_text()))  # type: ignore[operator]
    with pytest.raises(InstanceError) as err:
        load_instance(stats_instance)
    if field != "<file>":
        assert err.value.field == field
    assert expected in err.value.expected
    assert err.value.file == str(stats_instance)


def test_sections_map_from_file(stats_instance: Path) -> None:
    root = stats_instance.parent
    (root / "sections.toml").write_text(
        '"tests/test_sum.py::test_sum_small" = "Sum"\n'
        '"tests/test_max.py::test_max_last" = ["Max", "Sum"]\n'
    )
    text = stats_instance.read_text().replace(
        'tests = "tests"', 'tests = "tests"\nsections_map = "sections.toml"'
    )
    stats_instance.write_text(text)
    inst = load_instance(stats_instance)
    assert inst.sections_map["tests/test_max.py::test_max_last"] == ["Max", "Sum"]
    assert inst.sections_map["tests/test_sum.py::test_sum_small"] == ["Sum"]
