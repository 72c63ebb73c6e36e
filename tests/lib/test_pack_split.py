"""ctxtools.pack.split: a real pack cut into parts that each fit, at file and definition
boundaries, never inside a line, and nothing of the pack lost."""

from __future__ import annotations

import re

import pytest
from helpers import copy_sources

from ctxtools.errors import UsageError
from ctxtools.pack import PackRequest, build_pack
from ctxtools.pack.model import looks_like_pack
from ctxtools.pack.split import (
    MARKER,
    joined,
    looks_like_part,
    part_paths,
    split_pack,
)
from ctxtools.tokens.choice import get_ruler
from ctxtools.tokens.rulers import HeuristicRuler

HEADER_RE = re.compile(r"^\[ctx-pack: part (\d+) of (\d+)\]$")
FENCE_RE = re.compile(r"^`{3,}[a-z]*$")


@pytest.fixture(scope="module")
def cl100k():
    return get_ruler(encoding="cl100k_base").ruler


@pytest.fixture
def pack_text(tmp_path, cl100k) -> str:
    root = tmp_path / "repo"
    copy_sources(root)
    req = PackRequest(
        task="ship_order and write_off in inventory.py; the lexer's tokens",
        paths=[str(root)],
        root=str(root),
        tokens=6000,
        fill=True,
    )
    return build_pack(req, cl100k).text


def _added(line: str) -> bool:
    """A line a part adds to the pack's own: its header, a fence, a continued header."""
    return bool(HEADER_RE.match(line) or FENCE_RE.match(line) or line.endswith("(continued)"))


def _check_parts(text: str, parts, ruler, limit: int) -> None:
    n = len(parts)
    original = [x for x in text.split("\n") if x.strip()]
    at = 0
    for i, part in enumerate(parts, 1):
        assert part.tokens == ruler.count(part.text) <= limit
        assert (part.index, part.total) == (i, n)
        assert part.text.split("\n", 1)[0] == f"[ctx-pack: part {i} of {n}]"
        assert part.text.count("```") % 2 == 0  # every fence it opens, it closes
        for line in part.text.split("\n"):
            if at < len(original) and line == original[at]:
                at += 1
            else:  # anything else is what the part adds, or a blank line
                assert not line.strip() or _added(line), line
    assert at == len(original)  # every line of the pack, whole and in order


@pytest.mark.parametrize("limit", [3000, 1000, 400, 150])
def test_every_part_fits_and_nothing_is_lost(pack_text, cl100k, limit):
    assert cl100k.count(pack_text) > 3000  # so that 3000 makes two parts or more
    parts = split_pack(pack_text, cl100k, limit)
    assert len(parts) >= 2
    _check_parts(pack_text, parts, cl100k, limit)


def test_a_file_larger_than_a_part_is_cut_before_its_definitions(pack_text, cl100k):
    parts = split_pack(pack_text, cl100k, 500)
    continued = [p for p in parts if "inventory.py <== (continued)" in p.text]
    assert len(continued) >= 2
    for part in continued:
        lines = part.text.split("\n")
        first = lines[lines.index(next(x for x in lines if x.endswith("(continued)"))) + 1]
        # the first line of code after the continued header starts a definition or a gap
        assert re.search(r"^\d+\t(def |class |@)|^⋮", first), first


def test_a_block_of_half_a_part_or_less_is_never_cut(pack_text, cl100k):
    blocks = re.findall(r"```text\n(==> (\S+) <==.*?)```\n", pack_text, re.S)
    # A part twice the second-smallest block (at least 1,500): two blocks or more are
    # half a part or less whatever the engine chose to show.
    sizes = sorted(cl100k.count(body) for body, _name in blocks)
    assert len(sizes) >= 3
    limit = max(1500, 2 * (sizes[1] + 20))
    small = [name for body, name in blocks if cl100k.count(body) <= limit // 2 - 20]
    assert len(small) >= 2 and cl100k.count(pack_text) > 2 * limit
    parts = split_pack(pack_text, cl100k, limit)
    assert len(parts) >= 3
    for name in small:
        holding = [p for p in parts if f"==> {name} <==" in p.text]
        assert len(holding) == 1, name
        assert f"==> {name} <== (continued)" not in joined(parts)


def test_the_same_pack_splits_to_the_same_bytes(pack_text, cl100k):
    assert joined(split_pack(pack_text, cl100k, 700)) == joined(split_pack(pack_text, cl100k, 700))


def test_a_pack_that_fits_is_one_part(pack_text, cl100k):
    (part,) = split_pack(pack_text, cl100k, 100_000)
    assert part.text == "[ctx-pack: part 1 of 1]\n\n" + pack_text
    assert MARKER not in joined([part])


def test_header_digits_are_counted_for_ten_parts_and_more():
    text = "".join(f"# S{i}\n\n" + "word " * 60 + "\n\n" for i in range(40))
    ruler = HeuristicRuler()
    parts = split_pack(text, ruler, 100)
    assert len(parts) >= 10
    _check_parts(text, parts, ruler, 100)
    assert parts[-1].text.startswith(f"[ctx-pack: part {len(parts)} of {len(parts)}]")


def test_a_line_longer_than_a_part_says_the_smallest_size_that_works(cl100k):
    text = "# Files\n\n```text\n" + "x = " + "+".join(["abc"] * 400) + "\n```\n"
    with pytest.raises(UsageError) as err:
        split_pack(text, cl100k, 200)
    need = int(re.search(r"give --split (\d+)", str(err.value)).group(1))
    assert need > 200
    parts = split_pack(text, cl100k, need)
    assert all(p.tokens <= need for p in parts)
    _check_parts(text, parts, cl100k, need)


def test_a_limit_below_the_smallest_part_is_a_usage_error(cl100k):
    with pytest.raises(UsageError):
        split_pack("# Task\n\nx\n", cl100k, 10)


def test_part_file_names():
    assert part_paths("pack.md", 3) == ["pack.1.md", "pack.2.md", "pack.3.md"]
    assert part_paths("out/pack", 2) == ["out/pack.1.md", "out/pack.2.md"]
    assert part_paths(".md", 1) == [".md.1.md"]


def test_parts_are_known_as_packs(pack_text, cl100k):
    parts = split_pack(pack_text, cl100k, 800)
    for part in parts:
        data = part.text.encode()
        assert looks_like_part(data)
        assert looks_like_pack(data)  # so that a packed directory leaves them out
    assert not looks_like_part(pack_text.encode())
