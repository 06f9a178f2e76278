"""``build mutants``: operator mutants of an instance's reference source, no model.

The pipeline, each stage a plain list of records:

1. **sites**: every operator mutation of every source file (Python on libcst, C/C++/Rust/Go
   and shell on tree-sitter), in source order, but those the reference's build does not
   compile (``build_scope.py``: third-party, generated, not compiled, compiled out);
2. **filter**: sites on a line marked ``pragma: no mutate`` (mutmut's convention; ``//`` in
   C-family code), no-ops (the mutated file equals the source) and duplicates (two sites giving
   the same mutated file) are dropped;
3. **caps**: at most ``max_per_function`` sites per function and ``max_per_file`` per file,
   then ``max_total`` overall, each a seeded random sample kept in source order, so the same
   seed gives the same mutants;
4. **build**: a Python mutant must compile; a mutant of another language is built with the
   instance's own recipe in the sandbox (the builds land in the cache ``score`` reads);
   mutants that do not build are reported and dropped; C/C++ mutants whose objects are the
   reference's bytes, and Python mutants whose bytecode is the reference's (line numbers
   aside), are trivially equivalent (TCE): written with ``equivalent = "tce"``, which
   ``score`` leaves out of M's denominator and lists;
5. **write**: one unified diff per mutant under ``mutants/`` and a block of ``[[mutants]]``
   in ``instance.toml`` between two marker comments (a re-run replaces only that block).
"""

from __future__ import annotations

import random
import re
import tempfile
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from suitebench.construct.build_scope import BuildScope
from suitebench.construct.edits import MutationSite, unified_diff
from suitebench.construct.mutate_paths import PathFilter
from suitebench.construct.treesitter_ops import grammar_installed, language_of, treesitter_sites
from suitebench.construct.writing import OPERATOR, MutantRecord, prepare_target, write_generated
from suitebench.model.instance import Instance, InstanceKind, MutantSpec
from suitebench.run.executor import Executor
from suitebench.run.pycompile import compile_quietly, same_bytecode
from suitebench.suite.execute.incremental_native import native_files
from suitebench.suite.execute.interpreter import suite_interpreter
from suitebench.suite.execute.programs import Builder, build_all
from suitebench.suite.select.since import ChangedLines, on_changed_lines

__all__ = [
    "BLOCK_BEGIN",
    "BLOCK_END",
    "MANIFEST",
    "MutantRecord",
    "MutantsReport",
    "default_caps",
    "error_line",
    "generate_operator_mutants",
    "languages_without_operators",
    "mutation_sites",
    "source_files",
    "write_mutants",
]

BLOCK_BEGIN = OPERATOR.begin
BLOCK_END = OPERATOR.end
MANIFEST = OPERATOR.manifest
_SKIP_DIRS = {
    ".git",
    "__pycache__",
    "tests",
    "test",
    "target",
    "build",
    "vendor",
    ".venv",
    "mutants",
}
# Languages met in real sources that no operator handles yet, by extension.
_NO_OPERATORS = {".js": "javascript", ".mjs": "javascript",
                 ".ts": "typescript", ".rb": "ruby", ".java": "java", ".kt": "kotlin",
                 ".pl": "perl", ".lua": "lua", ".php": "php", ".awk": "awk"}  # fmt: skip
_RECIPES = {"build.sh", "compile.sh"}  # ProgramBench's build scripts
# mutmut's convention, on the line a mutant would change: ``# pragma: no mutate`` (Python,
# shell), ``// pragma: no mutate`` or ``/* pragma: no mutate */`` (C-family).
_NO_MUTATE = re.compile(rb"(#|//|/\*)\s*pragma:\s*no mutate\b")
_SKIP_PY = re.compile(r"(^|/)(test_[^/]*|[^/]*_test|conftest|setup)\.py$")
Progress = Callable[[int, int], None]


@dataclass
class MutantsReport:
    """What ``build mutants`` did: the mutants kept and every reason one was not."""

    instance: str
    seed: int
    sites: int = 0
    out_of_scope: int = 0  # outside function bodies, with ``scope="functions"``
    noops: int = 0
    no_mutate: int = 0  # on a line marked ``# pragma: no mutate``
    duplicates: int = 0
    capped: int = 0
    candidates: int = 0  # sites left for the caps: after scope, no-op and duplicate filters
    caps: dict[str, int | None] = field(default_factory=dict)
    capped_by_file: dict[str, int] = field(default_factory=dict)  # most dropped first
    # every site the caps dropped, named: {file, line, function, operator, description}
    capped_sites: list[dict[str, str | int]] = field(default_factory=list)
    settings_read: list[str] = field(default_factory=list)  # include/exclude and their source
    excluded_files: list[str] = field(default_factory=list)  # left out by them
    no_operator: list[str] = field(default_factory=list)  # languages of an unmutated source
    mutants: list[MutantRecord] = field(default_factory=list)
    build_errors: list[dict[str, str | int]] = field(default_factory=list)
    unparsable: dict[str, str] = field(default_factory=dict)
    by_operator: dict[str, int] = field(default_factory=dict)
    # What the reference's build compiles (``build_scope.py``): sites left out by reason, the
    # whole files left out with theirs, and whether the build was recorded at all.
    left_out: dict[str, int] = field(default_factory=dict)
    left_out_files: dict[str, str] = field(default_factory=dict)
    build_recorded: bool = False
    equivalent: list[dict[str, str | int]] = field(default_factory=list)  # TCE
    # ``--since REV`` (:mod:`suitebench.suite.select.since`): the revision, the files changed, the
    # sites left out (not on a changed line) and the files with sites but none on a changed line.
    since: dict[str, object] | None = None

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def _candidate_files(instance: Instance) -> list[Path]:
    """Files under the source (the package for ``kind = "python"``), relative to ``source``,
    outside tests, build output, vendored code and the mutants themselves."""
    root = instance.source
    base = instance.package_dir() if instance.kind is InstanceKind.PYTHON else root
    assert base is not None
    return [
        path.relative_to(root)
        for path in sorted(base.rglob("*"))
        if path.is_file() and not any(p in _SKIP_DIRS for p in path.relative_to(root).parts[:-1])
    ]


def source_files(instance: Instance, paths: PathFilter | None = None) -> list[Path]:
    """The reference source files operator mutants apply to, relative to ``source``: files of
    a supported language, not tests, build scripts or vendored code, kept by ``paths``."""
    files: list[Path] = []
    for rel in _candidate_files(instance):
        text = rel.as_posix()
        if paths is not None and not paths.keeps(text):
            continue
        if text.endswith(".py"):
            if not _SKIP_PY.search(text):
                files.append(rel)
        elif _operator_language(instance, rel) is not None:
            files.append(rel)
    return files


def _operator_language(instance: Instance, rel: Path) -> str | None:
    """The grammar of a file operators mutate (a shell script's only with tree-sitter-bash
    installed; the build recipe is not the program)."""
    text = rel.as_posix()
    if text == instance.build or (instance.kind is not InstanceKind.PYTHON and text in _RECIPES):
        return None
    head = b""
    if not rel.suffix:
        try:
            head = (instance.source / rel).read_bytes()[:200]
        except OSError:
            return None
    language = language_of(text, head)
    if language == "bash" and not grammar_installed("bash"):
        return None
    return language


def languages_without_operators(instance: Instance) -> list[str]:
    """Languages of the source's files that no operator handles (a shell script's "bash"):
    what to name when there is nothing to mutate, instead of a bare "0 sites"."""
    found: set[str] = set()
    for rel in _candidate_files(instance):
        if rel.as_posix() in (instance.build, *_RECIPES):
            continue  # the build recipe is not the program
        language = _NO_OPERATORS.get(rel.suffix)
        if language is None and not grammar_installed("bash"):
            try:
                head = (instance.source / rel).read_bytes()[:200]
            except OSError:
                continue
            if language_of(rel.as_posix(), head) == "bash":
                language = "bash (no tree-sitter-bash installed)"
        if language is not None:
            found.add(language)
    return sorted(found)


SCOPES = ("all", "functions")


def mutation_sites(path: str, source: bytes) -> list[MutationSite]:
    """Every operator mutation of one file, chosen by its extension."""
    if path.endswith(".py"):
        from suitebench.construct.python_ops import python_sites

        return python_sites(path, source)
    return treesitter_sites(path, source)


def default_caps(instance: Instance) -> tuple[int | None, int | None]:
    """``(max_per_file, max_per_function)`` when the user names none: none for a Python
    package (every site, as mutmut mutates a project), 400 and 40 for a program built by a
    recipe, where every mutant is a build (Lua 5.4 has 16,409 sites)."""
    return (None, None) if instance.kind is InstanceKind.PYTHON else (400, 40)


def no_mutate_lines(source: bytes) -> set[int]:
    """The lines marked ``pragma: no mutate`` in a comment (1-based)."""
    if b"no mutate" not in source:
        return set()
    return {n for n, line in enumerate(source.splitlines(), 1) if _NO_MUTATE.search(line)}


def _sample(sites: list[MutationSite], cap: int | None, rng: random.Random) -> list[MutationSite]:
    if cap is None or len(sites) <= cap:
        return sites
    keep = set(rng.sample(range(len(sites)), cap))
    return [s for i, s in enumerate(sites) if i in keep]


def _group_cap(
    sites: list[MutationSite], key: Callable[[MutationSite], str], cap: int | None, seed: int
) -> list[MutationSite]:
    groups: dict[str, list[MutationSite]] = {}
    for site in sites:
        groups.setdefault(key(site), []).append(site)
    kept: list[MutationSite] = []
    for name, members in groups.items():
        # One generator per group: a change in one file does not reshuffle another's mutants.
        kept += _sample(members, cap, random.Random(f"{seed}/{name}"))
    order = {id(s): i for i, s in enumerate(sites)}
    return sorted(kept, key=lambda s: order[id(s)])


def generate_operator_mutants(
    instance: Instance,
    *,
    seed: int = 0,
    max_total: int | None = None,
    max_per_file: int | None = 400,
    max_per_function: int | None = 40,
    operators: set[str] | None = None,
    scope: str = "all",
    paths: PathFilter | None = None,
    build_scope: BuildScope | None = None,
    since: ChangedLines | None = None,
) -> tuple[list[tuple[MutationSite, bytes]], MutantsReport]:
    """Stages 1-3: the sampled sites with the diffs they give, before the build check.
    ``scope="functions"`` keeps only sites inside function bodies (as mutmut mutates): no
    module or class-level code, decorator, default argument or global initializer.  ``since``:
    only sites whose diff touches a line changed since a git revision."""
    if scope not in SCOPES:
        raise ValueError(f"scope {scope!r}: expected one of {', '.join(SCOPES)}")
    report = MutantsReport(instance=instance.name, seed=seed)
    report.build_recorded = build_scope is not None and build_scope.recorded
    report.caps = {
        "max_per_file": max_per_file,
        "max_per_function": max_per_function,
        "max_total": max_total,
    }
    files = source_files(instance, paths)
    if paths is not None:
        report.settings_read = list(paths.settings_read)
        kept_files = set(files)
        report.excluded_files = [
            f.as_posix() for f in source_files(instance) if f not in kept_files
        ]
    if not files:
        report.no_operator = languages_without_operators(instance)
    kept: list[MutationSite] = []
    sources: dict[str, bytes] = {}
    unchanged = 0  # sites not on a line changed since ``since``, and their files
    unchanged_in: set[str] = set()
    for rel in files:
        path = rel.as_posix()
        source = (instance.source / rel).read_bytes()
        try:
            sites = mutation_sites(path, source)
        except Exception as exc:  # libcst's ParserSyntaxError, a decode error
            report.unparsable[path] = f"{type(exc).__name__}: {str(exc).splitlines()[0]}"
            continue
        sources[path] = source
        report.sites += len(sites)
        reason = None if build_scope is None else build_scope.file_reason(path, source)
        if reason is not None:
            report.left_out_files[path] = reason
            report.left_out[reason] = report.left_out.get(reason, 0) + len(sites)
            continue
        seen: set[str] = set()
        marked = no_mutate_lines(source)
        for site in sites:
            if site.line in marked:
                report.no_mutate += 1
                continue
            if build_scope is not None and not build_scope.line_kept(path, source, site.line):
                report.left_out["compiled_out"] = report.left_out.get("compiled_out", 0) + 1
                continue
            if operators is not None and site.operator not in operators:
                continue
            if scope == "functions" and not site.in_body:
                report.out_of_scope += 1
                continue
            mutated = site.mutated(source)
            if mutated == source:
                report.noops += 1
                continue
            fingerprint = site.fingerprint(source)
            if fingerprint in seen:
                report.duplicates += 1
                continue
            seen.add(fingerprint)
            if since is not None and not on_changed_lines(
                unified_diff(path, source, site.edit), since
            ):
                unchanged += 1
                unchanged_in.add(path)
                continue
            kept.append(site)
    if since is not None:
        on = {s.file for s in kept}
        report.since = {
            **since.to_dict(),
            "sites_left_out": unchanged,
            "unchanged_files": sorted(unchanged_in - on),
        }
    before = Counter(s.file for s in kept)
    before_caps = kept
    report.candidates = len(kept)
    kept = _group_cap(kept, lambda s: f"{s.file}::{s.function}", max_per_function, seed)
    kept = _group_cap(kept, lambda s: s.file, max_per_file, seed)
    kept = _sample(kept, max_total, random.Random(seed))
    report.capped = report.candidates - len(kept)
    still = {id(s) for s in kept}
    report.capped_sites = [
        {
            "file": s.file,
            "line": s.line,
            "function": s.function,
            "operator": s.operator,
            "description": s.description,
        }
        for s in before_caps
        if id(s) not in still
    ]
    dropped = before - Counter(s.file for s in kept)
    report.capped_by_file = dict(sorted(dropped.items(), key=lambda kv: (-kv[1], kv[0])))
    return [(s, unified_diff(s.file, sources[s.file], s.edit)) for s in kept], report


def _python_compiles(site: MutationSite, source: bytes) -> str | None:
    try:
        compile_quietly(site.mutated(source), site.file)
    except (SyntaxError, ValueError) as exc:
        return f"does not compile: {exc}"
    return None


def _buildable(
    instance: Instance,
    candidates: list[tuple[MutationSite, bytes]],
    report: MutantsReport,
    builder: Builder,
    executor: Executor | None,
    progress: Progress | None,
) -> tuple[list[tuple[MutationSite, bytes]], set[int]]:
    """The candidates that build (a Python file: that compiles), in their order, and those of
    them that are trivially equivalent (``id()`` of their sites: a C/C++ mutant whose objects
    are the reference's bytes, a Python one whose bytecode is the reference's, line numbers
    aside), also listed in the report's equivalents; each that does not build is listed in
    the report's build errors."""
    with tempfile.TemporaryDirectory(prefix="suitebench-mutants-") as tmp:
        specs: list[MutantSpec] = []
        ok: list[tuple[MutationSite, bytes]] = []
        checks: list[tuple[MutationSite, bytes]] = []
        equivalent: set[int] = set()  # id() of the sites that are (kept, marked "tce")
        for index, (site, diff) in enumerate(candidates):
            if site.file.endswith(".py"):
                if progress is not None:  # compiled here: counted here (C builds in build_all)
                    progress(index + 1, len(candidates))
                source = (instance.source / site.file).read_bytes()
                error = _python_compiles(site, source)
                if error is not None:
                    report.build_errors.append(_error(site, error))
                    continue
                if instance.kind is InstanceKind.PYTHON and same_bytecode(
                    source, site.mutated(source), site.file
                ):
                    _record_equivalent(report, site, "same bytecode")
                    equivalent.add(id(site))
                ok.append((site, diff))
                continue
            patch = Path(tmp) / f"c{index:05d}.diff"
            patch.write_bytes(diff)
            specs.append(MutantSpec(id=f"c{index:05d}", patch=patch))
            checks.append((site, diff))
        if specs:
            reference, built = build_all(builder, specs, progress=progress, executor=executor)
            if not reference.ok:
                raise RuntimeError(
                    f"{instance.source}: the reference does not build, so no mutant can be "
                    f"checked:\n{reference.message[-2000:]}"
                )
            for spec, (site, diff) in zip(specs, checks, strict=True):
                result = built[spec.id]
                if result.ok and _equivalent(builder, result.directory, diff):
                    _record_equivalent(report, site, "same object code")
                    equivalent.add(id(site))
                if result.ok:
                    ok.append((site, diff))
                else:
                    report.build_errors.append(_error(site, result.message[-2000:]))
    order = {id(s): i for i, (s, _) in enumerate(candidates)}
    ok.sort(key=lambda pair: order[id(pair[0])])
    return ok, equivalent


def _record_equivalent(report: MutantsReport, site: MutationSite, why: str) -> None:
    report.equivalent.append(
        {
            "file": site.file,
            "line": site.line,
            "operator": site.operator,
            "description": site.description,
            "reason": why,
        }
    )


def _equivalent(builder: Builder, directory: str, diff: bytes) -> bool:
    """Trivial compiler equivalence: the mutant's objects are the reference's bytes."""
    base = builder.incremental_base()
    return base is not None and base.same_objects(Path(directory), diff) is True


def build_scope_of(builder: Builder, paths: PathFilter | None = None) -> BuildScope:
    """What the reference's build compiles, from its recorded build, when the source has C or
    C++ files (a reference that does not build records nothing: the build check says so)."""
    instance = builder.instance
    scope = BuildScope(instance.source)
    if instance.kind is InstanceKind.PYTHON or not any(
        language_of(f.as_posix()) in ("c", "cpp", "rust", "go")
        for f in source_files(instance, paths)
    ):
        return scope
    built, record = builder.recorded()
    if built.ok:
        scope.record, scope.built_tree = record, Path(built.directory)
        scope.native_files = native_files(builder.native_languages(), Path(built.directory))
    return scope


def write_mutants(
    instance: Instance,
    *,
    out: Path | None = None,
    seed: int = 0,
    max_total: int | None = None,
    max_per_file: int | None = 400,
    max_per_function: int | None = 40,
    operators: set[str] | None = None,
    scope: str = "all",
    paths: PathFilter | None = None,
    cache_dir: Path,
    executor: Executor | None = None,
    progress: Progress | None = None,
    since: ChangedLines | None = None,
) -> MutantsReport:
    """Generate, build-check and write operator mutants into the instance (or into ``out``,
    a copy of the instance made first), listing them in its ``instance.toml``."""
    builder = Builder(instance, cache_dir, python=suite_interpreter(instance))
    candidates, report = generate_operator_mutants(
        instance,
        seed=seed,
        max_total=max_total,
        max_per_file=max_per_file,
        max_per_function=max_per_function,
        operators=operators,
        scope=scope,
        paths=paths,
        build_scope=build_scope_of(builder, paths),
        since=since,
    )
    target = prepare_target(instance, out)
    ok, equivalent = _buildable(instance, candidates, report, builder, executor, progress)

    records = [
        (
            MutantRecord(
                id="",
                patch="",
                file=site.file,
                line=site.line,
                operator=site.operator,
                description=site.description,
                function=site.function,
                equivalent="tce" if id(site) in equivalent else None,
            ),
            diff,
        )
        for site, diff in ok
    ]
    for site, _ in ok:
        report.by_operator[site.operator] = report.by_operator.get(site.operator, 0) + 1
    manifest = report.to_dict()
    report.mutants = write_generated(target, OPERATOR, records, manifest)
    return report


def error_line(message: str) -> str:
    """The line of a build log that says what went wrong: a compiler's ``error:`` line, else a
    Python ``...Error:`` line, else the last line."""
    lines = [line.strip() for line in message.strip().splitlines() if line.strip()]
    for pattern in (r"\berror:", r"\w+Error\b", r"(?i)error"):
        for line in lines:
            if re.search(pattern, line) and not line.startswith("build "):
                return line
    return lines[-1] if lines else ""


def _error(site: MutationSite, message: str) -> dict[str, str | int]:
    reason = error_line(message)
    return {
        "file": site.file,
        "line": site.line,
        "operator": site.operator,
        "description": site.description,
        "reason": reason,
        "message": message.strip(),
    }
