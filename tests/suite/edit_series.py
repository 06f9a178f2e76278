"""A small project kept in git, and a series of real edits to it: what ``score --incremental``
and ``--since`` are tested (tests/suite/execute/test_incremental_edits.py) and measured
(bench/incremental_scores.py) on.

``shop`` prices a cart: ``money.py`` holds the rounding helper and the currency table,
``cart.py`` line totals, discount codes and the cart total.  The instance is the project
itself (``instance.toml`` at its root, ``source = "src/"``), as a user who scores their own
repository has it.  Each edit is one commit, of the kinds a day brings:

1. ``comment``: comments added above and inside functions (nothing that runs changes);
2. ``new_test``: a test for the ``HALF`` discount code (none tested it);
3. ``changed_function``: ``discount`` learns a new code (``BULK``);
4. ``changed_helper``: ``round_cents`` -- which ``cart_total`` calls -- rounds half up;
5. ``mutant_path_helper``: ``express_fee`` changes -- no test reaches it on the reference (the
   only cart with a fee is small), only a mutant of ``cart_total`` charging a fee on a large
   cart does: a row reused by the reference's coverage alone would be wrong;
6. ``data_file``: ``tests/rates.json``, which a test reads, changes.
"""

from __future__ import annotations

import subprocess
import textwrap
from collections.abc import Callable
from pathlib import Path

MONEY = '''\
"""Money helpers: rounding to cents and converting between currencies."""

RATES = {"EUR": 100, "USD": 108, "GBP": 85}


def round_cents(amount):
    """Round to whole cents, halves to even (banker's rounding)."""
    return round(amount)


def convert(cents, currency):
    """Cents of euros in another currency's cents."""
    if currency not in RATES:
        raise KeyError(currency)
    return round_cents(cents * RATES[currency] / 100)


def fee(cents):
    """The handling fee of a cart too small to ship free."""
    return 250 if cents < 1000 else express_fee(cents)


def express_fee(cents):
    return 150
'''

CART = '''\
"""A cart: lines of (unit price in cents, quantity), a discount code, a total."""

from shop.money import fee, round_cents


def line_total(price, quantity):
    if quantity < 0:
        raise ValueError("negative quantity")
    return price * quantity


def discount(total, code):
    """The total after a discount code; an unknown code changes nothing."""
    if code == "TENOFF":
        return total - min(total, 1000)
    if code == "HALF":
        return total / 2
    return total


def cart_total(lines, code=None):
    total = sum(line_total(p, q) for p, q in lines)
    total = round_cents(discount(total, code))
    if total > 0 and total < 500:
        return total + fee(total)
    return total
'''

TEST_MONEY = """\
import json
from pathlib import Path

import pytest

from shop import money


def test_round_cents_halves_to_even():
    assert money.round_cents(2.5) == 2
    assert money.round_cents(3.5) == 4


def test_convert_known_currency():
    assert money.convert(1000, "USD") == 1080


def test_convert_unknown_currency():
    with pytest.raises(KeyError):
        money.convert(100, "XYZ")


def test_rates_match_published_table():
    published = json.loads((Path(__file__).parent / "rates.json").read_text())
    assert money.RATES == published
"""

TEST_CART = """\
import pytest

from shop.cart import cart_total, discount, line_total


def test_line_total():
    assert line_total(250, 4) == 1000


def test_negative_quantity_is_rejected():
    with pytest.raises(ValueError):
        line_total(100, -1)


def test_tenoff_takes_ten_euros():
    assert discount(5000, "TENOFF") == 4000
    assert discount(600, "TENOFF") == 0


def test_cart_total_with_fee():
    assert cart_total([(200, 2)]) == 650


def test_cart_total_large():
    assert cart_total([(1000, 3)], "TENOFF") == 2000
"""

RATES = '{"EUR": 100, "USD": 108, "GBP": 85}\n'

INSTANCE = """\
name = "shop"
kind = "python"
source = "src/"
package = "shop"
tests = "tests/"
"""


def _git(root: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=dev", "-c", "user.email=dev@example.org", *args],
        cwd=root,
        check=True,
        capture_output=True,
    )


def _write(root: Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def _replace(root: Path, rel: str, old: str, new: str) -> None:
    text = (root / rel).read_text()
    assert old in text, f"{rel}: {old!r} not found"
    (root / rel).write_text(text.replace(old, new, 1))


def make_project(root: Path) -> Path:
    """The project at its first commit (tag ``v1``)."""
    root.mkdir(parents=True)
    _write(root, "src/shop/__init__.py", '"""A small shop."""\n')
    _write(root, "src/shop/money.py", MONEY)
    _write(root, "src/shop/cart.py", CART)
    _write(root, "tests/test_money.py", TEST_MONEY)
    _write(root, "tests/test_cart.py", TEST_CART)
    _write(root, "tests/rates.json", RATES)
    _write(root, "instance.toml", INSTANCE)
    _write(root, ".gitignore", "mutants/\n__pycache__/\n")
    _git(root, "init", "-q", "-b", "main")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "shop: carts, discounts, money")
    _git(root, "tag", "v1")
    return root


def comment(root: Path) -> None:
    _replace(root, "src/shop/cart.py", "def discount(", "# Codes match exactly.\ndef discount(")
    _replace(
        root,
        "src/shop/cart.py",
        "    total = round_cents(discount(total, code))\n",
        "    # Round once, after the discount: a half cent is never charged.\n"
        "    total = round_cents(discount(total, code))\n",
    )


def new_test(root: Path) -> None:
    text = (root / "tests/test_cart.py").read_text() + textwrap.dedent(
        """

        def test_half_halves():
            assert discount(900, "HALF") == 450
        """
    )
    (root / "tests/test_cart.py").write_text(text)


def changed_function(root: Path) -> None:
    _replace(
        root,
        "src/shop/cart.py",
        '    if code == "HALF":\n',
        '    if code == "BULK" and total >= 10000:\n'
        "        return total * 9 / 10\n"
        '    if code == "HALF":\n',
    )


def changed_helper(root: Path) -> None:
    _replace(
        root,
        "src/shop/money.py",
        '    """Round to whole cents, halves to even (banker\'s rounding)."""\n'
        "    return round(amount)\n",
        '    """Round to whole cents, halves up."""\n'
        "    return int(amount + 0.5) if amount >= 0 else -int(-amount + 0.5)\n",
    )


def mutant_path_helper(root: Path) -> None:
    _replace(root, "src/shop/money.py", "    return 150\n", "    return 0\n")


def data_file(root: Path) -> None:
    _write(root, "tests/rates.json", '{"EUR": 100, "USD": 109, "GBP": 85}\n')


EDITS: list[tuple[str, Callable[[Path], None]]] = [
    ("comment", comment),
    ("new_test", new_test),
    ("changed_function", changed_function),
    ("changed_helper", changed_helper),
    ("mutant_path_helper", mutant_path_helper),
    ("data_file", data_file),
]


def commit(root: Path, message: str) -> None:
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", message)
