"""``build mutants`` chooses its files as a user says (``--include``/``--exclude``, mutmut's and
cosmic-ray's settings), names a language it has no operator for, and says what the caps drop.

The sources are written here with a known number of arithmetic operators per file, and
``--operator arithmetic`` keeps only those sites: each ``+`` is exactly one mutant (``-``), so
the expected counts are read off the sources, not computed by the code under test.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from suitebench.construct.treesitter_ops import grammar_installed

from ..cli_helpers import run_suitebench


def suitebench(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_suitebench(*args, store=tmp_path / "s.sqlite", timeout=300)


def _adds(name: str, count: int) -> str:
    """A function whose body holds ``count`` additions, one per line: ``count`` sites."""
    body = "".join(f"    x = x + {i}\n" for i in range(count))
    return f"def {name}(x):\n{body}    return x\n"


def _instance(root: Path, files: dict[str, str]) -> Path:
    """A CLI instance whose source holds ``files`` (Python mutants are compile-checked only)."""
    (root / "src").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src" / "build.sh").write_text("cp main.py executable\n")
    for rel, text in files.items():
        (root / "src" / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / "src" / rel).write_text(text)
    (root / "instance.toml").write_text('name = "adds"\nsource = "src"\ntests = "tests"\n')
    return root


# main.py: 2 sites, pkg/core.py: 3, pkg/curried/wrap.py: 4; pkg/test_core.py is a test (never
# mutated) -- 9 in all.
FILES = {
    "main.py": _adds("main", 2),
    "pkg/__init__.py": "",
    "pkg/core.py": _adds("core", 3),
    "pkg/curried/wrap.py": _adds("wrap", 4),
    "pkg/test_core.py": _adds("test_core", 5),
}


def _mutants(tmp_path: Path, root: Path, *args: str) -> tuple[dict, str]:
    proc = suitebench(tmp_path, "build", "mutants", str(root), "--operator", "arithmetic", *args)
    assert proc.returncode == 0, proc.stderr
    manifest = json.loads((root / "mutants" / "operators.json").read_text())
    return manifest, proc.stdout


def _files(manifest: dict) -> dict[str, int]:
    counts: dict[str, int] = {}
    for m in manifest["mutants"]:
        counts[m["file"]] = counts.get(m["file"], 0) + 1
    return counts


def test_include_and_exclude_globs_leave_files_out(tmp_path: Path) -> None:
    root = _instance(tmp_path / "inst", FILES)
    manifest, _ = _mutants(tmp_path, root)
    assert _files(manifest) == {"main.py": 2, "pkg/core.py": 3, "pkg/curried/wrap.py": 4}

    manifest, out = _mutants(tmp_path, root, "--exclude", "pkg/curried")
    assert _files(manifest) == {"main.py": 2, "pkg/core.py": 3}
    assert manifest["excluded_files"] == ["pkg/curried/wrap.py"]
    assert "--exclude pkg/curried" in out and "left out: 1 file(s): pkg/curried/wrap.py" in out

    manifest, _ = _mutants(tmp_path, root, "--include", "pkg/*", "--exclude", "*/wrap.py")
    assert _files(manifest) == {"pkg/core.py": 3}


def test_mutmut_do_not_mutate_and_paths_to_mutate_are_read(tmp_path: Path) -> None:
    root = _instance(tmp_path / "inst", FILES)
    (root / "src" / "pyproject.toml").write_text(
        '[tool.mutmut]\npaths_to_mutate = ["pkg/"]\ndo_not_mutate = ["*/curried/*"]\n'
    )
    manifest, out = _mutants(tmp_path, root)
    assert _files(manifest) == {"pkg/core.py": 3}
    assert "pyproject.toml [tool.mutmut] do_not_mutate = */curried/*" in out
    assert "pyproject.toml [tool.mutmut] paths_to_mutate = pkg/" in out
    # --no-project-settings: the settings are not read, every file is mutated again.
    manifest, _ = _mutants(tmp_path, root, "--no-project-settings")
    assert sum(_files(manifest).values()) == 9


def test_setup_cfg_and_cosmic_ray_settings_are_read(tmp_path: Path) -> None:
    root = _instance(tmp_path / "inst", FILES)
    (root / "src" / "setup.cfg").write_text("[mutmut]\ndo_not_mutate = main.py\n")
    (root / "src" / "cosmic-ray.toml").write_text(
        '[cosmic-ray]\nmodule-path = "pkg"\nexcluded-modules = ["pkg/core.py"]\n'
    )
    manifest, out = _mutants(tmp_path, root)
    assert _files(manifest) == {"pkg/curried/wrap.py": 4}
    assert "setup.cfg [mutmut] do_not_mutate = main.py" in out
    assert "cosmic-ray.toml [cosmic-ray] excluded-modules = pkg/core.py" in out


def test_caps_say_how_many_sites_they_drop_and_where(tmp_path: Path) -> None:
    # big.py: one function with 10 sites, mid.py: 7, small.py: 2 -- 19 sites.  A cap of 4 per
    # function drops 6 of big.py's and 3 of mid.py's: 9 of 19.
    files = {"big.py": _adds("big", 10), "mid.py": _adds("mid", 7), "small.py": _adds("s", 2)}
    root = _instance(tmp_path / "inst", files)
    manifest, out = _mutants(tmp_path, root, "--max-per-function", "4")
    assert (
        "capped: 9 of 19 sites dropped (max_per_file=400, max_per_function=4): "
        "big.py: 6, mid.py: 3" in out
    )
    assert manifest["capped"] == 9 and manifest["candidates"] == 19
    assert manifest["capped_by_file"] == {"big.py": 6, "mid.py": 3}
    assert _files(manifest) == {"big.py": 4, "mid.py": 4, "small.py": 2}
    # Under the caps nothing is said.
    _, out = _mutants(tmp_path, root, "--max-per-function", "10")
    assert "capped" not in out


def test_a_python_package_gets_every_site_unless_sampling_is_asked(tmp_path: Path) -> None:
    # One function of 45 additions: 45 sites, over the old default of 40 per function.
    root = tmp_path / "inst"
    (root / "src" / "adds").mkdir(parents=True)
    (root / "tests").mkdir()
    (root / "src" / "adds" / "__init__.py").write_text(_adds("many", 45))
    (root / "instance.toml").write_text(
        'name = "adds"\nkind = "python"\npackage = "adds"\nsource = "src"\ntests = "tests"\n'
    )
    manifest, out = _mutants(tmp_path, root)
    assert _files(manifest) == {"adds/__init__.py": 45}
    assert manifest["capped"] == 0
    assert manifest["caps"] == {"max_per_file": None, "max_per_function": None, "max_total": None}
    assert "every site kept: no sampling" in out
    # Asked: 45 - 40 = 5 dropped, and said.
    manifest, out = _mutants(tmp_path, root, "--max-per-function", "40")
    assert _files(manifest) == {"adds/__init__.py": 40}
    assert "capped: 5 of 45 sites dropped (max_per_function=40)" in out


def test_a_source_in_a_language_without_operators_names_it(tmp_path: Path) -> None:
    root = _instance(tmp_path / "inst", {"greet.js": 'console.log("hi");\n'})
    proc = suitebench(tmp_path, "build", "mutants", str(root))
    assert proc.returncode == 0, proc.stderr
    assert "0 mutants: no operator for javascript" in proc.stdout
    assert "0 sites" not in proc.stdout
    proc = suitebench(tmp_path, "--json", "build", "mutants", str(root))
    assert json.loads(proc.stdout)["no_operator"] == ["javascript"]


@pytest.mark.skipif(grammar_installed("bash"), reason="tree-sitter-bash is installed")
def test_a_shell_source_without_its_grammar_names_the_package(tmp_path: Path) -> None:
    root = _instance(tmp_path / "inst", {"greet.sh": 'echo "hi $1"\n', "tool": "#!/bin/sh\n"})
    proc = suitebench(tmp_path, "--json", "build", "mutants", str(root))
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["no_operator"] == ["bash (no tree-sitter-bash installed)"]
