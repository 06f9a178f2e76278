"""Whether every Python operator mutant compiles, on real packages nobody here wrote.

Runs every operator over every module of the named installed packages (default: a few from
this venv's site-packages) and compiles each mutant, as ``build mutants`` does before keeping
it; prints per package the modules, sites and mutants that do not compile, with the first few
by operator.  A mutant that does not compile where a valid one exists is a lost mutant (the
``not (...)`` case: ``unmatched ')'``).

    python bench/operators_compile.py [attr click h11 dateutil ...]
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
import time
from collections import Counter
from pathlib import Path

from suitebench.construct.mutants import mutation_sites
from suitebench.run.pycompile import compile_quietly


def package_dir(name: str) -> Path:
    spec = importlib.util.find_spec(name)
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit(f"{name}: not an installed package")
    return Path(next(iter(spec.submodule_search_locations)))


def scan(root: Path) -> tuple[int, int, Counter[str], list[str]]:
    modules = sites = 0
    broken: Counter[str] = Counter()
    examples: list[str] = []
    for path in sorted(root.rglob("*.py")):
        source = path.read_bytes()
        try:
            compile_quietly(source, str(path))
            found = mutation_sites(path.name, source)
        except Exception:  # a module this Python cannot parse: not a mutant's fault
            continue
        modules += 1
        for site in found:
            sites += 1
            try:
                compile_quietly(site.mutated(source), str(path))
            except (SyntaxError, ValueError) as exc:
                broken[site.operator] += 1
                if len(examples) < 5:
                    examples.append(f"{path.relative_to(root)}: {site.description}: {exc}")
    return modules, sites, broken, examples


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("packages", nargs="*", default=["attr", "click", "h11", "dateutil"])
    args = parser.parse_args()
    total = 0
    for name in args.packages:
        start = time.perf_counter()
        modules, sites, broken, examples = scan(package_dir(name))
        total += sum(broken.values())
        print(
            f"{name}: {modules} modules, {sites} sites, {sum(broken.values())} do not compile "
            f"{dict(broken)} ({time.perf_counter() - start:.0f} s)"
        )
        for line in examples:
            print(f"  {line}")
    return 1 if total else 0


if __name__ == "__main__":
    sys.exit(main())
