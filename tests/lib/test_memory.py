"""The memory library: chunking real text, the scorers, floors and the median rule, the
cache in the store, the external embedding command and its failures, determinism."""

from __future__ import annotations

import os
import shutil
import sys
import textwrap
from pathlib import Path

import pytest

from ctxtools.errors import NotFoundError, UsageError
from ctxtools.memory import rank_memory
from ctxtools.memory.chunk import (
    MAX_CHUNK_CHARS,
    PLAIN_CHUNK_CHARS,
    chunk_lines,
    read_memory_file,
    split_lines,
)
from ctxtools.memory.threshold import FLOORS, MARGINS, SHARE_OF_BEST, threshold_for

DATA = Path(__file__).resolve().parents[1] / "data" / "memory"
DJANGO = DATA / "django"
OFF_TOPIC = "how long to bake sourdough bread at high altitude"


def chunks_of(path: Path):
    mf = read_memory_file(path.name, str(path), [])
    return mf, chunk_lines(path.name, mf.lines)


def text_of(mf, c) -> str:
    return "\n".join(mf.lines[c.start - 1 : c.end])


# --- chunking ------------------------------------------------------------------------------


def test_rst_sections_by_underlined_titles_with_real_line_numbers():
    mf, chunks = chunks_of(DJANGO / "managers.txt")
    headings = [c.heading for c in chunks]
    assert "Custom managers" in headings and "``from_queryset()``" in headings
    # Chunks are in file order and do not overlap; the first chunk of a section holds its
    # title (a long section goes on in more chunks under the same title).
    for a, b in zip(chunks, chunks[1:], strict=False):
        assert a.end < b.start
        if b.heading != a.heading:
            assert b.heading in text_of(mf, b)
    (custom,) = [c for c in chunks if c.heading == "Custom managers"]
    lines = (DJANGO / "managers.txt").read_text().split("\n")
    assert lines[custom.start - 1] == "Custom managers"
    assert set(lines[custom.start]) == {"="}


def test_markdown_sections_by_headings_not_inside_code_fences(tmp_path):
    md = tmp_path / "MEMORY.md"
    md.write_text(
        "# Decisions\n\nWe chose SQLite " + "for the cache store. " * 12 + "\n\n"
        "## Deploys\n\n```sh\n# not a heading: a shell comment\nmake deploy\n```\n\n"
        + "Deploys go through the staging host first. " * 6
        + "\n\n## Keys\n\n"
        + "Signing keys rotate every ninety days. " * 6
        + "\n"
    )
    mf, chunks = chunks_of(md)
    assert [c.heading for c in chunks] == ["Decisions", "Deploys", "Keys"]
    assert [(c.start, c.end) for c in chunks] == [(1, 3), (5, 12), (14, 16)]


def test_markdown_real_readme_every_heading_is_a_heading_line():
    mf, chunks = chunks_of(DATA / "ctxtools" / "README.md")
    assert len(chunks) > 5
    titles = {line.lstrip("#").strip() for line in mf.lines if line.startswith("#")}
    for c in chunks:
        assert c.heading in titles


def test_plain_text_by_paragraph_groups():
    mf, chunks = chunks_of(DJANGO / "LICENSE")
    assert len(chunks) >= 2
    assert all(c.heading == "" for c in chunks)
    for c in chunks:
        assert len(text_of(mf, c)) <= PLAIN_CHUNK_CHARS
        assert mf.lines[c.start - 1].strip() and mf.lines[c.end - 1].strip()


def test_long_section_cut_at_blank_lines_under_one_heading(tmp_path):
    para = "The cache warms on the first request and stays warm for an hour.\n"
    md = tmp_path / "long.md"
    md.write_text("# Cache\n\n" + ((para * 5) + "\n") * 20)
    mf, chunks = chunks_of(md)
    assert len(chunks) > 2
    assert {c.heading for c in chunks} == {"Cache"}
    for c in chunks:
        assert len(text_of(mf, c)) <= MAX_CHUNK_CHARS
    covered = [n for c in chunks for n in range(c.start, c.end + 1)]
    assert covered == sorted(set(covered))


def test_a_title_alone_joins_the_section_after_it(tmp_path):
    md = tmp_path / "m.md"
    md.write_text("# Guide\n\n## Install\n\n" + "Run pip install ctxtools first. " * 10 + "\n")
    _, chunks = chunks_of(md)
    assert [(c.heading, c.start) for c in chunks] == [("Install", 1)]


def test_lines_are_split_at_newlines_only():
    assert split_lines("a\r\nb\x0bc\u2028d\n") == ["a", "b\x0bc\u2028d"]


# --- bad input: empty files, binary files, missing paths -------------------------------------


def test_empty_memory_files_give_no_chunks_and_no_error(tmp_path):
    (tmp_path / "empty.md").write_bytes(b"")
    (tmp_path / "blank.txt").write_text("\n\n   \n")
    r = rank_memory([str(tmp_path)], "cache invalidation", store=tmp_path / "store")
    assert r.files == 2 and r.chunks == [] and r.kept == []


def test_binary_files_in_a_memory_dir_are_skipped_and_said(tmp_path):
    d = tmp_path / "mem"
    d.mkdir()
    shutil.copy(DJANGO / "signals.txt", d / "signals.txt")
    (d / "blob.md").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR" + bytes(range(256)))
    (d / "photo.jpg").write_bytes(b"\xff\xd8\xff\0")
    # (the task names what the section says; the text never names post_save)
    task = "how do I connect a receiver function to a signal sent by a specific sender"
    r = rank_memory([str(d)], task, store=tmp_path / "s")
    assert any("blob.md" in n and "binary" in n for n in r.notes)
    assert any("1 file(s) skipped (not .md, .txt or .rst)" in n for n in r.notes)
    assert r.files == 1 and r.kept
    assert {s.chunk.file for s in r.chunks} == {f"{d}/signals.txt".replace(os.sep, "/")} or all(
        s.chunk.file.endswith("signals.txt") for s in r.chunks
    )


def test_missing_memory_paths_are_one_error_naming_all(tmp_path):
    with pytest.raises(NotFoundError) as exc:
        rank_memory([str(tmp_path / "a.md"), str(tmp_path / "b")], "x y", store=tmp_path / "s")
    assert "a.md" in str(exc.value) and str(tmp_path / "b") in str(exc.value)
    assert not (tmp_path / "s").exists()


def test_invalid_utf8_and_cjk(tmp_path):
    md = tmp_path / "notes.md"
    md.write_bytes(
        ("# 缓存策略\n\n" + "缓存在第一次请求时预热，保存一个小时。" * 12).encode()
        + b"\n\xff\xfe bad bytes here\n\n# Deploys\n\n"
        + b"Deploys go through the staging host first, always. " * 5
        + b"\n"
    )
    r = rank_memory([str(md)], "缓存 预热", store=tmp_path / "s")
    assert r.kept and r.kept[0].chunk.heading == "缓存策略"
    assert "\ufffd" in r.kept[0].text


# --- floors and the median rule ------------------------------------------------------------


@pytest.mark.parametrize("method", ["tfidf", "hashing"])
def test_a_task_that_matches_nothing_gets_nothing(tmp_path, method):
    r = rank_memory([str(DJANGO)], OFF_TOPIC, method=method, store=tmp_path / "s")
    assert len(r.chunks) > 50
    assert r.kept == []
    assert r.threshold["threshold"] >= FLOORS[method]


@pytest.mark.parametrize("method", ["tfidf", "hashing"])
def test_a_task_on_the_subject_finds_its_section_first(tmp_path, method):
    r = rank_memory(
        [str(DJANGO)],
        "write a custom manager with extra manager methods",
        method=method,
        store=tmp_path / "s",
    )
    assert r.kept, r.chunks[:3]
    top = r.kept[0].chunk
    assert top.file.endswith("managers.txt")
    assert all(s.score >= r.threshold["threshold"] for s in r.kept)
    below = [s for s in r.chunks if not s.kept]
    assert below and all(s.score < r.threshold["threshold"] for s in below)


def test_the_floors_are_the_calibrated_ones():
    assert FLOORS == {"hashing": 0.40, "tfidf": 0.15, "cmd": 0.25, "tfidf+semantic": 0.40}


def test_median_rule_in_a_corpus_all_about_one_subject(tmp_path):
    # Every section talks about the signing keys; the task's words are in all of them, so
    # the median is high and the threshold rises above the floor with it.
    md = tmp_path / "keys.md"
    extras = "rotation vault audit revocation backup access naming expiry owners tooling alerts"
    parts = []
    for k, extra in enumerate(extras.split()):
        parts.append(
            f"## Keys {k}\n\n"
            + "The signing keys are kept apart. " * (k + 1)
            + f"Our {extra} rules for the {extra} of signing keys are written down here, "
            + f"with the reasons behind each {extra} choice and who decided it, and when.\n"
        )
    md.write_text("\n".join(parts))
    r = rank_memory([str(md)], "signing keys", method="tfidf", store=tmp_path / "s")
    th = r.threshold
    assert th["median"] > FLOORS["tfidf"]
    assert th["median"] + MARGINS["tfidf"] > FLOORS["tfidf"]
    assert th["best"] == r.chunks[0].score and th["share"] == SHARE_OF_BEST
    terms = {
        "median + margin": th["median"] + MARGINS["tfidf"],
        "share of the best": SHARE_OF_BEST * th["best"],
    }
    assert th["rule"] == max(terms, key=terms.get)
    assert th["threshold"] == pytest.approx(max(terms.values()), abs=1e-6)
    assert len(r.kept) < len(r.chunks)
    assert all(s.score > FLOORS["tfidf"] for s in r.chunks)  # the floor alone keeps all


def test_median_rule_when_the_scores_are_flat():
    # Twelve chunks that all score alike: the median is the noise, and nothing beats it by
    # the margin -- the share of the best (0.9 x 0.3) would have kept them all.
    th = threshold_for("tfidf", [0.30] * 12, None)
    assert th["rule"] == "median + margin"
    assert th["threshold"] == pytest.approx(0.30 + MARGINS["tfidf"])


def test_share_of_the_best_cuts_the_weak_tail():
    # Two strong chunks and a tail of weaker ones that still clear the floor and the
    # median: only the chunks close to the best stay.
    scores = [0.62, 0.58, 0.41, 0.38, 0.30] + [0.01] * 20
    th = threshold_for("tfidf", scores, None)
    assert th["rule"] == "share of the best"
    assert th["threshold"] == pytest.approx(SHARE_OF_BEST * 0.62)
    assert [s for s in scores if s >= th["threshold"]] == [0.62, 0.58]
    assert threshold_for("tfidf", scores, 0.35)["threshold"] == 0.35  # --min-score wins


def test_a_best_score_under_the_floor_keeps_nothing():
    th = threshold_for("hashing", [0.39, 0.38] + [0.05] * 20, None)
    assert th["rule"] == "floor" and th["threshold"] == FLOORS["hashing"]


def test_few_chunks_the_floor_alone(tmp_path):
    md = tmp_path / "one.md"
    md.write_text("# Keys\n\n" + "The signing keys rotate every ninety days. " * 8 + "\n")
    r = rank_memory([str(md)], "when do signing keys rotate", store=tmp_path / "s")
    # one chunk: no median; its own score decides against the floor (the share of the
    # best is below it by construction)
    assert r.threshold["rule"] in ("floor (fewer than 10 chunks: no median)", "share of the best")
    assert r.threshold["median"] + MARGINS["tfidf"] > r.chunks[0].score  # ignored
    assert len(r.kept) == 1


def test_min_score_overrides_floor_and_median(tmp_path):
    r = rank_memory([str(DJANGO)], OFF_TOPIC, min_score=0.0001, store=tmp_path / "s")
    assert r.threshold["rule"] == "min_score" and r.threshold["threshold"] == 0.0001
    assert r.kept  # "bread", "high" ... share a word with something
    with pytest.raises(UsageError):
        rank_memory([str(DJANGO)], OFF_TOPIC, min_score=1.5, store=tmp_path / "s")


def test_a_task_with_no_usable_words(tmp_path):
    r = rank_memory([str(DJANGO)], "the of and 42 ...", store=tmp_path / "s")
    assert r.no_words and r.kept == []
    assert any("no usable words" in n for n in r.notes)


def test_usage_errors(tmp_path):
    with pytest.raises(UsageError, match="unknown retrieval method"):
        rank_memory([str(DJANGO)], "cache", method="bm25")
    with pytest.raises(UsageError, match="needs --embed-cmd"):
        rank_memory([str(DJANGO)], "cache", method="cmd")
    with pytest.raises(UsageError, match="goes with --retrieval cmd"):
        rank_memory([str(DJANGO)], "cache", method="tfidf", embed_cmd="x")
    with pytest.raises(UsageError, match="--embed-cmd"):
        rank_memory([str(DJANGO)], "cache", method="cmd", embed_cmd="'unclosed")
    for bad in (float("nan"), float("inf"), 0.0, -1.0):
        with pytest.raises(UsageError, match="--embed-timeout"):
            rank_memory([str(DJANGO)], "cache", method="cmd", embed_cmd="x", embed_timeout=bad)


# --- the cache -------------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["tfidf", "hashing"])
def test_second_run_reads_the_cache_and_a_change_recomputes_only_its_chunk(tmp_path, method):
    d = tmp_path / "mem"
    shutil.copytree(DJANGO, d)
    store = tmp_path / "store"
    task = "per-view cache with the cache_page decorator"
    first = rank_memory([str(d)], task, method=method, store=store)
    n = first.cache["chunks"]
    assert first.cache["computed"] == n
    assert list((store / "memory").iterdir())
    second = rank_memory([str(d)], task, method=method, store=store)
    assert second.cache == {"chunks": n, "computed": 0, "cached": n}
    assert [s.as_dict() for s in second.chunks] == [s.as_dict() for s in first.chunks]
    # One word changed in one section of one file: that chunk alone is scored afresh.
    cache_txt = d / "cache.txt"
    text = cache_txt.read_text()
    assert text.count("entirely memory-based") == 1
    cache_txt.write_text(text.replace("entirely memory-based", "entirely RAM-based"))
    third = rank_memory([str(d)], task, method=method, store=store)
    assert third.cache == {"chunks": n, "computed": 1, "cached": n - 1}


def test_a_damaged_cache_is_rebuilt(tmp_path):
    store = tmp_path / "store"
    rank_memory([str(DJANGO)], "cache", store=store)
    (path,) = (store / "memory").iterdir()
    path.write_bytes(path.read_bytes()[:-10] + b"0123456789")
    r = rank_memory([str(DJANGO)], "cache", store=store)
    assert any("damaged" in n for n in r.notes)
    assert r.cache["computed"] == r.cache["chunks"]
    assert rank_memory([str(DJANGO)], "cache", store=store).cache["computed"] == 0


def test_a_store_that_cannot_be_written_still_ranks(tmp_path):
    store = tmp_path / "store-is-a-file"
    store.write_text("not a directory\n")
    r = rank_memory([str(DJANGO)], "custom manager methods", store=store)
    assert r.kept
    assert any("memory cache not written" in n for n in r.notes)
    assert store.read_text() == "not a directory\n"


# --- determinism ---------------------------------------------------------------------------


@pytest.mark.parametrize("method", ["tfidf", "hashing"])
def test_same_input_same_ranking_whatever_the_order_or_cache(tmp_path, method):
    paths = [str(DJANGO / "signals.txt"), str(DJANGO / "managers.txt"), str(DATA / "ctxtools")]
    task = "disconnect a signal receiver"
    a = rank_memory(paths, task, method=method, store=tmp_path / "a")
    b = rank_memory(paths[::-1], task, method=method, store=tmp_path / "b")
    c = rank_memory(paths, task, method=method, store=tmp_path / "a")  # from the cache
    rows = [s.as_dict() for s in a.chunks]
    assert rows == [s.as_dict() for s in b.chunks] == [s.as_dict() for s in c.chunks]
    assert a.threshold == b.threshold == c.threshold


# --- --embed-cmd -----------------------------------------------------------------------------

EMBEDDER = textwrap.dedent(
    """
    import json, sys, zlib
    mode = sys.argv[1]
    if mode == "hang":
        import time
        time.sleep(600)
    if mode == "fail":
        print("model not found: tiny-embed", file=sys.stderr)
        sys.exit(3)
    texts = [json.loads(line) for line in sys.stdin]
    if len(sys.argv) > 2:
        with open(sys.argv[2], "a") as log:
            log.write(f"{len(texts)}\\n")
    for k, t in enumerate(texts):
        v = [0.0] * 16
        for w in t.lower().split():
            v[zlib.crc32(w.encode()) % 16] += 1.0
        if mode == "malformed" and k == 1:
            print("[0.1, 0.2,")
        elif mode == "wrongdim" and k == 1:
            print(json.dumps(v[:8]))
        elif mode == "nan" and k == 0:
            print("[NaN" + ", 1" * 15 + "]")
        else:
            print(json.dumps(v))
    """
)


@pytest.fixture
def embedder(tmp_path) -> str:
    script = tmp_path / "embed.py"
    script.write_text(EMBEDDER)
    return f"{sys.executable} {script}"


def test_embed_cmd_vectors_are_used_and_cached(tmp_path, embedder):
    log = tmp_path / "calls.log"
    cmd = f"{embedder} ok {log}"
    task = "disconnect a signal receiver"
    r = rank_memory(
        [str(DJANGO / "signals.txt")], task, method="cmd", embed_cmd=cmd, store=tmp_path / "s"
    )
    assert r.method == "cmd" and r.threshold["floor"] == FLOORS["cmd"]
    n = r.cache["chunks"]
    again = rank_memory(
        [str(DJANGO / "signals.txt")], task, method="cmd", embed_cmd=cmd, store=tmp_path / "s"
    )
    assert again.cache["computed"] == 0
    assert [s.as_dict() for s in again.chunks] == [s.as_dict() for s in r.chunks]
    # The first call embedded the chunks and the task; the second only the task.
    assert log.read_text().split() == [str(n + 1), "1"]


@pytest.mark.parametrize(
    ("mode", "reason"),
    [
        ("fail", "exited with status 3: model not found: tiny-embed"),
        ("malformed", "line 2 is not JSON"),
        ("wrongdim", "line 2 has 8 dimensions, line 1 has 16"),
        ("nan", "line 1 is not JSON"),
        ("hang", "timed out after 0.5 s"),
    ],
)
def test_a_failing_embed_cmd_falls_back_to_tfidf_and_says_so(tmp_path, embedder, mode, reason):
    task = "disconnect a signal receiver"
    r = rank_memory(
        [str(DJANGO / "signals.txt")],
        task,
        method="cmd",
        embed_cmd=f"{embedder} {mode}",
        embed_timeout=0.5,
        store=tmp_path / "s",
    )
    assert r.method == "tfidf" and r.requested == "cmd"
    (note,) = [n for n in r.notes if "--embed-cmd" in n]
    assert reason in note and note.endswith("ranked with tfidf instead")
    plain = rank_memory([str(DJANGO / "signals.txt")], task, method="tfidf", store=tmp_path / "t")
    assert [s.as_dict() for s in r.chunks] == [s.as_dict() for s in plain.chunks]


def test_an_embed_cmd_that_does_not_exist_falls_back(tmp_path):
    r = rank_memory(
        [str(DJANGO / "signals.txt")],
        "signal receiver",
        method="cmd",
        embed_cmd="/nonexistent/embedder --model x",
        store=tmp_path / "s",
    )
    assert r.method == "tfidf"
    assert any("cannot run '/nonexistent/embedder'" in n for n in r.notes)


def test_tfidf_slope_one_is_plain_cosine_and_pivoted_scores_stay_within_one():
    import math

    from ctxtools.memory import tfidf

    docs = [
        tfidf.term_counts(["cache", "the", "view", "per", "site", "cache"]),
        tfidf.term_counts(["signal", "receiver", "connects", "to", "the", "sender"]),
        tfidf.term_counts(("cache " * 30 + "backend redis memcached").split()),
    ]
    df, norms = tfidf.corpus_stats(docs)
    query = tfidf.term_counts(["cache", "redis"])
    plain = tfidf.scores(query, docs, df, norms, slope=1.0)
    n = len(docs)

    def w(tf, t):
        return (1 + math.log(tf)) * (math.log((n + 1) / (df[t] + 1)) + 1)

    for doc, got in zip(docs, plain, strict=True):
        q = {t: w(c, t) for t, c in query.items()}
        d = {t: w(c, t) for t, c in doc.items()}
        dot = sum(q[t] * d.get(t, 0.0) for t in q)
        want = dot / (
            math.sqrt(sum(x * x for x in q.values())) * math.sqrt(sum(x * x for x in d.values()))
        )
        assert got == pytest.approx(want)
    pivoted = tfidf.scores(query, docs, df, norms)
    assert all(0.0 <= s <= 1.0 for s in pivoted)
    assert pivoted[1] == plain[1] == 0.0
    # The long chunk about caching gains on the short one when the norm is pivoted.
    assert pivoted[2] / pivoted[0] > plain[2] / plain[0]


def test_short_notes_together_take_the_title_of_the_longest(tmp_path):
    md = tmp_path / "m.md"
    md.write_text(
        "# Notes\n\n## Budget\n\nThe pack budget is the window minus the reserves and the"
        " slack.\n\n## Cooking\n\nBake at 220.\n"
    )
    _, chunks = chunks_of(md)
    assert [(c.heading, c.start, c.end) for c in chunks] == [("Budget", 1, 9)]
