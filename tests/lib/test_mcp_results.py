"""ctxtools.mcp.results: the seed's rule for our own results."""

from __future__ import annotations

import json

from ctxtools.mcp.results import Reply, deliver, handle_name
from ctxtools.store import HandleStore


def test_a_short_result_stays_inline_and_nothing_is_stored(tmp_path):
    store = HandleStore(tmp_path / "store")
    done = deliver(store, "default", "pack", Reply("x" * 1000, ["note: n"]))
    assert done.text == "x" * 1000 and done.notes == ["note: n"] and done.card is None
    assert store.records() == []


def test_a_long_result_is_stored_and_shown_by_its_card_and_first_slice(tmp_path):
    store = HandleStore(tmp_path / "store")
    text = "".join(f"row {i:04d} of the map\n" for i in range(500))
    done = deliver(store, "s1", "repomap", Reply(text), inline_max=200)
    first, rest = done.text.split("\n", 1)
    card = json.loads(first)
    assert card == done.card
    assert card["name"] == handle_name("repomap", text.encode()) == f"repomap-{card['sha256'][:12]}"
    assert card["session_id"] == "s1" and card["length"] == len(text)
    body, trailer = rest.rsplit("\n[", 1)
    assert len(body) <= 200 and text.startswith(body)
    nxt = body.count("\n") + 2
    assert f'next: read {{"ref":"{card["ref"]}","range":"{nxt}-"}}]' in trailer
    assert store.read_bytes(card["ref"]) == text.encode()
    again = deliver(store, "s1", "repomap", Reply(text), inline_max=200)
    assert again.text == done.text  # the same result, the same handle and bytes


def test_a_read_is_never_stored(tmp_path):
    store = HandleStore(tmp_path / "store")
    done = deliver(store, "default", "read", Reply("y" * 5000, page=False))
    assert done.text == "y" * 5000 and done.card is None
