"""The single-call reply parser on a corpus of replies written the way models drift."""

from __future__ import annotations

from suitebench.generate.reply import DEFAULT_SEEDS, GeneratorBlock, InputBlock, parse_reply

from .conftest import reply


def test_well_formed_reply_keeps_block_order() -> None:
    parsed = parse_reply(reply("01-well-formed.txt"))
    kinds = [type(i).__name__ for i in parsed.items]
    assert kinds == ["InputBlock", "InputBlock", "InputBlock", "GeneratorBlock", "InputBlock"]
    assert [i.text for i in parsed.inputs] == [
        "1\n5\n",
        "3\n7 7 1\n",
        "2\n1000000000 1000000000\n",
        "4\n-5 -5 -5 -5\n",
    ]
    (gen,) = parsed.generators
    assert gen.seeds == 12 and gen.seeds_given
    assert gen.code.startswith("#include <cstdio>") and gen.code.rstrip().endswith("}")
    assert parsed.notes == []


def test_fences_around_blocks_and_contents_are_removed() -> None:
    parsed = parse_reply(reply("02-fenced.txt"))
    assert [i.text for i in parsed.inputs] == ["1\n-1000000000\n"]
    (gen,) = parsed.generators
    assert gen.seeds == 6
    assert "```" not in gen.code and gen.code.startswith("#include <cstdio>")


def test_prose_around_blocks_and_dressed_markers() -> None:
    parsed = parse_reply(reply("03-prose-around.txt"))
    assert [i.text for i in parsed.inputs] == [
        "3\n2 9 9\n",
        "5\n1000000000 1000000000 1000000000 1000000000 -3\n",
        "2\n4 8\n",
    ]
    assert "text before the first block ignored" in parsed.notes
    assert any("trailing prose removed" in n for n in parsed.notes)


def test_a_generator_without_its_seeds_is_swept_over_the_default() -> None:
    parsed = parse_reply(reply("04-missing-seeds.txt"))
    gen, inp = parsed.items
    assert isinstance(gen, GeneratorBlock) and isinstance(inp, InputBlock)
    assert gen.seeds == DEFAULT_SEEDS and not gen.seeds_given
    assert any("without ===SEEDS===" in n for n in parsed.notes)
    assert any("===SEEDS=== without a generator" in n for n in parsed.notes)


def test_a_truncated_reply_keeps_what_is_complete() -> None:
    parsed = parse_reply(reply("07-truncated.txt"))
    assert [i.text for i in parsed.inputs] == ["3\n1 2 3\n"]
    (gen,) = parsed.generators  # cut off mid-program: the build will fail, not the parser
    assert gen.seeds == DEFAULT_SEEDS and 'printf("3\\n%lld %lld' in gen.code


def test_seeds_in_words_are_clamped_and_odd_replies_do_not_raise() -> None:
    text = "===GENERATOR===\nint main(){}\n===SEEDS===\nabout 500 seeds please\n"
    (gen,) = parse_reply(text, max_seeds=60).generators
    assert gen.seeds == 60
    text = "===GENERATOR===\nint main(){}\n===SEEDS===\nas many as you like\n"
    (gen,) = parse_reply(text).generators
    assert gen.seeds == DEFAULT_SEEDS and not gen.seeds_given
    for odd in ("", "no blocks at all", "===INPUT===\n\n===INPUT===", "===SEEDS===\n4\n"):
        parsed = parse_reply(odd)
        assert parsed.items == [] and parsed.notes
    crlf = "===INPUT===\r\n2\r\n1 2\r\n"
    assert parse_reply(crlf).inputs[0].text == "2\n1 2\n"


def test_validator_blocks_are_collected_for_genval() -> None:
    text = "===VALIDATOR===\n```cpp\nint main(){return 0;}\n```\n===GENERATOR===\nx\n===SEEDS===\n3"
    parsed = parse_reply(text)
    assert parsed.validators == ["int main(){return 0;}\n"]
    assert parsed.generators[0].seeds == 3
