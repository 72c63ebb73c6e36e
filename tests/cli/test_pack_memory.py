"""ctx-pack --memory and ctx-excerpt --memory as a user runs them: a real small repository
with a memory directory of real text (Django's docs, this project's notes)."""

from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
from helpers import copy_sources

from ctxtools.tokens import get_ruler

MEMORY = Path(__file__).resolve().parents[1] / "data" / "memory"
TASK = "add a custom manager method to the inventory model"
AWS_EXAMPLE_KEY = "AKIAIOSFODNN7EXAMPLE"  # AWS's documented example access key id


@pytest.fixture
def repo(tmp_path, monkeypatch) -> Path:
    root = tmp_path / "repo"
    copy_sources(root)
    (root / "AGENTS.md").write_text("Run `make test` before you say something is done.\n")
    shutil.copytree(MEMORY / "django", root / "notes")
    shutil.copytree(MEMORY / "ctxtools", root / "notes" / "project")
    monkeypatch.chdir(root)
    return root


def run(script_runner, cmd, *args, ok=True):
    r = script_runner.run([cmd, *args])
    assert "Traceback" not in r.stderr
    if ok:
        assert r.returncode == 0, r.stderr
    return r


def pack(script_runner, *args, ok=True):
    return run(script_runner, "ctx-pack", *args, ok=ok)


def store_files(store: Path) -> list[str]:
    return sorted(str(p.relative_to(store)) for p in store.rglob("*")) if store.exists() else []


# --- ctx-pack --------------------------------------------------------------------------------


def test_memory_section_between_skills_and_map_best_first(script_runner, repo, tmp_path):
    skills = tmp_path / "skills" / "inventory"
    skills.mkdir(parents=True)
    (skills / "SKILL.md").write_text(
        "---\nname: inventory\ndescription: working on the inventory model and its manager\n"
        "---\nKeep the manager methods small.\n"
    )
    out = pack(
        script_runner,
        "-q",
        TASK,
        "--memory",
        "notes",
        "--skills",
        str(tmp_path / "skills"),
        "src/inventory.py",
        "--tokens",
        "6000",
    ).stdout
    heads = ["# Instructions", "# Skills", "# Memory", "# Repository map", "# Files", "# Task"]
    pos = [out.index("\n" + h + "\n") if k else out.index(h + "\n") for k, h in enumerate(heads)]
    assert pos == sorted(pos)
    memory = out[pos[2] : pos[3]]
    assert "## notes/managers.txt § " in memory
    assert "## notes/managers.txt § Adding extra manager methods (lines " in memory


def test_memory_chunks_are_the_ranking_best_first_and_labelled(script_runner, repo):
    d = json.loads(pack(script_runner, "-q", TASK, "--memory", "notes", "--json").stdout)
    mem = d["memory"]
    assert mem["method"] == "tfidf" and mem["threshold"]["floor"] == 0.15
    in_pack = [c for c in mem["chunks"] if c["in_pack"]]
    assert in_pack and [c["score"] for c in in_pack] == sorted(
        (c["score"] for c in in_pack), reverse=True
    )
    text = d["text"]
    at = [
        text.index(f"## {c['file']} § {c['heading']} (lines {c['start']}-{c['end']})")
        for c in in_pack
    ]
    assert at == sorted(at)
    (sec,) = [s for s in d["sections"] if s["name"] == "memory"]
    assert [p["label"] for p in sec["parts"]] == [
        f"{c['file']}:{c['start']}-{c['end']}" for c in in_pack
    ]
    assert sec["tokens"] == mem["tokens"] <= mem["budget"] == d["budget"]["tokens"] * 15 // 100


@pytest.mark.parametrize("tokens", ["600", "1200", "3000", "9000"])
def test_budget_never_exceeded_with_memory(script_runner, repo, tokens):
    d = json.loads(
        pack(
            script_runner,
            "-q",
            TASK,
            "--memory",
            "notes",
            "--memory-tokens",
            tokens,
            "src/",
            "--tokens",
            tokens,
            "--json",
        ).stdout
    )
    assert d["tokens"] == get_ruler().ruler.count(d["text"]) <= int(tokens)
    if d["memory"]["tokens"]:
        assert d["memory"]["tokens"] <= int(tokens)


def test_memory_tokens_caps_the_section_and_never_more_than_qualifies(script_runner, repo):
    small = json.loads(
        pack(
            script_runner, "-q", TASK, "--memory", "notes", "--memory-tokens", "300", "--json"
        ).stdout
    )["memory"]
    big = json.loads(
        pack(
            script_runner, "-q", TASK, "--memory", "notes", "--memory-tokens", "100000", "--json"
        ).stdout
    )["memory"]
    assert small["tokens"] <= 300 and big["tokens"] <= 100000
    qualified = [c for c in big["chunks"] if c["kept"]]
    assert big["kept"] == len(qualified) > small["kept"]
    assert any("over the memory budget of 300 tokens" in c["why"] for c in small["chunks"])
    assert all(not c["in_pack"] for c in big["chunks"] if not c["kept"])


def test_explain_shows_each_chunk_its_score_the_threshold_and_why(script_runner, repo):
    r = pack(script_runner, "-q", TASK, "--memory", "notes", "--explain")
    err = r.stderr
    import re

    m = re.search(
        r"memory \(tfidf\): threshold (0\.\d{3}) = max\(floor 0\.15, median (0\.\d{3}) \+ "
        r"margin 0\.15, 0\.90 x best (0\.\d{3})\); (\d+) of (\d+) chunks in",
        err,
    )
    assert m, err
    threshold = float(m.group(1))
    best = float(m.group(3))
    assert abs(threshold - max(0.15, float(m.group(2)) + 0.15, 0.9 * best)) < 0.002
    assert lines_best(err) == best
    lines = [x for x in err.splitlines() if x.startswith(("  + ", "  - "))]
    assert lines[0].startswith("  + ") and "notes/managers.txt:" in lines[0]
    assert lines[0].endswith("in: at or over the threshold")
    assert sum(x.startswith("  + ") for x in lines) == int(m.group(4))
    assert any(f"below the threshold {m.group(1)}" in x for x in lines)
    assert "more (--format json lists them all)" in err


def lines_best(err: str) -> float:
    """The score of the first chunk --explain lists (the best one)."""
    first = next(x for x in err.splitlines() if x.startswith(("  + ", "  - ")))
    return float(first.split()[1])


def test_xml_memory_chunks(script_runner, repo):
    out = pack(script_runner, "-q", TASK, "--memory", "notes", "--format", "xml").stdout
    import xml.etree.ElementTree as ET

    root = ET.fromstring(out)
    assert [c.tag for c in root][:2] == ["instructions", "memory"]
    chunks = root.find("memory").findall("chunk")
    assert chunks and chunks[0].get("file") == "notes/managers.txt"
    assert chunks[0].get("lines").count("-") == 1


def test_a_task_that_matches_no_memory_gets_no_section(script_runner, repo):
    d = json.loads(
        pack(
            script_runner,
            "-q",
            "bake sourdough bread at high altitude",
            "--memory",
            "notes",
            "--json",
        ).stdout
    )
    assert "memory" not in [s["name"] for s in d["sections"]]
    assert d["memory"]["kept"] == 0 and d["memory"]["chunks"]
    assert "# Memory" not in d["text"]


def test_secrets_in_memory_are_redacted(script_runner, repo):
    (repo / "notes" / "keys.md").write_text(
        "# Inventory manager credentials\n\nThe inventory model manager reads the bucket "
        f"with the key {AWS_EXAMPLE_KEY}; the custom manager method rotates it monthly.\n"
        + "More on the inventory manager method and the model. " * 5
        + "\n"
    )
    r = pack(script_runner, "-q", TASK, "--memory", "notes")
    assert AWS_EXAMPLE_KEY not in r.stdout
    assert "[secret redacted" in r.stdout
    assert "redacted" in r.stderr and "memory notes/keys.md:1-" in r.stderr


def test_without_memory_nothing_changes(script_runner, repo):
    d = json.loads(pack(script_runner, "-q", TASK, "src/inventory.py", "--json").stdout)
    assert d["memory"] is None
    assert "memory" not in [s["name"] for s in d["sections"]]


def test_same_inputs_same_bytes(script_runner, repo):
    args = ["-q", TASK, "--memory", "notes", "--memory", "notes/project", "src/inventory.py"]
    a = pack(script_runner, *args).stdout
    b = pack(script_runner, *args).stdout  # from the cache
    c = pack(
        script_runner,
        "-q",
        TASK,
        "--memory",
        "notes/project",
        "--memory",
        "notes",
        "src/inventory.py",
    ).stdout
    assert a == b == c
    cold = pack(script_runner, *args, "--json", "--store", "fresh-store").stdout
    warm = pack(script_runner, *args, "--json", "--store", "fresh-store").stdout
    assert cold == warm
    cold = excerpt(script_runner, "--memory", "notes", "-q", TASK, "--json", "--store", "s2")
    warm = excerpt(script_runner, "--memory", "notes", "-q", TASK, "--json", "--store", "s2")
    assert cold.stdout == warm.stdout


def test_binary_and_empty_memory_files(script_runner, repo):
    (repo / "notes" / "empty.md").write_bytes(b"")
    (repo / "notes" / "diagram.md").write_bytes(b"\x89PNG\r\n\x1a\n\0\0" + bytes(range(200)))
    r = pack(script_runner, "-q", TASK, "--memory", "notes")
    assert "ctx-pack: memory: skipped notes/diagram.md: binary file" in r.stderr
    assert "# Memory" in r.stdout


def test_bad_memory_input(script_runner, repo, store_dir):
    r = pack(script_runner, "-q", TASK, "--memory", "nowhere", "--memory", "notes", ok=False)
    assert r.returncode == 1
    assert r.stderr == (
        "ctx-pack: error: --memory: no such file or directory: nowhere (give Markdown or text"
        " files, or directories holding them)\n"
    )
    assert r.stdout == ""
    for args, msg in [
        (["--min-score", "0.3"], "--min-score goes with --memory PATH"),
        (["--memory-tokens", "50"], "--memory-tokens goes with --memory PATH"),
        (["--retrieval", "hashing"], "--retrieval goes with --memory PATH"),
        (["--memory", "notes", "--retrieval", "cmd"], "--retrieval cmd needs --embed-cmd CMD"),
        (
            ["--memory", "notes", "--embed-cmd", "x", "--retrieval", "tfidf"],
            "--embed-cmd and --retrieval tfidf contradict",
        ),
        (["--memory", "notes", "--embed-timeout", "3"], "--embed-timeout goes with --embed-cmd"),
        (["--memory", "notes", "--embed-cmd", "'x"], "--embed-cmd: No closing quotation"),
    ]:
        r = pack(script_runner, "-q", TASK, *args, ok=False)
        assert r.returncode == 2, args
        assert f"ctx-pack: error: {msg}" in r.stderr
    r = pack(script_runner, "-q", TASK, "--memory", "notes", "--min-score", "2", ok=False)
    assert r.returncode == 2 and "--min-score" in r.stderr
    for value in ("nan", "inf", "1e9"):
        r = pack(
            script_runner,
            "-q",
            TASK,
            "--memory",
            "notes",
            "--embed-cmd",
            "x",
            "--embed-timeout",
            value,
            ok=False,
        )
        assert r.returncode == 2
        assert r.stderr.startswith("ctx-pack: error: invalid value for '--embed-timeout': ")
        assert r.stderr.endswith(" (see ctx-pack --help)\n") and r.stderr.count("\n") == 1
    # nothing was ranked, nothing cached (a real process may have cached the ruler's ranks)
    assert [f for f in store_files(store_dir) if not f.startswith("tiktoken")] == []


def test_failing_embed_cmd_falls_back_with_a_warning(script_runner, repo, tmp_path):
    script = tmp_path / "embed.py"
    script.write_text("import sys\nsys.stdin.read()\nprint('[1, 2]')\nprint('[1]')\n")
    r = pack(
        script_runner,
        "-q",
        TASK,
        "--memory",
        "notes",
        "--embed-cmd",
        f"{sys.executable} {script}",
        "--json",
    )
    assert "ctx-pack: warning: --embed-cmd " in r.stderr
    assert "ranked with tfidf instead" in r.stderr
    d = json.loads(r.stdout)
    assert d["memory"]["method"] == "tfidf" and d["memory"]["requested"] == "cmd"
    assert "# Memory" in d["text"]


def test_a_task_with_no_usable_words_packs_without_memory(script_runner, repo):
    r = pack(script_runner, "-q", "the of and 42", "--memory", "notes", "src/inventory.py")
    assert "no memory section qualifies: the task has no usable words" in r.stderr
    assert "# Memory" not in r.stdout


# --- ctx-excerpt --memory --------------------------------------------------------------------


def excerpt(script_runner, *args, ok=True):
    return run(script_runner, "ctx-excerpt", *args, ok=ok)


def test_excerpt_memory_prints_what_a_pack_would_pick(script_runner, repo):
    out = excerpt(script_runner, "--memory", "notes", "-q", TASK).stdout
    d = json.loads(pack(script_runner, "-q", TASK, "--memory", "notes", "--json").stdout)
    kept = [c for c in d["memory"]["chunks"] if c["kept"]]
    headers = [x for x in out.splitlines() if x.startswith("==> ")]
    assert headers == [
        f"==> {c['file']}:{c['start']}-{c['end']} § {c['heading']} <== score {c['score']:.3f}"
        for c in kept
    ]
    first = kept[0]
    lines = (repo / first["file"]).read_text().split("\n")
    assert f"\n{first['start']}\t{lines[first['start'] - 1]}\n" in out


def test_excerpt_memory_json(script_runner, repo):
    d = json.loads(excerpt(script_runner, "--memory", "notes", "-q", TASK, "--json").stdout)
    assert d["method"] == "tfidf" and d["kept"] == len(d["results"]) > 0
    r0 = d["results"][0]
    assert set(r0) == {"file", "heading", "start", "end", "score", "kept", "why", "text"}
    lines = (repo / r0["file"]).read_text().split("\n")
    assert r0["text"] == "\n".join(lines[r0["start"] - 1 : r0["end"]])
    assert d["threshold"]["threshold"] >= 0.15


def test_excerpt_memory_nothing_qualifies_is_a_note(script_runner, repo):
    r = excerpt(script_runner, "--memory", "notes", "-q", "tune a guitar to drop D")
    assert r.stdout == ""
    assert "ctx-excerpt: note: no memory section qualifies (tfidf: threshold 0.150" in r.stderr


def test_excerpt_memory_bad_input(script_runner, repo, store_dir):
    for args, status, msg in [
        (["--memory", "notes", "-q", "the of 42"], 2, "no usable word in the query"),
        (["--memory", "notes"], 2, "--memory needs --query TEXT"),
        (
            ["--memory", "notes", "-q", "cache", "src/auth.py"],
            2,
            "FILE arguments and --memory do not go together",
        ),
        (
            ["--memory", "notes", "-q", "cache", "--tokens", "100"],
            2,
            "--tokens and --memory do not go together",
        ),
        (["--memory", "gone.md", "-q", "cache"], 1, "--memory: no such file or directory"),
        (
            ["-q", "cache", "--min-score", "0.2", "src/auth.py"],
            2,
            "--min-score goes with --memory PATH",
        ),
    ]:
        r = excerpt(script_runner, *args, ok=False)
        assert r.returncode == status, (args, r.stderr)
        assert f"ctx-excerpt: error: {msg}" in r.stderr
        assert r.stdout == ""
    assert [p for p in store_files(store_dir) if p.startswith("memory")] == []


def test_excerpt_without_memory_unchanged(script_runner, repo):
    out = excerpt(script_runner, "-q", "reserve stock", "src/inventory.py").stdout
    assert out.startswith("==> src/inventory.py <==")
