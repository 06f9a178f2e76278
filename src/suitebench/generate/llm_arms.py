"""The model arms: the Auditors paper's single call (``llm-single``) and a CodeContests+-style
generator + validator (``llm-genval``).

``llm-single`` is Appendix D.2's protocol: its system message and user template verbatim
(Unicode punctuation transliterated to ASCII, as the paper prints them; ``cap`` = the budget,
``max_seeds`` = 60, the compiler ``g++ -O2 -std=c++17``), the statement and one reference
solution (the first C++ reference, else the first one), one frozen chat call, nothing fed
back. Literal inputs are taken as written; generators are compiled and swept sandboxed over
seeds ``0..N-1``. When the reply yields fewer legal inputs than the budget, the arm tops up
with further *independent* calls (another sampling seed, the same prompt; ``--max-calls 1``
is the paper's exact one call).

``llm-genval`` follows CodeContests+'s generator-validator pipeline in one call: the model
writes a C++ validator and generator(s); if one does not compile, the compiler's message is
sent back and it may try again (at most two retries, as the paper's reproduction allowed). An
input counts when its own validator accepts it, then the problem's validator and the oracle;
top-up sweeps further seeds of its generators.

A call that fails (the endpoint down or erroring after every retry) ends the arm's stream, not
the run: what earlier calls produced is kept, the failure is recorded (``model_error``), and
since every reply is in the store a rerun resumes at the failed call. Why a call gave nothing
(a reply of prose alone, a generator that did not build) is written down in ``notes``.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import count
from pathlib import Path
from typing import Any

from suitebench.audit.runs import AuditEngine
from suitebench.generate.records import Candidate, GenerateError, derive_seed
from suitebench.generate.reply import GeneratorBlock, parse_reply
from suitebench.generate.sweep import compile_cpp, first_error, sweep
from suitebench.llm.client import ModelClient, ModelError
from suitebench.model.problem import Problem
from suitebench.run.toolchain import Built

__all__ = ["GenVal", "SingleCall", "single_call_messages"]

MAX_SEEDS = 60
CXX = "g++ -O2 -std=c++17"

SYSTEM_MESSAGE = (
    "You are generating adversarial TEST DATA for a competitive-programming problem. Your "
    "objective: produce a high-quality, DIVERSE set of LEGAL inputs (satisfying ALL input "
    "constraints stated in the problem) that would catch ANY subtly-wrong solution -- an "
    'input "kills" a wrong solution when the trusted reference runs OK on it but the wrong '
    "solution diverges "
    "(different output) or times out / crashes. You are a frozen frontier model with NO hidden "
    "test pool and NO interactive tools -- reason ONLY from the statement and the reference "
    "solution given, and answer in one shot. A good set mixes: small/edge cases (n=1, "
    "minimal), boundary/extreme values, overflow triggers, degenerate/adversarial structures "
    "(chains, stars, all-equal, coprime, ...), worst-case-complexity (maximum-size) inputs, "
    "and problem-specific tricky special cases."
)

USER_TEMPLATE = """=== PROBLEM STATEMENT ===
{statement}

=== REFERENCE SOLUTION (trusted oracle, human-accepted, {language}) ===
{reference}

=== CHANNELS (two ways to produce inputs; use either or both) ===
- **Direct construction** -- emit the raw stdin bytes of an input inside a "===INPUT===" block.
- **Generator program** -- emit a C++17 program inside a "===GENERATOR===" block. We compile it \
with "{cxx}" and run it once per seed "0..N-1", where N is the "===SEEDS===" value; each run's \
stdout becomes one input. **Contract: the program reads ONE integer seed from stdin and prints \
exactly ONE legal input to stdout, and must produce a different input for a different seed.** \
This is the channel for SCALE (maximum-size / worst-case inputs) that the literal channel cannot \
reach -- typing a 10^5-element input as text is not feasible, writing a generator is.

(!) You will NOT be told whether the program compiled, what it printed, whether any input is \
legal, or how many inputs exist so far. Nothing is checked back to you. Write code that is \
correct by construction and inputs that are legal by construction.

=== OUTPUT PROTOCOL (strict) ===
Reply with ONLY the blocks below -- no prose, no explanation, no markdown fences around them.

===INPUT===
<raw stdin bytes of ONE test input>

===GENERATOR===
<complete C++17 program: reads one integer seed on stdin, prints ONE legal input on stdout>
===SEEDS===
<how many seeds to sweep, an integer, at most {max_seeds}>

Blocks may appear in any order and any number of times. A "===GENERATOR===" block MUST be \
immediately followed by its "===SEEDS===" block. Emit nothing outside these blocks.

(!!) **THIS IS YOUR ONLY REPLY.** You get exactly ONE response -- there is no second turn, no \
follow-up, no chance to add more later. Everything you emit now IS your entire final test set. \
Produce all {cap} distinct inputs in this single reply. Do not pace yourself, do not defer part \
of the budget to a later turn, do not end with an intention to continue -- there is no later \
turn.
"""

GENVAL_SYSTEM = (
    "You are a competitive-programming test setter. From the problem statement and a trusted "
    "reference solution you write (1) a strict input VALIDATOR and (2) test GENERATOR programs, "
    "as the CodeContests+ generator-validator pipeline does. Every test must satisfy ALL input "
    "constraints of the statement; the tests should be diverse (small and edge cases, boundary "
    "values, overflow triggers, adversarial structures, maximum-size inputs) so that they catch "
    "any subtly-wrong solution."
)

GENVAL_TEMPLATE = """=== PROBLEM STATEMENT ===
{statement}

=== REFERENCE SOLUTION (trusted, {language}) ===
{reference}

=== WHAT TO WRITE ===
- One "===VALIDATOR===" block: a complete C++17 program (standard library only, no testlib) \
that reads one test input on stdin and exits with code 0 if and only if it satisfies every \
constraint and the exact format of the statement (non-zero otherwise).
- One or more "===GENERATOR===" blocks, each immediately followed by a "===SEEDS===" block: a \
complete C++17 program that reads ONE integer seed on stdin and prints exactly ONE legal input \
on stdout (a different input for a different seed), and how many seeds (at most {max_seeds}) \
to run it over. We compile with "{cxx}".

Together the generators should produce about {cap} distinct legal inputs. Reply with ONLY \
these blocks, no prose.
"""


def _language(path: Path) -> str:
    return {".cpp": "C++", ".cc": "C++", ".c": "C", ".py": "Python", ".rs": "Rust"}.get(
        path.suffix, path.suffix.lstrip(".") or "source"
    )


def shown_reference(problem: Problem) -> Path:
    """The one reference the model sees: the first C++ one (the paper's), else the first."""
    files = [p for p in problem.references if p.is_file()]
    if not files:
        raise GenerateError(f"problem {problem.id}: no reference source file to show the model")
    cpp = [p for p in files if p.suffix in (".cpp", ".cc")]
    return (cpp or files)[0]


def _prompt_parts(problem: Problem) -> dict[str, str]:
    if problem.statement is None:
        raise GenerateError(f"problem {problem.id}: the model arms need a statement")
    ref = shown_reference(problem)
    return {
        "statement": problem.statement.read_text(encoding="utf-8").strip(),
        "reference": ref.read_text(encoding="utf-8").strip(),
        "language": _language(ref),
        "cxx": CXX,
        "max_seeds": str(MAX_SEEDS),
    }


def single_call_messages(problem: Problem, cap: int) -> list[dict[str, str]]:
    """The Appendix D.2 request: system message + the user template filled in."""
    user = USER_TEMPLATE.format(cap=cap, **_prompt_parts(problem))
    return [{"role": "system", "content": SYSTEM_MESSAGE}, {"role": "user", "content": user}]


def genval_messages(problem: Problem, cap: int) -> list[dict[str, str]]:
    user = GENVAL_TEMPLATE.format(cap=cap, **_prompt_parts(problem))
    return [{"role": "system", "content": GENVAL_SYSTEM}, {"role": "user", "content": user}]


class _ModelArm:
    def __init__(
        self,
        problem: Problem,
        engine: AuditEngine,
        client: ModelClient,
        *,
        seed: int,
        budget: int,
        work_dir: Path,
        max_calls: int = 3,
        temperature: float = 1.0,
        max_tokens: int | None = None,
    ) -> None:
        self.problem = problem
        self.engine = engine
        self.client = client
        self.seed = seed
        self.budget = budget
        self.work_dir = work_dir
        self.max_calls = max(1, max_calls)
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.calls: list[dict[str, Any]] = []
        self.generators: list[dict[str, Any]] = []
        self.notes: list[str] = []
        self.model_error: str | None = None

    def _call(self, messages: list[dict[str, str]], n: int) -> tuple[str, dict[str, Any]] | None:
        """The reply of call ``n`` (0-based), or ``None`` when it failed: the failure is then
        recorded, and the caller stops asking (the next call would fail the same way)."""
        model_seed = derive_seed(self.seed, "call", n)
        try:
            reply = self.client.chat(
                messages, temperature=self.temperature, max_tokens=self.max_tokens, seed=model_seed
            )
        except ModelError as exc:
            self.model_error = f"call {n + 1} failed: {exc}"
            self.calls.append({"call": n + 1, "model_seed": model_seed, "error": str(exc)})
            return None
        info: dict[str, Any] = {
            "call": n + 1,
            "model_seed": model_seed,
            "prompt_tokens": reply.prompt_tokens,
            "completion_tokens": reply.completion_tokens,
            "cost_usd": reply.cost_usd,
            "cached": reply.cached,
            "finish_reason": reply.finish_reason,
        }
        if reply.finish_reason == "length":
            info["truncated"] = True
        self.calls.append(info)
        return reply.text, info

    def _note_empty(self, n: int, text: str, info: dict[str, Any]) -> None:
        """Say why a reply gave nothing to keep, so "0 kept, dropped: none" is never the
        whole story."""
        why = "the reply is prose only" if text.strip() else "the reply is empty"
        if info.get("truncated"):
            why += ", cut off at the token limit"
        self.notes.append(f"call {n + 1}: no input blocks in the reply ({why})")

    def _compile(self, code: str, name: str) -> Built:
        built = compile_cpp(self.engine, code, self.work_dir, name)
        entry: dict[str, Any] = {"name": f"{name}.cpp", "built": built.ok}
        if not built.ok:
            entry["error"] = first_error(built.message)
            entry["message"] = built.message.strip()[-400:]
        self.generators.append(entry)
        return built

    def kept(self, candidate: Candidate) -> None:
        pass

    def own_validator(self) -> Built | None:
        return None

    def details(self) -> dict[str, Any]:
        return {
            "model": self.client.model,
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
            "calls": self.calls,
            "programs": self.generators,
            "shown_reference": self.problem.rel(shown_reference(self.problem)),
            "notes": self.notes,
            "model_error": self.model_error,
        }


def build_failed(origin: str, built: Built, seeds: int) -> Candidate:
    """A generator that did not build, as one dropped candidate: its seeds never ran, and the
    log must count the loss (``generator_failed``) with the compiler's own first error."""
    return Candidate(
        origin,
        drop="generator_failed",
        detail=f"did not build ({seeds} seeds not run): {first_error(built.message)}",
    )


class SingleCall(_ModelArm):
    """Appendix D.2: one frozen call per repetition; more independent calls only to top up."""

    def candidates(self) -> Iterator[Candidate]:
        messages = single_call_messages(self.problem, self.budget)
        for n in range(self.max_calls):
            answer = self._call(messages, n)
            if answer is None:
                return
            text, info = answer
            parsed = parse_reply(text, max_seeds=MAX_SEEDS)
            info["inputs"] = len(parsed.inputs)
            info["generators"] = [g.seeds for g in parsed.generators]
            info["parser_notes"] = parsed.notes
            if not parsed.items:
                self._note_empty(n, text, info)
            for k, item in enumerate(parsed.items, 1):
                where = f"call {n + 1} block {item.index + 1}"
                if isinstance(item, GeneratorBlock):
                    built = self._compile(item.code, f"call{n + 1}-gen{k}")
                    if built.ok:
                        yield from sweep(self.engine, built, range(item.seeds), f"{where} gen")
                    else:
                        self.notes.append(
                            f"{where}: the generator did not build: {first_error(built.message)}"
                        )
                        yield build_failed(f"{where} gen", built, item.seeds)
                else:
                    yield Candidate(f"{where} input", item.text.encode())


class GenVal(_ModelArm):
    """CodeContests+-style: the model's validator and generators; retries on compile errors."""

    MAX_RETRIES = 2

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._validator: Built | None = None
        self._gens: list[tuple[Built, int, str]] | None = None
        self._broken: list[Candidate] = []  # the last try's generators that did not build

    def _setup(self) -> None:
        messages = genval_messages(self.problem, self.budget)
        self._gens = []
        for attempt in range(self.MAX_RETRIES + 1):
            answer = self._call(messages, attempt)
            if answer is None:
                return  # keep what the previous try built
            text, info = answer
            parsed = parse_reply(text, max_seeds=MAX_SEEDS)
            info["parser_notes"] = parsed.notes
            if not parsed.items and not parsed.validators:
                self._note_empty(attempt, text, info)
            errors: list[str] = []
            broken: list[Candidate] = []
            validator = None
            if parsed.validators:
                validator = self._compile(parsed.validators[0], f"try{attempt + 1}-validator")
                if not validator.ok:
                    errors.append(f"validator:\n{validator.message.strip()[-1500:]}")
            else:
                errors.append("validator: no ===VALIDATOR=== block")
            gens = []
            for k, g in enumerate(parsed.generators, 1):
                built = self._compile(g.code, f"try{attempt + 1}-gen{k}")
                if built.ok:
                    gens.append((built, g.seeds, f"try {attempt + 1} gen {k}"))
                else:
                    errors.append(f"generator {k}:\n{built.message.strip()[-1500:]}")
                    broken.append(build_failed(f"try {attempt + 1} gen {k}", built, g.seeds))
            if not parsed.generators:
                errors.append("no ===GENERATOR=== block")
            self._validator, self._gens = (validator if validator and validator.ok else None), gens
            self._broken = broken
            if not errors or attempt == self.MAX_RETRIES:
                self.notes += [f"try {attempt + 1}: {_gist(e)}" for e in errors]
                return
            # CodeContests+ feedback: the compile errors go back; the model may fix them.
            feedback = "These programs did not compile or are missing:\n\n" + "\n\n".join(errors)
            feedback += "\n\nReply again with ALL the blocks, corrected."
            messages = [
                *messages,
                {"role": "assistant", "content": text},
                {"role": "user", "content": feedback},
            ]

    def own_validator(self) -> Built | None:
        if self._gens is None:
            self._setup()
        return self._validator

    def candidates(self) -> Iterator[Candidate]:
        if self._gens is None:
            self._setup()
        yield from self._broken
        gens = self._gens or []
        if not gens:
            return
        # First each generator's own seeds in turn, then (top-up) further seeds round-robin.
        for built, seeds, origin in gens:
            yield from sweep(self.engine, built, range(seeds), origin)
        for block in count():
            for built, seeds, origin in gens:
                more = range(seeds + 8 * block, seeds + 8 * (block + 1))
                yield from sweep(self.engine, built, more, f"{origin} (top-up)")


def _gist(error: str) -> str:
    """One line of a compile-feedback entry: what failed and the compiler's first error."""
    what, _, message = error.partition(":\n")
    return f"{what} did not build: {first_error(message)}" if message else error
