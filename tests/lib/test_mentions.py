"""@-mentions: parsing a task, and resolving paths and basenames to files under a root."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from ctxtools import mentions
from ctxtools.analyzer import Mention, parse_mentions
from ctxtools.errors import InputError
from ctxtools.mentions import MentionResolver, Resolution, frecency, uselog

DAY = 86_400.0
NOW = 1_800_000_000.0  # a fixed clock: every ranking below is reproducible


@pytest.fixture
def git_env(tmp_path, monkeypatch):
    """git with no user or system configuration."""
    home = tmp_path / "home"
    home.mkdir()
    cfg = home / ".gitconfig"
    cfg.write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("GIT_CONFIG_GLOBAL", str(cfg))
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for var in ("GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE"):
        monkeypatch.delenv(var, raising=False)
    return home


def _index_doc(blob: bytes) -> dict:
    """The basename index a cache file holds (a memo file of the store)."""
    from ctxtools.memofile import decode

    doc = decode("mentions-index", blob)
    assert isinstance(doc, dict)
    return doc


def git(root: Path, *args: str, stdin: bytes | None = None) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", *args],
        cwd=root,
        input=stdin,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )


def write(root: Path, rel: str, text: str = "x = 1\n") -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def make_repo(root: Path, files: list[str], ignore: str = "") -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel in files:
        write(root, rel, f"# {rel}\n")
    if ignore:
        write(root, ".gitignore", ignore)
    git(root, "init", "-q")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "init")
    return root


def one(task: str) -> Mention:
    found = parse_mentions(task)
    assert len(found) == 1, found
    return found[0]


def resolve(resolver: MentionResolver, raw: str) -> Resolution:
    return resolver.resolve(one("@" + raw))


# ---------------------------------------------------------------------------------------
# Parsing
# ---------------------------------------------------------------------------------------


def test_the_kinds_and_spans():
    task = "fix expiry in @jwt.py, see @ctx:tests and @skill:review, then @src/auth/jwt.py"
    got = parse_mentions(task)
    assert [(m.raw, m.kind) for m in got] == [
        ("jwt.py", "basename"),
        ("ctx:tests", "handle"),
        ("skill:review", "skill"),
        ("src/auth/jwt.py", "path"),
    ]
    assert [task[m.start : m.end] for m in got] == [
        "@jwt.py",
        "@ctx:tests",
        "@skill:review",
        "@src/auth/jwt.py",
    ]
    assert got[0].trailing == ""  # "," ends a mention: nothing was stripped


@pytest.mark.parametrize(
    "task",
    [
        "mail alice@example.com about it",
        "see https://mastodon.social/@user for context",
        "a lone @ sign",
        "@",
        "ends with @",
        "@@jwt.py is escaped",
        "x@@jwt.py",
        "@... and @-- and @!",
        "@ctx: and @skill: name nothing",
        "josé@example.com",
        "`@pytest.fixture` in backticks",
        "```\n@app.route('/x')\ndef x(): ...\n```",
        "a+b@c.io and user_1@host",
    ],
)
def test_not_mentions(task):
    assert parse_mentions(task) == []


@pytest.mark.parametrize(
    ("task", "raw", "trailing"),
    [
        ("fix @jwt.py.", "jwt.py", "."),
        ("fix @jwt.py...", "jwt.py", "..."),
        ("(see @jwt.py)", "jwt.py", ""),
        ("see @jwt.py, then", "jwt.py", ""),
        ("is it @jwt.py?!", "jwt.py", "?!"),
        ("'@jwt.py'", "jwt.py", ""),
        ('"@jwt.py"', "jwt.py", ""),
        ("[@jwt.py]", "jwt.py", ""),
        ("in @src/auth/: the files", "src/auth/", ":"),
        ("@jwt.py's expiry", "jwt.py", ""),
        ("list=@a.py", "a.py", ""),
        ("**@a.py**", "a.py**", ""),
    ],
)
def test_trailing_punctuation_and_quotes(task, raw, trailing):
    m = one(task)
    assert (m.raw, m.trailing) == (raw, trailing)
    assert task[m.start] == "@"


def test_line_references_are_kept_apart():
    m = one("crash at @src/a.py:42.")
    assert (m.raw, m.line, m.kind, m.trailing) == ("src/a.py", 42, "path", ".")
    m = one("see @a.py:10-20")
    assert (m.raw, m.line) == ("a.py", 10)
    m = one("see @a.py#L7-L9")
    assert (m.raw, m.line) == ("a.py", 7)
    task = "at @a.py:3 now"
    m = one(task)
    assert task[m.start : m.end] == "@a.py:3"


def test_handles_keep_their_own_at_sign():
    m = one("compare @ctx:default/tests@3fa1c2 with it")
    assert (m.raw, m.kind) == ("ctx:default/tests@3fa1c2", "handle")


def test_code_spans_hold_no_mentions_but_text_around_them_does():
    task = "the `@property` on @models.py and\n```py\n@cache\n```\nthen @views.py"
    assert [m.raw for m in parse_mentions(task)] == ["models.py", "views.py"]
    # An unclosed fence runs to the end.
    assert parse_mentions("@a.py then ```\n@b.py") == [parse_mentions("@a.py")[0]]


def test_a_decorator_outside_code_is_a_basename_mention():
    # Documented: write decorators in backticks; otherwise they are mentions that do not
    # resolve, and the caller warns.
    assert one("why does @property break").raw == "property"


def test_cjk_text_around_mentions():
    task = "修复@jwt.py里的问题，参见@文档/说明.md。"
    got = parse_mentions(task)
    assert [(m.raw, m.kind) for m in got] == [
        ("jwt.py里的问题", "basename"),
        ("文档/说明.md", "path"),
    ]
    assert task[got[1].start : got[1].end] == "@文档/说明.md"
    assert one("（@a.py）").raw == "a.py"


def test_several_mentions_in_a_row():
    assert [m.raw for m in parse_mentions("@a.py,@b.py;@c.py @d.py")] == [
        "a.py",
        "b.py",
        "c.py",
        "d.py",
    ]


# ---------------------------------------------------------------------------------------
# Resolution
# ---------------------------------------------------------------------------------------


@pytest.fixture
def repo(tmp_path, git_env):
    return make_repo(
        tmp_path / "repo",
        [
            "README.md",
            "jwt.py",
            "src/auth/jwt.py",
            "src/auth/tokens.py",
            "src/api/jwt.py",
            "tests/auth/jwt.py",
            "lib/session.py",
            "lib/session.go",
            "docs/session.md",
            "build/ignored.py",
            "node_modules/pkg/vendored.py",
        ],
        ignore="build/\n",
    )


def test_an_exact_path_needs_no_index(repo, store_dir):
    r = MentionResolver(repo, store_dir)
    res = resolve(r, "src/auth/jwt.py")
    assert (res.path, res.reason, res.candidates) == (
        "src/auth/jwt.py",
        "exact path",
        ["src/auth/jwt.py"],
    )
    res = resolve(r, "jwt.py")  # a basename that is an exact path at the root
    assert (res.path, res.reason) == ("jwt.py", "exact path")
    assert r.index_state == "none"
    assert not (store_dir / "mentions").exists()


def test_exact_paths_normalise_and_stay_inside(repo, store_dir):
    r = MentionResolver(repo, store_dir)
    assert resolve(r, "./src/auth/../auth/jwt.py").path == "src/auth/jwt.py"
    assert resolve(r, f"{repo}/src/auth/jwt.py").path == "src/auth/jwt.py"
    res = resolve(r, "../outside.py")
    assert (res.path, res.reason) == (None, "../outside.py: outside the root")
    res = resolve(r, "/etc/passwd")
    assert (res.path, res.reason) == (None, "/etc/passwd: outside the root")
    res = resolve(r, "src/auth/")
    assert (res.path, res.reason) == (None, "src/auth/: a directory")


def test_only_file_with_the_name(repo, store_dir):
    r = MentionResolver(repo, store_dir, now=NOW)
    res = resolve(r, "tokens.py")
    assert (res.path, res.reason) == ("src/auth/tokens.py", "only file named tokens.py")
    assert r.index_state == "built"
    assert (store_dir / "mentions").is_dir()


def test_ignored_and_vendored_files_are_not_candidates(repo, store_dir):
    r = MentionResolver(repo, store_dir)
    assert resolve(r, "ignored.py").path is None
    assert resolve(r, "vendored.py").path is None
    # Named by their path they are still the user's explicit choice.
    assert resolve(r, "build/ignored.py").path == "build/ignored.py"


def test_several_candidates_without_uses(tmp_path, store_dir, git_env):
    root = make_repo(
        tmp_path / "repo",
        ["src/auth/jwt.py", "src/api/jwt.py", "tests/jwt.py", "a/b/c/jwt.py"],
    )
    r = MentionResolver(root, store_dir, now=NOW)
    res = resolve(r, "jwt.py")
    # Not a test first, then the shallower path, then by path.
    assert res.candidates == ["src/api/jwt.py", "src/auth/jwt.py", "a/b/c/jwt.py", "tests/jwt.py"]
    assert res.path == "src/api/jwt.py"
    assert res.reason == "4 files named jwt.py: none used before; first by path"
    res = resolve(r, "c/jwt.py")
    assert (res.path, res.reason) == ("a/b/c/jwt.py", "only file path ending in c/jwt.py")


def test_frecency_ranks_recent_use_above_old_heavy_use(repo, store_dir):
    r = MentionResolver(repo, store_dir, now=NOW)
    for _ in range(3):
        r.record_use(["src/api/jwt.py"], when=NOW - 14 * DAY)  # 3 × 0.25 = 0.75
    r.record_use(["tests/auth/jwt.py"], when=NOW - 1 * DAY)  # 1 × 0.906
    res = MentionResolver(repo, store_dir, now=NOW).resolve(one("@auth/jwt.py"))
    # Two paths end in auth/jwt.py; the test file was used recently.
    assert res.candidates == ["tests/auth/jwt.py", "src/auth/jwt.py"]
    assert res.reason == "2 files path ending in auth/jwt.py: highest frecency (0.91)"

    res = MentionResolver(repo, store_dir, now=NOW).resolve(one("@jwt.py里"))
    assert res.path == "jwt.py"  # the CJK tail cut, then the exact path at the root

    # Through the index (no file at the root of that name): 0.906 beats 0.75.
    (repo / "jwt.py").unlink()
    fresh = MentionResolver(repo, store_dir, now=NOW)
    res = resolve(fresh, "jwt.py")
    assert res.candidates[:2] == ["tests/auth/jwt.py", "src/api/jwt.py"]
    assert res.reason.startswith("3 files named jwt.py: highest frecency (0.91)")
    # Two more old uses: 5 × 0.25 = 1.25 now beats the recent single use.
    fresh.record_use(["src/api/jwt.py", "src/api/jwt.py"], when=NOW - 14 * DAY)
    fresh.record_use(["src/api/jwt.py"], when=NOW - 14 * DAY)
    res = resolve(MentionResolver(repo, store_dir, now=NOW), "jwt.py")
    assert res.path == "src/api/jwt.py"
    assert res.reason == "3 files named jwt.py: highest frecency (1.25)"


def test_frecency_formula():
    assert frecency(4, NOW - 7 * DAY, NOW) == pytest.approx(2.0)
    assert frecency(4, NOW - 14 * DAY, NOW) == pytest.approx(1.0)
    assert frecency(2, NOW + DAY, NOW) == 2.0  # a use in the future counts as now


def test_stem_and_case_insensitive_matches(repo, store_dir):
    r = MentionResolver(repo, store_dir, now=NOW)
    res = resolve(r, "tokens")
    assert (res.path, res.reason) == ("src/auth/tokens.py", "only file named tokens.* (by stem)")
    res = resolve(r, "session")
    assert res.candidates == ["docs/session.md", "lib/session.go", "lib/session.py"]
    assert res.reason == "3 files named session.* (by stem): none used before; first by path"
    res = resolve(r, "readme.MD")
    assert (res.path, res.reason) == ("README.md", "only file named readme.MD ignoring case")
    res = resolve(r, "TOKENS")
    assert res.path == "src/auth/tokens.py"


def test_unresolved_lists_the_closest_names(repo, store_dir):
    r = MentionResolver(repo, store_dir, now=NOW)
    res = resolve(r, "tokns.py")
    assert res.path is None
    assert res.reason == "not found; closest: tokens.py"
    assert res.candidates == ["src/auth/tokens.py"]
    res = resolve(r, "zzzzzzzz.qq")
    assert (res.path, res.candidates, res.reason) == (None, [], "not found; nothing close")


def test_trailing_punctuation_that_belongs_to_a_file_name(tmp_path, store_dir):
    root = tmp_path / "plain"
    write(root, "notes.")
    write(root, "deep/v2.")
    r = MentionResolver(root, store_dir)
    assert resolve(r, "notes.").path == "notes."
    assert one("see @notes.").raw == "notes"
    assert r.resolve(one("see @v2.")).path == "deep/v2."


def test_cjk_file_names(tmp_path, store_dir, git_env):
    root = make_repo(tmp_path / "repo", ["文档/说明.md", "src/数据.py"])
    r = MentionResolver(root, store_dir)
    assert r.resolve(one("看@说明.md。")).path == "文档/说明.md"
    assert r.resolve(one("修复@数据.py里的问题")).path == "src/数据.py"
    assert r.resolve(one("@文档/说明.md")).reason == "exact path"
    # And the cached index keeps the names intact.
    again = MentionResolver(root, store_dir)
    assert again.resolve(one("@说明.md")).path == "文档/说明.md"
    assert again.index_state == "cached"


def test_symlinks_out_of_the_root(tmp_path, store_dir):
    outside = tmp_path / "outside"
    write(outside, "secret.py")
    root = tmp_path / "plain"
    write(root, "inside.py")
    (root / "link.py").symlink_to(outside / "secret.py")
    (root / "linkdir").symlink_to(outside, target_is_directory=True)
    (root / "good.py").symlink_to(root / "inside.py")
    r = MentionResolver(root, store_dir)
    res = resolve(r, "link.py")
    assert (res.path, res.reason) == (None, "link.py: outside the root")
    res = resolve(r, "linkdir/secret.py")
    assert (res.path, res.reason) == (None, "linkdir/secret.py: outside the root")
    assert resolve(r, "secret.py").path is None
    assert resolve(r, "good.py").path == "good.py"


def test_symlink_out_of_a_git_root_is_no_candidate(tmp_path, store_dir, git_env):
    outside = tmp_path / "outside"
    write(outside, "creds.py")
    root = make_repo(tmp_path / "repo", ["a.py"])
    (root / "sub").mkdir()
    (root / "sub" / "creds.py").symlink_to(outside / "creds.py")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "link")
    res = resolve(MentionResolver(root, store_dir), "creds.py")
    assert res.path is None


def test_the_cache_is_reused(repo, store_dir):
    first = MentionResolver(repo, store_dir, now=NOW)
    assert resolve(first, "tokens.py").path == "src/auth/tokens.py"
    assert first.index_state == "built"
    cache = next((store_dir / "mentions").glob("index-v1-*.bin"))
    doc = _index_doc(cache.read_bytes())
    assert doc["via"] == "git"
    assert "src/auth/tokens.py" in doc["files"]
    second = MentionResolver(repo, store_dir, now=NOW)
    assert resolve(second, "tokens.py").path == "src/auth/tokens.py"
    assert second.index_state == "cached"
    assert second.notes == []


def test_the_cache_is_refreshed_when_a_directory_changes(repo, store_dir):
    r = MentionResolver(repo, store_dir, now=NOW)
    assert resolve(r, "session.py").path == "lib/session.py"
    write(repo, "docs/session.py")  # a second session.py, shallower-tied: docs < lib
    st = os.stat(repo / "docs")
    # Kernel timestamps are coarse: make the change of the directory's mtime certain.
    os.utime(repo / "docs", ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))
    again = MentionResolver(repo, store_dir, now=NOW)
    res = resolve(again, "session.py")
    assert again.index_state == "built"  # stale cache: built anew, not loaded
    assert res.candidates == ["docs/session.py", "lib/session.py"]


def test_a_new_file_is_found_even_when_no_mtime_moved(repo, store_dir):
    resolve(MentionResolver(repo, store_dir), "tokens.py")
    cache = next((store_dir / "mentions").glob("index-v1-*.bin"))
    before = cache.read_bytes()
    write(repo, "src/auth/brand_new.py")
    # Put every directory's mtime back as the cache recorded it.
    doc = _index_doc(before)
    for d, mtime in doc["dirs"].items():
        os.utime(repo / d if d else repo, ns=(mtime, mtime))
    r = MentionResolver(repo, store_dir)
    res = resolve(r, "brand_new.py")
    assert res.path == "src/auth/brand_new.py"
    assert r.index_state == "rebuilt"
    assert cache.read_bytes() != before


def test_a_removed_file_is_no_longer_offered(repo, store_dir):
    r = MentionResolver(repo, store_dir, now=NOW)
    assert resolve(r, "session.py").path == "lib/session.py"
    (repo / "lib" / "session.py").unlink()
    again = MentionResolver(repo, store_dir, now=NOW)
    res = resolve(again, "session.py")
    assert res.path is None
    assert res.reason == "not found; closest: session.md, session.go"
    assert res.candidates == ["docs/session.md", "lib/session.go"]


def test_a_corrupt_cache_is_rebuilt(repo, store_dir):
    resolve(MentionResolver(repo, store_dir), "tokens.py")
    cache = next((store_dir / "mentions").glob("index-v1-*.bin"))
    cache.write_bytes(b'{"version": 1, "root": ')
    r = MentionResolver(repo, store_dir)
    assert resolve(r, "tokens.py").path == "src/auth/tokens.py"
    assert r.index_state == "built"
    assert _index_doc(cache.read_bytes())["version"] == 1


def test_a_small_injected_cap_keeps_the_shallowest(tmp_path, store_dir):
    root = tmp_path / "plain"
    for rel in ["a.py", "b.py", "x/c.py", "x/d.py", "x/y/e.py", "x/y/z/f.py"]:
        write(root, rel)
    r = MentionResolver(root, store_dir, max_entries=4)
    assert resolve(r, "d.py").path == "x/d.py"
    assert r.index_truncated
    res = resolve(r, "f.py")
    assert res.path is None
    assert res.reason.startswith("not found among the first 4 files")
    # Named by path, a file beyond the cap still resolves.
    assert resolve(r, "x/y/z/f.py").path == "x/y/z/f.py"


def test_the_default_cap_is_50000(tmp_path, store_dir, git_env):
    """50,010 tracked paths (index entries only: git lists them, no file is written), and
    three real files: the index keeps the 50,000 shallowest."""
    root = tmp_path / "repo"
    root.mkdir()
    git(root, "init", "-q")
    empty = "e69de29bb2d1d6434b8b29ae775ad8c2e6c59391"  # the empty blob
    lines = "".join(f"100644 {empty}\td{i // 1000:02d}/f{i:05d}.txt\n" for i in range(50_008))
    git(root, "update-index", "--index-info", stdin=lines.encode())
    write(root, "top.py")
    write(root, "zz/deep/er/last.py")
    git(root, "add", "top.py", "zz")
    assert mentions.MAX_INDEX_ENTRIES == 50_000
    r = MentionResolver(root, store_dir)
    assert resolve(r, "top.py").path == "top.py"  # exact: no index
    res = resolve(r, "last.py")
    assert res.path is None
    assert r.index_truncated
    assert "not found among the first 50000 files" in res.reason
    doc = _index_doc(next((store_dir / "mentions").glob("index-v1-*.bin")).read_bytes())
    assert (doc["listed"], doc["truncated"]) == (50_010, True)
    # Of the 50,000 shallowest, the ones git lists but the work tree lacks are left out.
    assert doc["files"] == ["top.py"]


def test_a_store_that_cannot_be_written(repo, tmp_path):
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("a file where the store's parent should be\n")
    store = blocker / "store"
    r = MentionResolver(repo, store, now=NOW)
    assert resolve(r, "tokens.py").path == "src/auth/tokens.py"
    r.record_use(["src/api/jwt.py"], when=NOW)
    assert r.index_state == "built"
    assert any(n.startswith("mention index not saved: ") for n in r.notes)
    assert any(n.startswith("mention use log not saved: ") for n in r.notes)
    assert blocker.read_text() == "a file where the store's parent should be\n"
    # Still ranks (without frecency) and resolves.
    assert resolve(r, "jwt.py").path == "jwt.py"
    assert resolve(r, "session").path == "docs/session.md"


def test_the_use_log_is_bounded_and_compacted(repo, store_dir, monkeypatch):
    monkeypatch.setattr(uselog, "MAX_USES", 3)
    r = MentionResolver(repo, store_dir, now=NOW)
    r.record_use(["a.py"], when=NOW - 30 * DAY)  # the lowest frecency: dropped first
    r.record_use(["b.py"], when=NOW - 1 * DAY)
    r.record_use(["c.py"], when=NOW - 2 * DAY)
    r.record_use(["d.py", "b.py"], when=NOW)
    assert set(r.uses()) == {"b.py", "c.py", "d.py"}
    assert r.uses()["b.py"] == (2, NOW)
    log = r.uses_path
    for _ in range(4):  # more than twice the cap in lines: compacted
        r.record_use(["e.py"], when=NOW)
    lines = log.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 2 * 3
    kept = {json.loads(line)["p"]: json.loads(line)["n"] for line in lines}
    assert "a.py" not in kept
    assert MentionResolver(repo, store_dir, now=NOW).uses()["e.py"][0] == 4


def test_a_damaged_use_log_line_is_skipped(repo, store_dir):
    r = MentionResolver(repo, store_dir, now=NOW)
    r.record_use(["src/api/jwt.py"], when=NOW)
    with open(r.uses_path, "ab") as fh:
        fh.write(b'{"p": "x.py", "n": Infinity, "t": 1}\n[1, 2]\n{"p": 7, "n": 1, "t": 1}\n')
        fh.write(b'{"p": "y.py", "n": 1, "t": NaN}\n\xff\xfe\n')  # not ours, or damaged
        fh.write(b'{"p": "src/auth/jwt.py", "n": 1, "t"')  # a writer killed mid-line
    r.record_use(["src/auth/jwt.py"], when=NOW - DAY)
    uses = MentionResolver(repo, store_dir, now=NOW).uses()
    assert uses == {"src/api/jwt.py": (1, NOW), "src/auth/jwt.py": (1, NOW - DAY)}


def test_record_use_ignores_paths_that_leave_the_root(repo, store_dir):
    r = MentionResolver(repo, store_dir, now=NOW)
    r.record_use(["../x.py", "/etc/passwd", "", "./src/./a.py"], when=NOW)
    assert MentionResolver(repo, store_dir, now=NOW).uses() == {"src/a.py": (1, NOW)}
    r.record_use([], when=NOW)  # nothing to record: nothing changes
    assert MentionResolver(repo, store_dir, now=NOW).uses() == {"src/a.py": (1, NOW)}


def test_same_inputs_same_answers(repo, store_dir):
    def run():
        r = MentionResolver(repo, store_dir, now=NOW)
        return [r.resolve(m) for m in parse_mentions("@jwt @session @tokns.py @auth/jwt.py")]

    assert run() == run()


def test_only_paths_and_basenames_resolve(repo, store_dir):
    r = MentionResolver(repo, store_dir)
    with pytest.raises(ValueError, match="not 'handle'"):
        r.resolve(one("@ctx:tests"))


def test_a_root_that_is_not_a_directory(tmp_path, store_dir):
    with pytest.raises(InputError, match="no such directory"):
        MentionResolver(tmp_path / "missing", store_dir)
    write(tmp_path, "file.txt")
    with pytest.raises(InputError, match="not a directory"):
        MentionResolver(tmp_path / "file.txt", store_dir)
    assert not store_dir.exists()


def test_the_default_store_is_ctx_store(repo, store_dir):
    r = MentionResolver(repo)
    assert r.store_root == store_dir
    resolve(r, "tokens.py")
    assert list((store_dir / "mentions").glob("index-v1-*.bin"))


def test_file_names_that_are_not_utf8(tmp_path, store_dir):
    root = tmp_path / "plain"
    (root / "sub").mkdir(parents=True)
    with open(os.path.join(os.fsencode(root), b"sub", b"caf\xe9.py"), "wb") as fh:
        fh.write(b"x = 1\n")
    write(root, "other.py")
    name = os.fsdecode(b"caf\xe9.py")  # a lone surrogate stands for the bad byte
    r = MentionResolver(root, store_dir, now=NOW)
    res = r.resolve(Mention(name, "basename", 0, 1 + len(name)))
    assert (res.path, r.index_state) == ("sub/" + name, "built")
    r.record_use(["sub/" + name], when=NOW)
    again = MentionResolver(root, store_dir, now=NOW)
    assert again.resolve(Mention(name, "basename", 0, 1 + len(name))).path == "sub/" + name
    assert again.index_state == "cached"
    assert again.uses() == {"sub/" + name: (1, NOW)}
    assert again.notes == [] and r.notes == []


def test_tracked_files_deleted_from_the_work_tree_are_not_indexed(repo, store_dir):
    (repo / "lib" / "session.py").unlink()  # deleted, not yet committed: git still lists it
    r = MentionResolver(repo, store_dir, now=NOW)
    assert resolve(r, "session.py").path is None
    doc = _index_doc(next((store_dir / "mentions").glob("index-v1-*.bin")).read_bytes())
    assert "lib/session.py" not in doc["files"] and "lib/session.go" in doc["files"]
    # So the next run trusts its cache instead of rebuilding on every mention.
    again = MentionResolver(repo, store_dir, now=NOW)
    assert resolve(again, "session.go").path == "lib/session.go"
    assert again.index_state == "cached"


def test_a_tree_too_deep_to_walk_gives_an_answer_not_a_traceback(tmp_path, store_dir):
    """A tree deeper than the walk can recurse. The recursion limit is lowered for the
    test instead of building a tree deeper than the default limit of 1,000, which
    shutil.rmtree (and so pytest's clean-up of old temporary directories) cannot remove."""
    import sys

    root = tmp_path / "deep"
    deep = "/".join(["d"] * 400) + "/deep.py"
    write(root, deep)
    limit = sys.getrecursionlimit()
    sys.setrecursionlimit(300)
    try:
        r = MentionResolver(root, store_dir)
        res = resolve(r, "deep.py")
        named = resolve(r, deep)
    finally:
        sys.setrecursionlimit(limit)
    # Either the listing copes with the depth, or the index is empty and says why.
    assert res.path == deep or (
        res.path is None
        and r.notes == ["mention index empty: the directory tree is too deep to list"]
    )
    assert named.path == deep  # named by its path, it needs no listing
