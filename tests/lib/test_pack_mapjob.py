"""pack.mapjob: the repo map built in a child while the pack reads gives the pack it gives
when built in the pack's own process -- whatever the budget (a refit in the child), a
focus that changes once the files are checked, or a child that dies."""

from __future__ import annotations

import dataclasses
import os
import threading
from pathlib import Path

import pytest
from helpers import children_of, copy_sources, many_sources

from ctxtools.pack import fit, mapjob
from ctxtools.pack.build import build_pack
from ctxtools.pack.model import PackRequest
from ctxtools.tokens import HeuristicRuler

PW = "Xk29aLmQ0pZr7TbWc3YhN8vD"  # made up, in a password's shape: protects nothing


class Hung(BaseException):
    """(Not an Exception: the pack would take it for a failed child and build the map.)"""


@pytest.fixture(autouse=True)
def deadline():
    """A pack that waits on a child for ever fails here instead of hanging the run."""
    import signal

    def late(signum, frame):
        raise Hung("a pack waited on its map's child for over 120 s")

    old = signal.signal(signal.SIGALRM, late)
    signal.alarm(120)
    yield
    signal.alarm(0)
    signal.signal(signal.SIGALRM, old)


@pytest.fixture
def tree(tmp_path) -> Path:
    root = tmp_path / "repo"
    copy_sources(root)  # real modules in five languages
    many_sources(root / "pkg", 230)  # past FOCUS_MAX: the map is not personalised toward all
    (root / "docs").mkdir()
    (root / "docs" / "connect.md").write_text("# Connecting\n\nconnect_7 opens a Link7.\n")
    (root / ".env").write_text(f"DB_PASSWORD={PW}\n")
    return root


def _pack(root: Path, store: Path, **extra) -> dict:
    extra.setdefault("paths", [str(root)])
    req = PackRequest(
        task="connect_7 retries forever when Link7 drops the port",
        root=str(root),
        store=str(store),
        **extra,
    )
    return build_pack(req, ruler=HeuristicRuler()).as_dict()  # (what it says: all of it)


@pytest.fixture
def watched(monkeypatch):
    """Every map job of the test: each one's calls (scanned, result) and the map's refits
    (made here, from what the child handed over)."""
    from ctxtools.repomap import core

    calls: list[str] = []
    real_scanned, real_result = mapjob.MapJob.scanned, mapjob.MapJob.result
    real_refit = core.refit_map
    monkeypatch.setattr(mapjob, "PARALLEL_MIN", 0)
    monkeypatch.setattr(
        mapjob.MapJob, "scanned", lambda self: calls.append("scanned") or real_scanned(self)
    )
    monkeypatch.setattr(
        mapjob.MapJob,
        "result",
        lambda self: _once(self, calls, "result") or real_result(self),
    )

    def refit(kept, tokens, ruler):
        calls.append("refit")
        return real_refit(kept, tokens, ruler)

    monkeypatch.setattr(core, "refit_map", refit)  # (MapState imports it when it refits)
    return calls


def _once(job, calls: list[str], name: str) -> None:
    if not getattr(job, "_watched", False):
        job._watched = True
        calls.append(name)


def _serial(monkeypatch):
    monkeypatch.setattr(mapjob, "wanted", lambda req, n: False)


@pytest.mark.parametrize("tokens", [1000, 6000])
def test_the_child_s_map_gives_the_same_pack(tree, tmp_path, monkeypatch, watched, tokens):
    extra = {"tokens": tokens, "exclude": ["pkg/m0003.py", "nowhere/*"]}
    store = tmp_path / "store"
    built = [_pack(tree, store, **extra) for _ in range(2)]  # an empty store, then warm
    assert watched.count("scanned") == watched.count("result") == 2
    if tokens == 1000:  # less room than the map asks: it is fitted to what is left
        assert "refit" in watched
    assert children_of(os.getpid()) == []
    _serial(monkeypatch)
    here = tmp_path / "store-here"
    assert [_pack(tree, here, **extra) for _ in range(2)] == built
    assert watched.count("result") == 2  # (none more)
    assert "map" in {s["name"] for s in built[0]["sections"]}
    assert any("nowhere/*" in n for n in built[0]["notes"])  # no file matched: said the same


def test_a_focus_changed_by_the_checks_builds_the_map_here(tree, tmp_path, monkeypatch, watched):
    # The .env is named, so the job's map is personalised toward it; the checks leave it
    # out (a secret), so the pack's focus is another: the job is dropped, the map built here.
    extra = {"tokens": 4000, "paths": [str(tree), str(tree / ".env")]}
    job_made = []
    real_init = mapjob.MapJob.__init__
    monkeypatch.setattr(
        mapjob.MapJob, "__init__", lambda self, *a: job_made.append(1) or real_init(self, *a)
    )
    via_job = _pack(tree, tmp_path / "store", **extra)
    assert job_made == [1] and watched == []  # started, never asked
    assert children_of(os.getpid()) == []
    assert PW not in via_job["text"]
    _serial(monkeypatch)
    assert _pack(tree, tmp_path / "store-here", **extra) == via_job


def _dies(post, *args):
    os._exit(3)


def _raises(post, *args):
    raise MemoryError("no room for the scan")


def _dies_ranking(post, *args):
    post(("scanned", {}, [], True))  # (no definitions: the pack's ranking scans its files itself)
    post(("defs", None))  # (no cache: the pack opens it itself)
    os._exit(3)


_BUILD = mapjob._build_in_child  # (the real child)


def _dies_looking_up(post, *args):
    def posts(value):
        if value[0] == "defs":
            os._exit(3)  # (the pack waits for the files past the map's cut: it opens the cache)
        post(value)

    _BUILD(posts, *args)


def _raises_looking_up(post, *args):
    def posts(value):
        if value[0] == "defs":
            raise ValueError("a file the scan cache cannot take")  # (nothing more is posted)
        post(value)

    _BUILD(posts, *args)


def _raises_ranking(post, *args):
    post(("scanned", {}, [], True))
    post(("defs", None))
    raise MemoryError("no room for the ranking")


@pytest.mark.parametrize(
    ("child", "calls"),
    [
        (_dies, ["scanned"]),
        (_raises, ["scanned"]),
        (_dies_ranking, ["scanned", "result"]),
        (_dies_looking_up, ["scanned", "result"]),
        (_raises_looking_up, ["scanned", "result"]),
        (_raises_ranking, ["scanned", "result"]),
    ],
    ids=[
        "dies",
        "raises",
        "dies-ranking",
        "dies-looking-up",
        "raises-looking-up",
        "raises-ranking",
    ],
)
def test_a_child_that_fails_leaves_the_map_to_this_process(
    tree, tmp_path, monkeypatch, watched, child, calls
):
    from ctxtools.repomap.core import build_map

    # (a map cut short: the child looks up the files past the cut before it ends)
    monkeypatch.setitem(build_map.__wrapped__.__kwdefaults__, "max_files", 40)
    monkeypatch.setattr(mapjob, "_build_in_child", child)
    via_job = _pack(tree, tmp_path / "store", tokens=4000)
    assert watched == calls
    assert children_of(os.getpid()) == []
    _serial(monkeypatch)
    assert _pack(tree, tmp_path / "store-here", tokens=4000) == via_job


def _dies_after_its_ranks(post, *args):
    def posts(value):
        if value[0] == "head":
            os._exit(3)  # (the pack refits: it builds the map itself)
        post(value)

    _BUILD(posts, *args)


def test_a_child_that_dies_after_its_ranks_leaves_the_refit_here(
    tree, tmp_path, monkeypatch, watched
):
    monkeypatch.setattr(mapjob, "_build_in_child", _dies_after_its_ranks)
    built = []
    real_build = fit.MapState._build
    monkeypatch.setattr(
        fit.MapState, "_build", lambda self, n: built.append(n) or real_build(self, n)
    )
    via_job = _pack(tree, tmp_path / "store", tokens=1000)  # (less room than the map asks)
    assert watched[:2] == ["scanned", "result"] and built  # (then refitted here)
    assert children_of(os.getpid()) == []
    _serial(monkeypatch)
    assert _pack(tree, tmp_path / "store-here", tokens=1000) == via_job


def _labels(n: int, ext: str = ".py") -> list[str]:
    return [f"pkg/m{i:05d}{ext}" for i in range(n)]


def test_a_small_tree_or_one_cpu_keeps_the_map_here(monkeypatch):
    req = PackRequest(task="x", paths=["."])
    monkeypatch.setattr(mapjob, "cpus", lambda: 2)
    assert not mapjob.wanted(req, _labels(mapjob.PARALLEL_MIN - 1))
    assert mapjob.wanted(req, _labels(mapjob.PARALLEL_MIN))
    monkeypatch.setattr(mapjob, "cpus", lambda: 1)
    assert not mapjob.wanted(req, _labels(10 * mapjob.PARALLEL_MIN))
    assert not mapjob.wanted(dataclasses.replace(req, use_map=False), _labels(5000))
    monkeypatch.setattr(mapjob, "cpus", lambda: 2)
    # --jobs: 1 keeps the pack in one process; 2 or more forks the map whatever the tree
    one, two = dataclasses.replace(req, jobs=1), dataclasses.replace(req, jobs=2)
    assert not mapjob.wanted(one, _labels(10 * mapjob.PARALLEL_MIN))
    monkeypatch.setattr(mapjob, "cpus", lambda: 1)
    assert mapjob.wanted(two, _labels(3))
    assert not mapjob.wanted(dataclasses.replace(two, use_map=False), _labels(3))
    monkeypatch.setattr(mapjob, "cpus", lambda: 2)
    seen = []  # a worker thread (ctx-mcp's): no fork
    worker = threading.Thread(target=lambda: seen.append(mapjob.wanted(req, _labels(9000))))
    worker.start()
    worker.join()
    assert seen == [False]


def test_a_tree_the_map_cuts_short_keeps_the_map_here(monkeypatch):
    from ctxtools.source.scanset import MAX_FILES

    monkeypatch.setattr(mapjob, "cpus", lambda: 2)
    req = PackRequest(task="x", paths=["."])
    code, text = _labels(MAX_FILES + 1), _labels(3 * MAX_FILES, ".txt")
    assert mapjob.cut_short(code) and not mapjob.wanted(req, code)
    assert mapjob.wanted(dataclasses.replace(req, jobs=2), code)  # (asked for)
    # files the map does not scan do not count: the map takes every one it would
    assert not mapjob.cut_short(text + _labels(MAX_FILES)) and mapjob.wanted(req, text)
    assert mapjob.cut_short(text + code)


def test_files_past_the_map_s_cut_are_looked_up_by_the_child(tree, tmp_path, monkeypatch, watched):
    # More files than the map takes (--max-files): the pack ranks some the map did not
    # scan. Their definitions come from the scan cache the child loaded, never loaded here.
    from ctxtools.pack import choose
    from ctxtools.repomap.core import build_map

    monkeypatch.setitem(build_map.__wrapped__.__kwdefaults__, "max_files", 40)
    asked, opened = [], []
    real_look_up, real_open = mapjob.MapJob.look_up, choose._open_scan_cache
    monkeypatch.setattr(
        mapjob.MapJob, "look_up", lambda self, a: asked.append(len(a)) or real_look_up(self, a)
    )
    monkeypatch.setattr(choose, "_open_scan_cache", lambda *a: opened.append(1) or real_open(*a))
    built = [_pack(tree, tmp_path / "store", tokens=6000) for _ in range(2)]
    assert asked and all(asked) and opened == []
    _serial(monkeypatch)
    assert [_pack(tree, tmp_path / "store-here", tokens=6000) for _ in range(2)] == built
    assert opened == []  # (the map's own cache, handed over in this process)


def test_jobs_on_the_command_line(tree, tmp_path, script_runner):
    """--jobs 1 and --jobs 2 give the same pack (the second built with the map in a child,
    even for this small tree); a count out of range is a usage error."""
    args = ["ctx-pack", "-q", "connect_7 drops the port", "--tokens", "3000", "."]
    env = {**os.environ, "CTX_STORE": str(tmp_path / "store")}
    one = script_runner.run([*args, "--jobs", "1"], env=env, cwd=tree)
    two = script_runner.run([*args, "--jobs", "2"], env=env, cwd=tree)
    assert one.returncode == two.returncode == 0, one.stderr + two.stderr
    assert one.stdout == two.stdout and "connect_7" in one.stdout
    bad = script_runner.run([*args, "--jobs", "0"], env=env, cwd=tree)
    assert bad.returncode == 2 and "--jobs" in bad.stderr and "Traceback" not in bad.stderr
