"""A patched batch takes a mutant's changed module as the build compiled it (the bytecode file
``compile_check`` wrote beside it) instead of compiling it again in the batch's parent, once
per mutant -- and only where that file is this very source's, for this interpreter.

Whatever the code came from, it must be what ``compile(source, filename)`` gives: the same
byte code and constants, and the file name the batch's link gives every function in it (a
traceback, coverage and the patch check read it).
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

from suitebench.run.pycompile import compile_check
from suitebench.run.tree import SEALED_TIME_NS
from suitebench.suite.inside.batch.hotpatch import built_code

RATES = '''\
"""Shipping rates."""

BULK = 10


def rate(weight, express=False):
    base = 4 if weight <= 2 else 4 + (weight - 2) * 1.5
    return base * 2 if express else base


class Zone:
    def surcharge(self, weight):
        return [w for w in range(weight) if w > BULK]
'''


def _built(tmp_path: Path, text: str) -> Path:
    """A package as a build leaves it: sealed times, bytecode written by the compile check."""
    module = tmp_path / "ship" / "rates.py"
    module.parent.mkdir(parents=True)
    module.write_text(text)
    os.utime(module, ns=(SEALED_TIME_NS, SEALED_TIME_NS))
    assert compile_check(tmp_path / "ship") == ""
    return module


def _filenames(code) -> set[str]:
    names = {code.co_filename}
    for const in code.co_consts:
        if hasattr(const, "co_filename"):
            names |= _filenames(const)
    return names


def test_the_built_code_is_what_compiling_the_source_gives(tmp_path: Path) -> None:
    module = _built(tmp_path, RATES)
    filename = "/batch/link/ship/rates.py"  # the path the batch imports the program by
    code = built_code(str(module), module.read_bytes(), filename)
    assert code is not None
    assert code == compile(module.read_bytes(), filename, "exec", dont_inherit=True)
    # every function and comprehension in it named after the batch's link, as an import does
    assert _filenames(code) == {filename}


def test_no_bytecode_beside_the_source_is_compiled_by_the_caller(tmp_path: Path) -> None:
    module = _built(tmp_path, RATES)
    Path(importlib.util.cache_from_source(str(module))).unlink()
    assert built_code(str(module), module.read_bytes(), "/batch/link/ship/rates.py") is None


def test_bytecode_of_another_source_is_not_taken(tmp_path: Path) -> None:
    module = _built(tmp_path, RATES)
    # a mutant of another length than the bytecode's source (BULK = 10 -> BULK = 100)
    other = RATES.replace("BULK = 10", "BULK = 100").encode()
    assert built_code(str(module), other, "/batch/link/ship/rates.py") is None


def test_bytecode_of_another_interpreter_is_not_taken(tmp_path: Path) -> None:
    module = _built(tmp_path, RATES)
    pyc = Path(importlib.util.cache_from_source(str(module)))
    data = pyc.read_bytes()
    pyc.write_bytes(b"\x00\x00\r\n" + data[4:])  # another magic number
    assert built_code(str(module), module.read_bytes(), "/batch/link/ship/rates.py") is None
