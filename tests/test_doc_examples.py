"""Every code example in docs/ works: the Python blocks run, the command lines name real
commands and options.

A newcomer copies an example before reading the page around it; an example that no longer
imports (`from suitebench.suite.runner import ...` after the suite package was split) costs them
more than no example. So every ```` ```python ```` block of ``docs/**/*.md`` is compiled, every
``suitebench`` name it imports must exist, and then it is checked as the HTML comment on the line
above its fence says (invisible on the rendered page):

* no comment: the block is run as a script (a child ``python``, its working directory an empty
  temporary one) and must exit 0;
* ``<!-- example: instance NAME -->``: the same, in a directory holding a copy of the bundled
  instance ``NAME`` (``suitebench/data/instances/NAME``) at ``./NAME``;
* ``<!-- example: model-server -->``: the same, with ``OPENAI_BASE_URL`` and ``OPENAI_API_KEY``
  naming a scripted chat server on 127.0.0.1 (``FakeChatServer``) that answers ``hi``;
* ``<!-- example: names -->``: not run (it needs what a test cannot give, such as an agent and a
  model), but every name it uses must be defined: imported, assigned or a builtin;
* ``<!-- example: program -->``: a whole program or file a tutorial writes (a validator, a test
  module); every name it uses must be defined;
* ``<!-- example: excerpt -->``: part of a longer file, compiled only;
* ``<!-- example: file PATH -->`` (any language): the file ``PATH`` of the project a tutorial
  builds; blocks naming one file are joined in page order (a later block adds tests to a file).
  The page's files are written into an empty directory and, where they hold tests, ``python -m
  pytest`` runs there and must pass every test the files define.

Shell examples: every line of a fenced block (not Python, TOML or JSON) that starts with
``$ suitebench``, or with ``suitebench`` and a word (a synopsis; ``suitebench launcher: ...`` is
output), must name a command of the command line
(``suitebench --help``; a group's subcommand too: ``build mutants``), and every ``--option`` on
it must be one that command, or the app, takes.
"""

from __future__ import annotations

import ast
import builtins
import importlib
import os
import re
import shlex
import shutil
import subprocess
import symtable
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import typer

from suitebench.data import INSTANCES_DIR

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted((ROOT / "docs").rglob("*.md"))

FENCE = re.compile(r"^(?P<indent>\s*)```(?P<lang>[\w+-]*)")
MARK = re.compile(r"^\s*<!--\s*example:\s*(?P<mode>[\w-]+)(?:\s+(?P<arg>\S+))?\s*-->\s*$")
MODES = {"run", "instance", "model-server", "names", "program", "excerpt", "file"}
NOT_SHELL = {"python", "toml", "json", "c", "cpp", "rust", "go", "diff"}


@dataclass(frozen=True)
class Block:
    doc: str  # docs/suite.md
    line: int  # the fence's line, 1-based
    lang: str
    mode: str
    arg: str | None
    text: str

    def __str__(self) -> str:
        return f"{self.doc}:{self.line}"


def blocks(path: Path) -> list[Block]:
    """The fenced blocks of one page, each with the mark on the line above its fence."""
    lines = path.read_text().splitlines()
    doc = path.relative_to(ROOT).as_posix()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, lang = len(m["indent"]), m["lang"]
        mark = MARK.match(lines[i - 1]) if i > 0 else None
        body: list[str] = []
        j = i + 1
        while j < len(lines) and not lines[j].strip().startswith("```"):
            body.append(lines[j][indent:] if lines[j][:indent].isspace() else lines[j])
            j += 1
        mode = mark["mode"] if mark else "run"
        found.append(Block(doc, i + 1, lang, mode, mark["arg"] if mark else None, "\n".join(body)))
        i = j + 1
    return found


def all_blocks() -> list[Block]:
    return [b for path in DOCS for b in blocks(path)]


PYTHON = [b for b in all_blocks() if b.lang == "python"]
RUN = [b for b in PYTHON if b.mode in ("run", "instance", "model-server")]


# --- Python blocks: compiled, imports resolved, free names defined ----------------------------


def imported_names(tree: ast.AST) -> list[tuple[str, str | None]]:
    """``(module, name)`` for every ``from suitebench... import name`` and ``(module, None)`` for
    every ``import suitebench...``."""
    out: list[tuple[str, str | None]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("suitebench"):
            assert node.module is not None
            out += [(node.module, alias.name) for alias in node.names]
        elif isinstance(node, ast.Import):
            out += [(a.name, None) for a in node.names if a.name.startswith("suitebench")]
    return out


def undefined_names(source: str) -> set[str]:
    """Names the code reads that nothing in it defines and that are not builtins."""
    defined: set[str] = set(dir(builtins))
    used: set[str] = set()

    def walk(table: symtable.SymbolTable) -> None:
        for sym in table.get_symbols():
            if not (table.get_type() == "module" or sym.is_global()):
                continue  # a local, a parameter, a closure's name
            if sym.is_assigned() or sym.is_imported():
                defined.add(sym.get_name())
            if sym.is_referenced():
                used.add(sym.get_name())
        for child in table.get_children():
            if child.get_type() != "module" and table.get_type() == "module":
                defined.add(child.get_name())  # a def or class at the top
            walk(child)

    walk(symtable.symtable(source, "<example>", "exec"))
    return used - defined


def test_every_mark_is_understood() -> None:
    for b in all_blocks():
        assert b.mode in MODES, f"{b}: unknown example mark {b.mode!r}"
        if b.mode not in ("run", "file"):
            assert b.lang == "python", f"{b}: an example mark on a {b.lang or 'plain'} block"
        if b.mode == "file":
            assert b.arg and not Path(b.arg).is_absolute() and ".." not in b.arg, f"{b}: {b.arg}"
        if b.mode == "instance":
            assert b.arg and (INSTANCES_DIR / b.arg).is_dir(), f"{b}: no bundled instance {b.arg}"


@pytest.mark.parametrize("block", PYTHON, ids=str)
def test_python_block_compiles_and_its_imports_exist(block: Block) -> None:
    tree = ast.parse(block.text, filename=str(block))  # a SyntaxError names the block
    for module, name in imported_names(tree):
        try:
            mod = importlib.import_module(module)
        except ImportError as exc:
            pytest.fail(f"{block}: `{module}` does not import: {exc}")
        if name is not None and not hasattr(mod, name):
            try:  # a submodule imported by name
                importlib.import_module(f"{module}.{name}")
            except ImportError:
                pytest.fail(f"{block}: `{module}` has no `{name}`")
    if block.mode not in ("excerpt", "file"):  # a file's blocks are checked whole, below
        missing = undefined_names(block.text)
        assert not missing, f"{block}: uses names it never defines or imports: {sorted(missing)}"


def run_script(block: Block, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    script = cwd / "example.py"
    script.write_text(block.text + "\n")
    return subprocess.run(
        [sys.executable, str(script)],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


def script_env() -> dict[str, str]:
    """The caller's environment without model credentials (conftest clears them from this
    process; a child gets its own copy)."""
    return {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "ANTHROPIC_"))}


@pytest.mark.parametrize(
    "block",
    [pytest.param(b, marks=pytest.mark.slow) if b.mode == "instance" else b for b in RUN],
    ids=str,
)
def test_python_block_runs(block: Block, tmp_path: Path) -> None:
    env = script_env()
    work = tmp_path / "work"
    work.mkdir()
    if block.mode == "instance":
        assert block.arg is not None
        # the example's store and builds stay in its directory (.suitebench/ by default)
        shutil.copytree(INSTANCES_DIR / block.arg, work / block.arg)
    if block.mode == "model-server":
        from suitebench.agents.fakeserver import FakeChatServer

        with FakeChatServer(responder=lambda request: "hi") as server:
            env |= {"OPENAI_BASE_URL": server.base_url, "OPENAI_API_KEY": "any"}
            done = run_script(block, work, env)
        assert server.requests, f"{block}: the example asked the model nothing"
    else:
        done = run_script(block, work, env)
    assert done.returncode == 0, f"{block} failed:\n{done.stderr[-3000:]}"


def project_files(page: Path) -> dict[str, str]:
    """The files a tutorial page builds, its ``file`` blocks joined by path in page order."""
    files: dict[str, str] = {}
    for b in blocks(page):
        if b.mode == "file":
            assert b.arg is not None
            files[b.arg] = files[b.arg] + "\n\n\n" + b.text if b.arg in files else b.text
    return files


PROJECT_PAGES = [p for p in DOCS if project_files(p)]


@pytest.mark.parametrize("page", PROJECT_PAGES, ids=lambda p: p.relative_to(ROOT).as_posix())
def test_tutorial_project_passes_its_own_tests(page: Path, tmp_path: Path) -> None:
    """The project a tutorial writes, file by file, is whole: its Python files define every
    name they use, and its tests pass -- as many as its files define (counted here from the
    text, not from pytest)."""
    files = project_files(page)
    for rel, text in files.items():
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text(text + "\n")
        if rel.endswith(".py"):
            missing = undefined_names(text)
            assert not missing, f"{page.name}: {rel} uses names it never defines: {sorted(missing)}"
    tests = sum(
        len(re.findall(r"^def test_\w+\(", text, re.M))
        for rel, text in files.items()
        if Path(rel).name.startswith("test_")
    )
    if not tests:
        return
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        env=script_env(),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, f"{page.name}: the project's tests fail:\n{done.stdout[-3000:]}"
    assert f"{tests} passed" in done.stdout, done.stdout[-500:]


# --- shell examples: commands and options of the command line -------------------------------


def command_tree() -> Any:
    from suitebench.cli.main import app  # registers every command (argv[0] is not suitebench)

    return typer.main.get_command(app)


def options_of(cmd: Any) -> set[str]:
    return {opt for p in cmd.params for opt in (*getattr(p, "opts", ()), *p.secondary_opts)}


def shell_lines() -> list[tuple[str, list[str]]]:
    """``(where, words)`` of every ``suitebench ...`` line of a shell example, continuation
    lines joined, a trailing comment dropped."""
    out = []
    for b in all_blocks():
        if b.lang in NOT_SHELL:
            continue
        lines = b.text.splitlines()
        k = 0
        while k < len(lines):
            first = k
            line = lines[k]
            while line.rstrip().endswith("\\") and k + 1 < len(lines):
                k += 1
                line = line.rstrip()[:-1] + " " + lines[k]
            k += 1
            prompt = line.strip().startswith("$ ")
            text = line.strip().removeprefix("$ ")
            # a prompt's command, or a synopsis (`suitebench score INSTANCE [--fast]`); not a
            # line of output (`suitebench launcher: ...`)
            if not re.match(
                r"suitebench\b" if prompt else r"suitebench [a-z][a-z0-9-]*(\s|$)", text
            ):
                continue
            try:
                words = shlex.split(text, comments=True)
            except ValueError:  # an unbalanced quote in a synopsis: split on blanks
                words = text.split()
            out.append((f"{b.doc}:{b.line + 1 + first}", words))
    return out


def check_command_line(words: list[str], group: Any) -> str | None:
    """What is wrong with one ``suitebench ...`` line (None: nothing)."""
    allowed = options_of(group) | {"--help"}
    cmd = group
    path = ["suitebench"]
    rest = iter(words[1:])
    for word in rest:
        if word.startswith("-"):
            if hasattr(cmd, "commands") and cmd is group:
                continue  # a global option before the command
            break
        if not hasattr(cmd, "commands"):
            break  # an argument of the command
        if not re.fullmatch(r"[a-z][a-z0-9-]*", word):
            return f"`{' '.join(words)}`: `{word}` is not a command"
        if word not in cmd.commands:
            return f"`{' '.join(path)}` has no command `{word}`"
        cmd = cmd.commands[word]
        path.append(word)
        allowed |= options_of(cmd)
    if cmd is group:
        return None  # prose (`suitebench only a ...`) or `suitebench --help`
    for word in words[1:]:
        opt = word.split("=", 1)[0].strip("[]|,")
        if opt.startswith("--") and len(opt) > 2 and opt not in allowed:
            return f"`{' '.join(path)}` takes no option `{opt}`"
    return None


def test_shell_examples_name_real_commands_and_options() -> None:
    group = command_tree()
    lines = shell_lines()
    assert len(lines) > 50  # the guides are full of them; a reader that finds none is broken
    wrong = [
        f"{where}: {why}" for where, words in lines if (why := check_command_line(words, group))
    ]
    assert not wrong, "\n".join(wrong)


def test_the_command_check_can_fail() -> None:
    """The checker itself: a renamed command, subcommand and option are each reported."""
    group = command_tree()
    assert check_command_line(["suitebench", "score", "x", "--all-tests"], group) is None
    assert check_command_line(["suitebench", "build", "mutants", "x", "--max", "3"], group) is None
    assert check_command_line(["suitebench", "--json", "score", "x"], group) is None
    assert "no command `scores`" in str(check_command_line(["suitebench", "scores", "x"], group))
    assert "no command `mutant`" in str(
        check_command_line(["suitebench", "build", "mutant"], group)
    )
    assert "no option `--all`" in str(check_command_line(["suitebench", "score", "--all"], group))


# --- names and files of suitebench the pages cite --------------------------------------------

DOTTED = re.compile(r"`(suitebench(?:\.\w+)+)")
OWN_PATH = re.compile(r"`((?:src/suitebench|tests|bench|[a-z]+)/[\w./-]+\.(?:py|c|toml))[`:]")
PACKAGES = {p.name for p in (ROOT / "src" / "suitebench").iterdir() if p.is_dir()}
GUIDES = [p for p in DOCS if "figures" not in p.parts]  # a bench writes figures/ itself


def resolves(name: str) -> bool:
    """``suitebench.a.b`` is a module, or an attribute reached from the longest module prefix."""
    parts = name.split(".")
    for k in range(len(parts), 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:k]))
        except ImportError:
            continue
        for attr in parts[k:]:
            if not hasattr(obj, attr):
                return False
            obj = getattr(obj, attr)
        return True
    return False


def own_path(path: str) -> Path | None:
    """Where a path a page cites lives in this repository, if it is one of its own (a path of a
    tutorial's project, `tests/test_parse.py`, is not)."""
    first, _, rest = path.partition("/")
    if first in PACKAGES:
        return ROOT / "src" / "suitebench" / path
    if path.startswith("src/suitebench/") or first == "bench":
        return ROOT / path
    if first == "tests" and (ROOT / "tests" / rest.partition("/")[0]).is_dir() and "/" in rest:
        return ROOT / path
    return None


def test_cited_modules_and_files_exist() -> None:
    """A dotted ``suitebench.`` name in backquotes imports; a file of the repository a guide
    names in backquotes (``suite/protocol/rows.py``, ``tests/suite/protocol/test_decoys.py``)
    exists."""
    wrong = []
    for page in GUIDES:
        text = page.read_text()
        where = page.relative_to(ROOT).as_posix()
        wrong += [f"{where}: `{n}`" for n in DOTTED.findall(text) if not resolves(n)]
        for path in OWN_PATH.findall(text):
            full = own_path(path)
            if full is not None and not full.exists():
                wrong.append(f"{where}: `{path}` does not exist")
    assert not wrong, "\n".join(sorted(set(wrong)))


# --- links between the pages ------------------------------------------------------------------

LINK = re.compile(r"\]\(([^)\s]+)\)")


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading: lower case, backquotes and punctuation dropped,
    blanks made hyphens."""
    text = heading.strip().lower().replace("`", "")
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(page: Path) -> set[str]:
    found: set[str] = set()
    fenced = False
    for line in page.read_text().splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
        elif not fenced and (m := re.match(r"#{1,6} (.*)", line)):
            found.add(slug(m[1]))
    return found


def test_links_between_pages_reach_a_page_and_a_heading() -> None:
    """A relative link names a file that exists and, with ``#anchor``, a heading of it."""
    wrong = []
    for page in [ROOT / "README.md", *DOCS]:
        where = page.relative_to(ROOT).as_posix()
        for target in LINK.findall(page.read_text()):
            if re.match(r"[a-z]+:", target):  # http:, mailto:
                continue
            path, _, anchor = target.partition("#")
            dest = (page.parent / path).resolve() if path else page
            if not dest.exists():
                wrong.append(f"{where}: ({target}): no {path}")
            elif anchor and dest.suffix == ".md" and anchor not in anchors(dest):
                wrong.append(f"{where}: ({target}): no heading #{anchor}")
    assert not wrong, "\n".join(wrong)
