"""``build refine`` end to end on the bundled C instance, and the pieces it is made of."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from suitebench.construct.refine import hardcoded_literals, refine_instance
from suitebench.construct.tomledit import drop_mutant_tables
from suitebench.model.instance import load_instance
from suitebench.run.store import Store

BUNDLED = Path(__file__).parents[2] / "src" / "suitebench" / "data" / "instances"


@pytest.mark.slow
def test_refine_rpn_end_to_end(tmp_path: Path) -> None:
    expected = tomllib.loads((BUNDLED / "rpn-c" / "expected.toml").read_text())
    store = Store(tmp_path / "store.sqlite")
    report = refine_instance(
        load_instance(BUNDLED / "rpn-c"),
        store=store,
        out=tmp_path / "rpn",
        cache_dir=tmp_path / "builds",
    )
    store.close()
    decisions = {d.id: d for d in report.mutants}
    # Survivors of the reference suite (expected.toml) are not killed by their target.
    for mutant, killers in expected["kills"].items():
        if not killers:
            assert decisions[mutant].reason == "not killed by its target"
    # A stale patch is dropped with a reason naming its file; a broken build too.
    assert "c18.diff does not apply" in decisions["c18"].reason
    # ... and the compiler's own error line says why the misspelt field does not build.
    assert decisions["c17"].reason.startswith("build_error: rpn.c:") and not decisions["c17"].kept
    assert "error:" in decisions["c17"].reason and "dept" in decisions["c17"].reason
    # At most 3 per section, ranked by (target kill, unrelated killers).
    kept = [d for d in report.mutants if d.kept]
    per_section: dict[str, int] = {}
    for d in kept:
        per_section[d.section or ""] = per_section.get(d.section or "", 0) + 1
        assert d.killed_by_target and (d.unrelated_fraction or 0) <= 0.2
    assert max(per_section.values()) <= 3
    capped = [d for d in report.mutants if "top 3" in d.reason]
    assert capped, "the Operators section has more than 3 good candidates"
    for d in capped:
        peers = [k for k in kept if k.section == d.section]
        assert all(k.unrelated <= d.unrelated for k in peers)
    # The paper's figures, before and after.
    assert report.before["mutants"] == 18 and report.after["mutants"] == len(kept)
    assert report.after["killed_by_target"] == len(kept)
    assert report.after["killed_exactly_by_target"] >= report.before["killed_exactly_by_target"]
    # The refined copy lists exactly the kept mutants; the original is untouched.
    assert [m.id for m in load_instance(tmp_path / "rpn").mutants] == [d.id for d in kept]
    assert len(load_instance(BUNDLED / "rpn-c").mutants) == 18
    saved = json.loads((tmp_path / "rpn" / "refine.json").read_text())
    assert saved["after"] == report.after


def test_literal_hardcoding_is_flagged(tmp_path: Path) -> None:
    patch = tmp_path / "m.diff"
    patch.write_text(
        "--- a/core.py\n+++ b/core.py\n@@ -1,2 +1,3 @@\n def total(xs):\n"
        "+    if xs == [3, 17]:\n+        return 21\n     return sum(xs)\n"
    )
    test = "def test_total():\n    assert total([3, 17]) == 20\n"
    assert hardcoded_literals(patch, test) == {"3", "17"}
    logic = tmp_path / "logic.diff"
    logic.write_text(
        "--- a/core.py\n+++ b/core.py\n@@ -1,2 +1,2 @@\n def total(xs):\n"
        "-    return sum(xs)\n+    return sum(xs[1:])\n"
    )
    assert hardcoded_literals(logic, test) == set()


def test_drop_mutant_tables_keeps_everything_else() -> None:
    text = (
        '# my instance\nname = "x"\nsource = "src/"\n\n[[mutants]]\nid = "a"\npatch = "a.diff"\n'
        '# note on b\n\n[[mutants]]\nid = "b"\npatch = "b.diff"\n\n[sections_map]\n"t::x" = ["S"]\n'
    )
    out = drop_mutant_tables(text, {"a"})
    assert 'id = "a"' not in out and 'id = "b"' in out and "# my instance" in out
    assert tomllib.loads(out)["sections_map"] == {"t::x": ["S"]}


def test_cli_refine_rejects_an_instance_without_mutants(tmp_path: Path) -> None:
    root = tmp_path / "inst"
    shutil.copytree(BUNDLED / "intervals-pkg", root)
    toml = root / "instance.toml"
    toml.write_text(drop_mutant_tables(toml.read_text(), {f"p{i:02d}" for i in range(1, 12)}))
    exe = Path(sys.executable).parent / "suitebench"
    proc = subprocess.run(
        [str(exe), "--store", str(tmp_path / "s.sqlite"), "build", "refine", str(root)],
        capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert proc.returncode == 2
    assert "instance.toml" in proc.stderr and "mutants" in proc.stderr
