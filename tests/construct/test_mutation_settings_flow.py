"""A project's mutation settings where the documented flow puts them: ``build init`` copies the
project's ``pyproject.toml`` into the instance's ``project/`` and its source root (``src/``)
to ``src/``, so mutmut's paths -- written from the project's root (``src/pkg/...``) -- must be
read there and matched under ``src/``; an ``instance.toml`` written at the project's root reads
them beside itself."""

from __future__ import annotations

import json
from pathlib import Path

from suitebench.cli.main import _register, app, hoist_global_options
from suitebench.construct.mutate_paths import path_filter, project_root_of

MUTMUT = """[tool.mutmut]
paths_to_mutate = ["src/pkg/"]
do_not_mutate = ["src/pkg/_version.py", "*/vendored/*"]
"""


def _filter(instance: Path, source: Path) -> tuple[Path, str, object]:
    root, prefix = project_root_of(instance, source)
    return root, prefix, path_filter(root, prefix=prefix)


def test_build_init_layout_reads_project_copy(tmp_path: Path) -> None:
    inst = tmp_path / "inst"
    (inst / "project").mkdir(parents=True)
    (inst / "src" / "pkg").mkdir(parents=True)
    (inst / "project" / "pyproject.toml").write_text(MUTMUT)
    (inst / "init.json").write_text(json.dumps({"python_project": {"source_prefix": "src"}}))
    root, prefix, paths = _filter(inst, inst / "src")
    assert (root, prefix) == (inst / "project", "src")
    assert paths.keeps("pkg/core.py")  # type: ignore[attr-defined]
    assert not paths.keeps("pkg/_version.py")  # type: ignore[attr-defined]
    assert not paths.keeps("pkg/vendored/six.py")  # type: ignore[attr-defined]
    assert any("do_not_mutate" in s for s in paths.settings_read)  # type: ignore[attr-defined]


def test_instance_at_project_root_and_source_paths(tmp_path: Path) -> None:
    (tmp_path / "lib" / "pkg").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.mutmut]\nsource_paths = ["lib/pkg/core.py"]\ndo_not_mutate = ["lib/pkg/gen.py"]\n'
    )
    root, prefix, paths = _filter(tmp_path, tmp_path / "lib")
    # the source root's place comes from the layout: lib/ under the project's root; mutmut 3's
    # source_paths names what to mutate, as paths_to_mutate did
    assert (root, prefix) == (tmp_path, "lib")
    assert paths.keeps("pkg/core.py")  # type: ignore[attr-defined]
    assert not paths.keeps("pkg/other.py") and not paths.keeps("pkg/gen.py")  # type: ignore[attr-defined]
    assert "pyproject.toml [tool.mutmut] source_paths = lib/pkg/core.py" in paths.settings_read  # type: ignore[attr-defined]


def test_no_settings_keeps_every_file(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    root, prefix, paths = _filter(tmp_path, tmp_path / "src")
    assert (root, prefix) == (tmp_path / "src", "")
    assert paths.keeps("anything.py")  # type: ignore[attr-defined]


def test_global_options_after_build_subcommands() -> None:
    import typer

    _register([])
    group = typer.main.get_command(app)
    commands = group.commands  # type: ignore[attr-defined]
    assert hoist_global_options(["build", "mutants", "X", "--json", "-j", "2"], commands) == [
        "--json", "-j", "2", "build", "mutants", "X",
    ]  # fmt: skip
    assert hoist_global_options(["build", "init", "R", "--out", "O", "--store=s"], commands) == [
        "--store=s", "build", "init", "R", "--out", "O",
    ]  # fmt: skip
    # after `--`, and after a command that stops at its first argument, nothing moves
    assert hoist_global_options(["sandbox", "--", "echo", "--json"], commands) == [
        "sandbox", "--", "echo", "--json",
    ]  # fmt: skip


def test_sites_the_caps_drop_are_named(tmp_path: Path) -> None:
    """``max_per_function = 1`` on two functions of 3 and 2 sites keeps one each: the other
    3 are named in ``capped_sites`` (file, line, function, operator), none of them kept."""
    from suitebench.construct.mutants import generate_operator_mutants, mutation_sites
    from suitebench.model.instance import load_instance

    source = (
        "def grow(n):\n"
        "    return n * 2 + 1\n"  # arithmetic * and +, and constants 2 and 1
        "\n\n"
        "def small(n):\n"
        "    return n < 10\n"  # a comparison and a constant
    )
    root = tmp_path / "inst"
    (root / "src" / "pkg").mkdir(parents=True)
    (root / "src" / "pkg" / "__init__.py").write_text(source)
    (root / "tests").mkdir()
    (root / "instance.toml").write_text(
        'name = "pkg"\nkind = "python"\npackage = "pkg"\nsource = "src"\ntests = "tests"\n'
    )
    every = mutation_sites("pkg/__init__.py", source.encode())
    kept, report = generate_operator_mutants(load_instance(root), max_per_function=1)
    per_function = {s.function for s in every}
    assert len(kept) == len(per_function)  # one site per function
    assert report.capped == len(every) - len(kept) == len(report.capped_sites)
    named = {(c["line"], c["operator"], c["description"]) for c in report.capped_sites}
    kept_sites = {(s.line, s.operator, s.description) for s, _ in kept}
    assert not named & kept_sites
    assert named | kept_sites == {(s.line, s.operator, s.description) for s in every}
    assert {c["function"] for c in report.capped_sites} <= per_function
