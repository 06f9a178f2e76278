"""Whether compiling a module draws a warning is a property of that module, whatever else the
process does meanwhile: another thread that warns (a finalizer's ``ResourceWarning``, a library's
``DeprecationWarning``) or that sets the warning filters aside for its own parse.

Both matter to a verdict. pytest rewrites a test module in the sandbox and, under
``filterwarnings = error``, a module whose rewriting warns fails to collect; the host serves its
rewritten code only for a module that draws no warning, so a warning it misses is a collection
error the run never sees, and a stray one only costs the sandbox a rewrite.
"""

from __future__ import annotations

import gc
import threading
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from suitebench.run.pycompile import compile_quietly
from suitebench.suite.execute.rewritecache import rewritten_code
from suitebench.suite.select.linecover import shape_of

# Long enough that rewriting and compiling it spans several of the interpreter's thread
# switches (5 ms each), so the other thread runs while the warnings are being recorded.
CLEAN = "".join(f"def test_{i}():\n    x = {i}\n    assert x == {i}, 'x'\n" for i in range(400))
# The same, and one assert on a tuple: pytest's rewriter warns that it is always true.
WARNS = CLEAN + "def test_tuple():\n    assert (1 == 2, 'never false')\n"
# A ``SyntaxWarning`` from the compiler itself.
COMPILER_WARNS = CLEAN + "def test_is():\n    assert 'a' is not 'b'\n"

ROUNDS = 6


@contextmanager
def beside(work: Callable[[], None]) -> Iterator[None]:
    """``work`` in a loop on another thread for as long as the block runs."""
    stop = threading.Event()

    def loop() -> None:
        while not stop.is_set():
            work()
            time.sleep(0)  # let the thread under test on often

    thread = threading.Thread(target=loop, daemon=True)
    thread.start()
    try:
        yield
    finally:
        stop.set()
        thread.join()


def _stray_warning() -> None:
    warnings.warn("an unclosed file, as a finalizer reports it", ResourceWarning, stacklevel=1)


MUTANT = "".join(f"def f{i}(x):\n    return x is 'a{i}'\n" for i in range(300)).encode()


def _own_quiet_parse() -> None:
    shape_of(MUTANT, "mutant.py")  # a mutant's SyntaxWarnings, set aside while it compiles


def test_another_threads_warning_does_not_make_a_clean_test_module_warn() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)  # what the other thread draws
        with beside(_stray_warning):
            results = [rewritten_code(CLEAN.encode(), "test_clean.py") for _ in range(ROUNDS)]
    assert all(code is not None for code in results)


def test_a_warning_is_recorded_while_another_thread_parses_quietly() -> None:
    with beside(_own_quiet_parse):
        rewritten = [rewritten_code(WARNS.encode(), "test_w.py") for _ in range(ROUNDS)]
        compiled = [compile_quietly(COMPILER_WARNS.encode(), "m.py")[1] for _ in range(ROUNDS)]
    assert rewritten == [None] * ROUNDS
    assert compiled == [True] * ROUNDS


class _Unclosed:
    """A resource left open in a reference cycle, as a finished test leaves one: the
    collector finalises it whenever it next runs, in whatever code is running then."""

    def __init__(self) -> None:
        self.cycle = self

    def __del__(self) -> None:
        warnings.warn("unclosed resource", ResourceWarning, stacklevel=1)


def test_a_finalizers_warning_during_rewriting_is_not_the_modules() -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", ResourceWarning)
        results = []
        for _ in range(ROUNDS):
            gc.collect()
            _Unclosed()  # garbage now; parsing the module allocates enough to collect it
            results.append(rewritten_code(CLEAN.encode(), "test_clean.py"))
    assert all(code is not None for code in results)
