"""A mutant's diff applied in the process gives what GNU ``patch -p1 --fuzz=0`` gives; any
diff that is not a plain set of exactly placed hunks is left to ``patch`` itself."""

from __future__ import annotations

import difflib
import random
import subprocess
from pathlib import Path

import pytest

from suitebench.suite.execute import patching
from suitebench.suite.execute.patching import apply_exact, apply_patch

LEDGER = """\
\"\"\"A shop's ledger: totals, refunds and a running balance.\"\"\"

TAX = 0.2


def total(prices):
    s = 0
    for p in prices:
        s += p
    return s


def with_tax(amount):
    return round(amount * (1 + TAX), 2)


def refund(balance, amount):
    if amount > balance:
        raise ValueError("refund exceeds balance")
    return balance - amount


def running(entries):
    out = []
    balance = 0
    for e in entries:
        balance += e
        out.append(balance)
    return out
"""


def _tree(root: Path, text: str = LEDGER) -> Path:
    (root / "shop").mkdir(parents=True)
    (root / "shop" / "ledger.py").write_text(text)
    return root


def _diff(old: str, new: str, name: str = "shop/ledger.py", context: int = 3) -> str:
    return "".join(
        difflib.unified_diff(
            old.splitlines(keepends=True),
            new.splitlines(keepends=True),
            f"a/{name}",
            f"b/{name}",
            n=context,
        )
    )


def _gnu(tree: Path, patch: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        ["patch", "-p1", "--forward", "--batch", "--fuzz=0", "--no-backup-if-mismatch",
         "--reject-file=-", "-d", str(tree), "-i", str(patch)],
        capture_output=True,
    )  # fmt: skip


@pytest.fixture
def no_patch_process(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("patch was started for a diff applied in the process")

    monkeypatch.setattr(patching.subprocess, "run", refuse)


def _edit(rng: random.Random, lines: list[str]) -> list[str]:
    """A mutant-like edit: lines changed, removed or inserted at a few places."""
    out = list(lines)
    for _ in range(rng.randint(1, 3)):
        i = rng.randrange(len(out))
        kind = rng.choice(["change", "remove", "insert"])
        if kind == "change":
            out[i] = out[i].replace("+", "-", 1) if "+" in out[i] else out[i].rstrip() + "  # x\n"
        elif kind == "remove" and len(out) > 1:
            del out[i]
        else:
            out.insert(i, "    pass\n")
    return out


def test_random_edits_apply_as_gnu_patch_applies_them(tmp_path: Path) -> None:
    rng = random.Random(7)
    lines = LEDGER.splitlines(keepends=True)
    for case in range(60):
        new = "".join(_edit(rng, lines))
        diff = tmp_path / f"{case}.diff"
        diff.write_text(_diff(LEDGER, new, context=rng.choice([0, 1, 3])))
        ours, theirs = _tree(tmp_path / f"ours{case}"), _tree(tmp_path / f"gnu{case}")
        assert apply_exact(ours, diff.read_bytes()), diff.read_text()
        assert _gnu(theirs, diff).returncode == 0
        got = (ours / "shop" / "ledger.py").read_text()
        assert got == (theirs / "shop" / "ledger.py").read_text() == new


def test_a_mutant_diff_is_applied_without_a_process(tmp_path: Path, no_patch_process: None) -> None:
    mutant = LEDGER.replace("if amount > balance:", "if amount >= balance:")
    patch = tmp_path / "off_by_one.diff"
    patch.write_text(_diff(LEDGER, mutant))
    tree = _tree(tmp_path / "tree")
    mode = (tree / "shop" / "ledger.py").stat().st_mode
    assert apply_patch(tree, patch) == (True, "")
    assert (tree / "shop" / "ledger.py").read_text() == mutant
    assert (tree / "shop" / "ledger.py").stat().st_mode == mode


@pytest.mark.parametrize(
    "case",
    ["moved", "created", "no_newline", "blank_context", "two_files_one_stale", "stale"],
)
def test_what_is_not_exactly_placed_is_left_to_patch(tmp_path: Path, case: str) -> None:
    """Each of these falls through to ``patch``: the result is GNU patch's, applied or not,
    and an unapplied diff leaves the tree as it was."""
    mutant = LEDGER.replace("s += p", "s -= p")
    text = LEDGER
    diff = _diff(LEDGER, mutant)
    if case == "moved":  # the source gained lines above the hunk: patch finds it at an offset
        text = "# header\n# more\n" + LEDGER
    elif case == "created":
        diff += _diff("", "RATE = 3\n", "shop/rates.py").replace("a/shop/rates.py", "/dev/null")
    elif case == "no_newline":
        text = LEDGER.rstrip("\n")
        n = len(text.splitlines())
        diff = (
            f"--- a/shop/ledger.py\n+++ b/shop/ledger.py\n@@ -{n - 1},2 +{n - 1},2 @@\n"
            "         out.append(balance)\n-    return out\n\\ No newline at end of file\n"
            "+    return out[1:]\n\\ No newline at end of file\n"
        )
    elif case == "blank_context":  # a blank context line without its space (tools strip it)
        diff = diff.replace("\n \n", "\n\n")
    elif case == "two_files_one_stale":
        diff += _diff("A = 1\n", "A = 2\n", "shop/other.py")
    elif case == "stale":
        text = LEDGER.replace("s += p", "s += 2 * p")
    ours, theirs = _tree(tmp_path / "ours", text), _tree(tmp_path / "gnu", text)
    (ours / "shop" / "other.py").write_text("B = 1\n")
    (theirs / "shop" / "other.py").write_text("B = 1\n")
    patch = tmp_path / "m.diff"
    patch.write_text(diff)
    assert not apply_exact(ours, diff.encode())
    assert (ours / "shop" / "ledger.py").read_text() == text  # nothing written
    applied, output = apply_patch(ours, patch)
    gnu = _gnu(theirs, patch)
    assert applied == (gnu.returncode == 0), output
    for name in ("ledger.py", "other.py", "rates.py"):
        a, b = ours / "shop" / name, theirs / "shop" / name
        assert a.is_file() == b.is_file()
        if a.is_file():
            assert a.read_bytes() == b.read_bytes(), name
    if case in ("stale", "two_files_one_stale"):
        assert not applied and "FAILED" in output
    else:
        assert applied and (ours / "shop" / "ledger.py").read_text() != text


def test_a_path_outside_the_tree_is_never_written(tmp_path: Path) -> None:
    outside = tmp_path / "secret.py"
    outside.write_text("A = 1\n")
    tree = _tree(tmp_path / "tree")
    diff = _diff("A = 1\n", "A = 2\n", "../secret.py")
    assert not apply_exact(tree, diff.encode())
    assert outside.read_text() == "A = 1\n"


def test_a_file_through_a_linked_directory_is_never_written_in_place(tmp_path: Path) -> None:
    """A tree whose ``shop`` is a link to a directory elsewhere: the in-place writer would
    write the file there (a mutant's tree staged by links shares what it does not copy)."""
    elsewhere = _tree(tmp_path / "elsewhere")
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "shop").symlink_to(elsewhere / "shop", target_is_directory=True)
    diff = _diff(LEDGER, LEDGER.replace("return", "return -1 *", 1))
    assert not apply_exact(tree, diff.encode())
    assert (elsewhere / "shop" / "ledger.py").read_text() == LEDGER
