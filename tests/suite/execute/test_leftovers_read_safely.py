"""A suite that swaps its run's files for links and FIFOs cannot make the host read its files
into the results, nor hang it.

``rates`` converts amounts between currencies.  Its test module has, besides two honest
tests, one that goes through the output directories it can see (``/tmp/suitebench-*/out``,
where the run's event logs and logs are written) and replaces every log with a link to a
file only the host may read (``secret.txt``, mode 0600, outside the sandbox) and every event
log with a FIFO nobody writes.  Reading them as before, the host put the file's contents in
the run's log, and so in ``results.json`` (measured: the whole secret in the mutant's
``log``); a FIFO would have blocked the read for ever.  Now they read as absent: the runs the
suite sabotaged show as runs that left no record, and the secret is nowhere.
"""

from __future__ import annotations

from pathlib import Path

from suitebench.model.instance import load_instance
from suitebench.run.store import Store
from suitebench.suite.execute.runspec import SuiteLimits
from suitebench.suite.score import score_suite

from ..conftest import write_python_instance

SECRET = "HOST-ONLY-3f9c1e"

SOURCE = """\
RATES = {"EUR": 1.0, "USD": 1.25}


def convert(amount, source, target):
    return round(amount / RATES[source] * RATES[target], 2)
"""

TESTS = """\
import glob
import os

from rates import convert


def test_same_currency():
    assert convert(10, "EUR", "EUR") == 10


def test_eur_to_usd():
    assert convert(8, "EUR", "USD") == 10


def test_swaps_the_hosts_files():
    for path in glob.glob("/tmp/suitebench-*/out/*.log"):
        os.unlink(path)
        os.symlink("{secret}", path)
    for path in glob.glob("/tmp/suitebench-*/out/*.events"):
        os.unlink(path)
        os.mkfifo(path)
"""


def test_links_and_fifos_left_by_a_suite_read_as_nothing(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text(SECRET + "\n")
    secret.chmod(0o600)
    toml = write_python_instance(
        tmp_path / "rates",
        name="rates",
        source={"rates/__init__.py": SOURCE},
        tests={"test_rates.py": TESTS.replace("{secret}", str(secret))},
        spec="Converts amounts between currencies.\n",
        mutants=[("inverted", "rates/__init__.py", "/ RATES[source] *", "* RATES[source] /")],
    )
    out = tmp_path / "out"
    result = score_suite(
        load_instance(toml),
        store=Store(tmp_path / "store.sqlite"),
        limits=SuiteLimits(per_test=10.0, per_program=60.0),
    )
    result.write(out)
    assert SECRET not in result.model_dump_json()
    for path in out.rglob("*"):
        if path.is_file():
            assert SECRET not in path.read_text(errors="replace"), path
    # The runs the suite sabotaged left no record the host would read: nothing was scored on
    # them, and the harness says so.
    assert result.harness_errors
