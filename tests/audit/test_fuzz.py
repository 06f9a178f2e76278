"""Validator fuzz on a small problem: a strict validator has no false accept, a sloppy one
has the false accepts it must, and legal-by-accident variants are reported as accepted."""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import pytest

from suitebench.audit.fuzz import (
    FuzzVerdict,
    VariantKind,
    fuzz_validator,
    structural_variants,
)
from suitebench.run.toolchain import build, program_from_path

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "fuzz"


def official(problem: str) -> tuple[list[bytes], list[str]]:
    files = sorted((FIXTURES / problem / "official").glob("*.in"))
    return [f.read_bytes() for f in files], [f.name for f in files]


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@pytest.fixture
def work(tmp_path: Path) -> Path:
    d = tmp_path / "work"
    d.mkdir()
    return d


def test_variants_of_one_input() -> None:
    got = {(v.kind, v.data) for v in structural_variants(b"3\n1 2 3\n")}
    assert got == {
        (VariantKind.TRAILING_TOKEN, b"3\n1 2 3 0\n"),
        (VariantKind.TRAILING_TOKEN, b"3 0\n1 2 3\n"),
        (VariantKind.TRUNCATION, b"3\n1 2\n"),
        (VariantKind.TRUNCATION, b"3\n1 "),
        (VariantKind.NON_NUMERIC, b"x\n1 2 3\n"),
        (VariantKind.NON_NUMERIC, b"3\n1 2 1a\n"),
        (VariantKind.MISSING_LINE, b"1 2 3\n"),
        (VariantKind.MISSING_LINE, b"3\n"),
        (VariantKind.EXTRA_LINE, b"3\n1 2 3\n1 2 3\n"),
    }
    # a one-line input without numbers: no numeric field, no second line to drop
    kinds = [v.kind for v in structural_variants(b"kiwi\n")]
    assert VariantKind.NON_NUMERIC not in kinds and VariantKind.MISSING_LINE not in kinds
    assert structural_variants(b"") == []


def test_strict_validator_has_no_false_accept(tmp_path: Path, work: Path) -> None:
    inputs, ids = official("sumarr")
    validator = program_from_path(FIXTURES / "sumarr" / "validator_strict.py")
    seen: list[tuple[int, int]] = []
    report = fuzz_validator(
        validator,
        inputs,
        cwd=work,
        input_ids=ids,
        cache_dir=tmp_path / "cache",
        progress=lambda d, t: seen.append((d, t)),
    )
    assert report.originals_rejected == ()
    assert len(report.findings) >= 20
    assert report.accepts == ()
    assert report.errors == ()
    assert report.sound
    # one step for the originals, one per official input, one for the supplied track
    assert [d for d, _ in seen] == list(range(1, len(inputs) + 3))
    assert {t for _, t in seen} == {len(inputs) + 2}
    counts = report.by_kind()
    for kind in VariantKind:
        if kind is not VariantKind.KNOWN_ILLEGAL:  # none supplied here
            assert counts[str(kind)]["rejected"] > 0, kind
    json.dumps(report.to_dict())  # the report is plain data


def test_sloppy_validator_false_accepts_are_reported(tmp_path: Path, work: Path) -> None:
    inputs, ids = official("sumarr")
    built = build(
        program_from_path(FIXTURES / "sumarr" / "validator_sloppy.c"),
        cache_dir=tmp_path / "cache",
    )
    assert built.ok, built.message
    report = fuzz_validator(built, inputs, cwd=work, input_ids=ids)
    assert report.originals_rejected == ()
    assert not report.sound
    accepted = {(f.source_id, f.data) for f in report.accepts}
    # scanf never looks past the n-th number: trailing tokens and extra lines pass
    assert ("01.in", b"3\n1 2 3 0\n") in accepted
    assert ("01.in", b"3\n1 2 3\n1 2 3\n") in accepted
    # "3 0" on the first line: reads n=3 then 0 1 2 and stops
    assert ("01.in", b"3 0\n1 2 3\n") in accepted
    # scanf("%lld") reads "1a" as 1
    assert ("01.in", b"3\n1 2 1a\n") in accepted
    # dropping the header line: n=1, a=2, the 3 is ignored
    assert ("01.in", b"1 2 3\n") in accepted
    # cut to half its bytes, mid-number: "1\n-1000" still parses
    assert ("02.in", b"1\n-1000") in accepted
    # and what any validator must reject, it rejects
    rejected = {f.sha256 for f in report.findings if f.verdict is FuzzVerdict.REJECTED}
    assert sha(b"x\n1 2 3\n") in rejected
    assert sha(b"3\n1 2\n") in rejected
    # each accepted variant carries what a user needs to reproduce it
    for f in report.accepts:
        assert f.data is not None and len(f.sha256) == 64 and f.preview
    written = report.write_accepts(tmp_path / "accepts")
    assert {p.read_bytes() for p in written} == {f.data for f in report.accepts}

    # the strict validator rejects every variant the sloppy one accepts: they are illegal
    strict = fuzz_validator(
        program_from_path(FIXTURES / "sumarr" / "validator_strict.py"),
        [f.data for f in report.accepts if f.data is not None],
        cwd=work,
        cache_dir=tmp_path / "cache",
    )
    assert [v for _, v in strict.original_verdicts] == [FuzzVerdict.REJECTED] * len(report.accepts)


def test_legal_by_accident_variants_are_reported_as_accepted(tmp_path: Path, work: Path) -> None:
    inputs, ids = official("words")
    report = fuzz_validator(
        program_from_path(FIXTURES / "words" / "validator.py"),
        inputs,
        cwd=work,
        input_ids=ids,
        cache_dir=tmp_path / "cache",
    )
    assert report.originals_rejected == ()
    # the line count is free: a dropped or duplicated line is still a legal word list, and
    # cutting "apple\nbanana\n" to its first half leaves "apple\n", a legal list of one
    assert {f.kind for f in report.accepts} == {
        VariantKind.MISSING_LINE,
        VariantKind.EXTRA_LINE,
        VariantKind.TRUNCATION,
    }
    accepted = {f.data for f in report.accepts}
    assert {b"apple\nbanana\nbanana\n", b"apple\n", b"banana\n", b"kiwi\nkiwi\n"} == accepted
    # "banana 0" is not a word: rejected
    assert b"apple\nbanana 0\n" not in {f.data for f in report.accepts}
    assert not report.sound  # the user has to look: the report cannot know these are legal


def test_a_validator_rejecting_everything_fails_on_the_originals(
    tmp_path: Path, work: Path
) -> None:
    inputs, ids = official("sumarr")
    script = tmp_path / "reject_all.py"
    script.write_text("import sys\nsys.exit(1)\n")
    report = fuzz_validator(
        program_from_path(script), inputs, cwd=work, input_ids=ids, cache_dir=tmp_path / "cache"
    )
    assert report.accepts == ()  # no false accept...
    assert report.originals_rejected == tuple(ids)  # ...but it fails the quality gate
    assert not report.sound


def test_a_validator_that_does_not_build_is_an_outcome(tmp_path: Path, work: Path) -> None:
    src = tmp_path / "broken.c"
    src.write_text("int main(void) { return }\n")
    report = fuzz_validator(
        program_from_path(src), [b"1\n"], cwd=work, cache_dir=tmp_path / "cache"
    )
    assert report.build_message
    assert report.findings == ()
    assert not report.sound


def test_duplicates_and_originals_are_skipped(tmp_path: Path, work: Path) -> None:
    # two identical official inputs: the second one's variants are all duplicates; and the
    # extra-line variant of "1\n1\n" is the other official input "1\n1\n1\n": not a variant
    inputs = [b"1\n1\n", b"1\n1\n", b"1\n1\n1\n"]
    validator = program_from_path(FIXTURES / "words" / "validator.py")
    report = fuzz_validator(validator, inputs, cwd=work, cache_dir=tmp_path / "cache")
    assert report.skipped_identical >= 1
    assert report.skipped_duplicates >= len(structural_variants(inputs[0]))
    shas = [f.sha256 for f in report.findings]
    assert len(shas) == len(set(shas))


def test_known_illegal_inputs_form_a_semantic_track(tmp_path: Path, work: Path) -> None:
    inputs, ids = official("sumarr")
    # well formed, but n = 0 and a value over 10^9: both break a stated constraint, and both
    # validators check ranges (the sloppy one only skips structure)
    known = [b"0\n\n", b"2\n1 1000000001\n"]
    for source in ("validator_strict.py", "validator_sloppy.c"):
        report = fuzz_validator(
            program_from_path(FIXTURES / "sumarr" / source),
            inputs,
            cwd=work,
            input_ids=ids,
            cache_dir=tmp_path / "cache",
            known_illegal=known,
            known_illegal_ids=["n-zero", "a-too-big"],
        )
        track = [f for f in report.findings if f.kind is VariantKind.KNOWN_ILLEGAL]
        assert {f.source_id for f in track} == {"n-zero", "a-too-big"}
        assert all(f.source_index == -1 for f in track)
        assert all(f.verdict is FuzzVerdict.REJECTED for f in track)
    with pytest.raises(ValueError, match="byte-identical"):
        fuzz_validator(["true"], inputs, cwd=work, known_illegal=[inputs[0]])


def test_a_validator_accepting_everything_is_caught_on_both_tracks(work: Path) -> None:
    inputs, ids = official("sumarr")
    accept_all = [sys.executable, "-S", "-c", "import sys; sys.stdin.buffer.read()"]
    report = fuzz_validator(accept_all, inputs, cwd=work, input_ids=ids, known_illegal=[b"0\n\n"])
    assert report.originals_rejected == ()
    assert len(report.accepts) == len(report.findings) > 20
    assert VariantKind.KNOWN_ILLEGAL in {f.kind for f in report.accepts}
    assert not report.sound
