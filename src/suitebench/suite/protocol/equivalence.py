"""Equivalent mutants: the ones no test can kill, left out of M's denominator and listed.

A mutant is *equivalent* when it is the reference's program in another spelling; counting it
would lower M for a suite that could do nothing about it.  ``score`` takes a mutant as
equivalent for one of two reasons, and says which (``MutantResult.equivalent``):

* ``tce`` -- trivial compiler equivalence: the compiler gives the reference's code.  A C/C++
  mutant whose objects (as the instance's own build compiles them, with its flags) are the
  reference's bytes, found by ``build mutants`` (``equivalent = "tce"`` in ``instance.toml``)
  and checked again here, after the mutant's build, for every mutant (a mark made before the
  source changed is not trusted); a Python mutant whose modules compile to
  the reference's code objects, line numbers aside (``run/pycompile.py``, ``same_bytecode``),
  checked here for every mutant of a package, hand-written and model-written ones too.
* ``declared`` -- the instance's ``[[equivalent]]`` list (a mutant id, a reason, and a digest of
  what the mutant changes, :func:`~suitebench.model.instance._declare_equivalent`).

An equivalent mutant is not run: its row of the kill matrix is empty, like a build error's.
"""

from __future__ import annotations

from pathlib import Path

from suitebench.model.instance import Instance, InstanceKind, MutantSpec
from suitebench.run.pycompile import same_bytecode
from suitebench.suite.execute.interpreter import Interpreter
from suitebench.suite.execute.patching import patched_sources
from suitebench.suite.execute.programs import Builder, BuiltProgram
from suitebench.suite.result import MutantResult, MutantStatus

__all__ = ["Equivalence", "known_equivalents", "object_equivalents", "with_equivalents"]

Equivalence = tuple[str, str]  # (kind: "tce" or "declared", the reason in words)
PYTHON_REASON = "compiles to the reference's bytecode, line numbers aside (TCE)"
OBJECTS_REASON = "compiles to the reference's object code (TCE)"


def known_equivalents(
    instance: Instance, mutants: list[MutantSpec], source: Path, python: Interpreter | None
) -> dict[str, Equivalence]:
    """The mutants known equivalent before any build: those the instance declares, and a
    package's mutants whose every changed file is a module compiling to the reference's code.
    A ``tce`` mark of ``build mutants`` is not taken on trust -- the source may have changed
    since -- but checked again: here for a package (the bytecode), after the build for C/C++
    (:func:`object_equivalents`).  The bytecode is compared only where the suite's
    interpreter compiles as ours does (another version may compile differently)."""
    found: dict[str, Equivalence] = {}
    same_compiler = python is None or python.compiles_here
    for m in mutants:
        if m.equivalent == "declared":
            found[m.id] = ("declared", m.equivalent_reason)
        elif instance.kind is InstanceKind.PYTHON and same_compiler and _same_bytecode(m, source):
            found[m.id] = ("tce", PYTHON_REASON)
    return found


def _same_bytecode(mutant: MutantSpec, source: Path) -> bool:
    try:
        files = patched_sources(source, mutant.patch.read_bytes())
    except OSError:
        return False
    if not files:  # not a plain diff of edits (patch decides it at the build): not checked
        return False
    return all(
        rel.endswith(".py") and same_bytecode(before, after, rel)
        for rel, (before, after) in files.items()
    )


def object_equivalents(
    builder: Builder, mutants: list[MutantSpec], built: dict[str, BuiltProgram]
) -> dict[str, Equivalence]:
    """The C/C++ mutants whose build left every object their change reaches byte for byte
    the reference's recorded build's (the objects the instance's own build compiled, with its
    flags): incremental builds and clean ones alike, so that a suite from elsewhere (whose
    mutants are built from scratch) has the same denominator where the build is
    deterministic, and none more where it is not (a differing object is never equivalent)."""
    if builder.instance.kind is InstanceKind.PYTHON or not mutants:
        return {}
    recording = builder
    if not builder.incremental:  # (builds from scratch: the recorded build is still the base)
        recording = Builder(
            builder.instance, builder.cache_dir, backend=builder.backend, python=builder.python
        )
    base = recording.incremental_base()
    if base is None:
        return {}
    found: dict[str, Equivalence] = {}
    for m in mutants:
        program = built.get(m.id)
        if program is None or not program.ok or not program.directory:
            continue
        if base.same_objects(Path(program.directory), m.patch.read_bytes()) is True:
            found[m.id] = ("tce", OBJECTS_REASON)
    return found


def equivalent_result(mutant: MutantSpec, equivalence: Equivalence) -> MutantResult:
    kind, reason = equivalence
    return MutantResult(
        id=mutant.id,
        status=MutantStatus.EQUIVALENT,
        equivalent=kind,
        section=mutant.section,
        target=mutant.target,
        description=mutant.description,
        operator=mutant.operator,
        patch=str(mutant.patch),
        message=reason,
    )


def with_equivalents(
    instance: Instance, results: list[MutantResult], equivalent: dict[str, Equivalence]
) -> list[MutantResult]:
    """The scored mutants' results with the equivalent ones', in the instance's order."""
    if not equivalent:
        return results
    by_id = {r.id: r for r in results}
    for m in instance.mutants:
        if m.id in equivalent:
            by_id[m.id] = equivalent_result(m, equivalent[m.id])
    order = {m.id: i for i, m in enumerate(instance.mutants)}
    return sorted(by_id.values(), key=lambda r: order.get(r.id, len(order)))
