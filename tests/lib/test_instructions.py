"""ctxtools.instructions: which instruction files a pack gets, gated by path and capped."""

from __future__ import annotations

import hashlib
import os
import random
import re
import socket
from pathlib import Path

import pytest

from ctxtools import instructions as ins
from ctxtools.errors import ExitStatus, InputError, NotFoundError, UsageError
from ctxtools.instructions import (
    FrontMatterError,
    InstructionFile,
    discovery,
    expand_braces,
    glob_patterns,
    load_instructions,
    parse_front_matter,
    reading,
)

AGENTS = """\
# Project rules

Run `make test` before every commit.

## Go <!-- paths: pkg/**/*.go, cmd/** -->

Format with gofmt; errors wrap with %w.

### Go tests

Table-driven tests only.

## Web <!-- paths: web/**/*.tsx -->

Components are function components.

```sh
# a comment in a fence is not a heading
npm run lint
```

Still the web section.

## Commits

Imperative mood, 72 columns.
"""


def write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, str):
        data = data.encode("utf-8")
    path.write_bytes(data)
    return path


def tree_digest(root: Path) -> dict[str, str]:
    out = {}
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            p = Path(dirpath) / name
            if p.is_symlink() or not p.is_file():
                out[str(p.relative_to(root))] = "special"
                continue
            out[str(p.relative_to(root))] = hashlib.sha256(p.read_bytes()).hexdigest()
    return out


def paths(result) -> list[str]:
    return [f.path for f in result.files]


def text_of(result, path: str) -> str:
    return next(f.text for f in result.files if f.path == path)


# --------------------------------------------------------------------------- which files


def full_tree(root: Path) -> None:
    write(root, "README.md", "# readme\n")
    write(root, ".ctx/PROJECT.md", "project notes\n")
    write(root, ".ctx/AGENTS.md", "ctx agents layer\n")
    write(root, ".cursor/rules/b/nested.mdc", "nested rule\n")
    write(root, ".cursor/rules/a.mdc", "rule a\n")
    write(root, ".cursor/rules/.hidden.mdc", "hidden rule\n")
    write(root, ".cursorrules", "legacy cursor rules\n")
    write(root, "AGENT.md", "agent singular\n")
    write(root, "CLAUDE.md", "claude notes\n")
    write(root, "AGENTS.md", "agents root\n")
    write(root, "agents.md.bak", "not a candidate\n")


def test_priority_order_readme_only_when_asked(tmp_path):
    full_tree(tmp_path)
    result = load_instructions(tmp_path, None)
    assert paths(result) == [
        "AGENTS.md",
        "CLAUDE.md",
        "AGENT.md",
        ".cursorrules",
        ".cursor/rules/a.mdc",
        ".cursor/rules/b/nested.mdc",
        ".ctx/AGENTS.md",
        ".ctx/PROJECT.md",
    ]
    assert result.dropped == [] and result.notes == []
    assert text_of(result, ".ctx/AGENTS.md") == "ctx agents layer\n"
    f = result.files[0]
    assert f == InstructionFile("AGENTS.md", "agents root\n", 12, False)
    with_readme = load_instructions(tmp_path, None, include_readme=True)
    assert paths(with_readme)[-1] == "README.md"
    assert paths(with_readme)[:-1] == paths(result)


def test_no_instruction_files_gives_an_empty_result(tmp_path):
    write(tmp_path, "src/main.py", "print(1)\n")
    result = load_instructions(tmp_path, ["src/main.py"])
    assert (result.files, result.dropped, result.notes) == ([], [], [])
    assert result.total == 0


def test_blank_and_front_matter_only_files_are_left_out(tmp_path):
    write(tmp_path, "AGENTS.md", "\n  \n")
    write(tmp_path, "CLAUDE.md", "---\ndescription: nothing else\n---\n")
    write(tmp_path, "AGENT.md", "kept\n")
    assert paths(load_instructions(tmp_path, None)) == ["AGENT.md"]


def test_ctx_agents_layers_under_the_root_agents(tmp_path):
    write(tmp_path, ".ctx/AGENTS.md", "layer\n")
    write(tmp_path, "AGENTS.md", "root\n")
    result = load_instructions(tmp_path, [])
    assert paths(result) == ["AGENTS.md", ".ctx/AGENTS.md"]


# --------------------------------------------------------------------------- gating


def test_sections_gated_by_the_pack_files(tmp_path):
    write(tmp_path, "AGENTS.md", AGENTS)
    result = load_instructions(tmp_path, ["web/app/page.tsx", "README.md"])
    text = text_of(result, "AGENTS.md")
    assert "## Web\n" in text  # the gate comment is gone from the heading
    assert "<!--" not in text
    assert "# a comment in a fence is not a heading" in text
    assert "Still the web section." in text
    assert "gofmt" not in text and "Table-driven" not in text
    assert "## Commits\n\nImperative mood" in text
    assert result.dropped == [
        {
            "path": "AGENTS.md",
            "section": "Go",
            "reason": "paths: pkg/**/*.go, cmd/** match no pack file",
        }
    ]
    assert result.notes == []


def test_go_pack_keeps_the_go_section_and_its_subsection(tmp_path):
    write(tmp_path, "AGENTS.md", AGENTS)
    result = load_instructions(tmp_path, ["pkg/auth/jwt/verify.go"])
    text = text_of(result, "AGENTS.md")
    assert "## Go\n\nFormat with gofmt" in text
    assert "### Go tests\n\nTable-driven tests only.\n" in text
    assert "Components are" not in text and "npm run lint" not in text
    assert "Imperative mood" in text
    assert [d["section"] for d in result.dropped] == ["Web"]
    # cmd/** matches anything under cmd
    assert "gofmt" in text_of(load_instructions(tmp_path, ["cmd/tool/main.rs"]), "AGENTS.md")


@pytest.mark.parametrize("pack_files", [None, [], [""]])
def test_no_pack_files_disables_gating(tmp_path, pack_files):
    write(tmp_path, "AGENTS.md", AGENTS)
    write(tmp_path, "CLAUDE.md", "---\npaths: docs/**\n---\nclaude\n")
    result = load_instructions(tmp_path, pack_files)
    text = text_of(result, "AGENTS.md")
    for needle in ("gofmt", "Table-driven", "function components", "Imperative"):
        assert needle in text
    assert "<!--" not in text
    assert text_of(result, "CLAUDE.md") == "claude\n"
    assert result.dropped == []


def test_nested_gates_and_only_the_outer_dropped_part_is_listed(tmp_path):
    write(
        tmp_path,
        "AGENTS.md",
        "# Top\n"
        "## Backend <!-- paths: api/** -->\n"
        "backend\n"
        "### Database <!-- paths: api/db/** -->\n"
        "db\n"
        "#### Deep\n"
        "deep\n"
        "### Handlers\n"
        "handlers\n"
        "## Frontend\n"
        "front\n",
    )
    only_api = load_instructions(tmp_path, ["api/http/routes.py"])
    text = text_of(only_api, "AGENTS.md")
    assert text == "# Top\n## Backend\nbackend\n### Handlers\nhandlers\n## Frontend\nfront\n"
    assert only_api.dropped == [
        {
            "path": "AGENTS.md",
            "section": "Database",
            "reason": "paths: api/db/** match no pack file",
        }
    ]
    neither = load_instructions(tmp_path, ["web/x.ts"])
    assert text_of(neither, "AGENTS.md") == "# Top\n## Frontend\nfront\n"
    assert [d["section"] for d in neither.dropped] == ["Backend"]


def test_front_matter_paths_gate_the_whole_file(tmp_path):
    write(tmp_path, "AGENTS.md", "---\npaths: pkg/**/*.go, cmd/**\n---\ngo only\n")
    write(
        tmp_path, "CLAUDE.md", "---\ntitle: x\npaths:\n  - docs/**\n  - '*.rst'\n---\ndocs only\n"
    )
    write(tmp_path, "AGENT.md", '---\npaths: ["web/**", "app/{a,b}/*.ts"]\n---\nweb only\n')
    go = load_instructions(tmp_path, ["pkg/a/b/c.go"])
    assert paths(go) == ["AGENTS.md"]
    assert text_of(go, "AGENTS.md") == "go only\n"
    assert go.dropped == [
        {
            "path": "CLAUDE.md",
            "section": None,
            "reason": "paths: docs/**, *.rst match no pack file",
        },
        {
            "path": "AGENT.md",
            "section": None,
            "reason": "paths: web/**, app/a/*.ts, app/b/*.ts match no pack file",
        },
    ]
    rst = load_instructions(tmp_path, ["guide/intro.rst"])  # no slash: any depth
    assert paths(rst) == ["CLAUDE.md"]
    assert paths(load_instructions(tmp_path, ["app/b/x.ts"])) == ["AGENT.md"]
    assert paths(load_instructions(tmp_path, ["app/c/x.ts"])) == []


def test_pack_file_spellings_are_normalised(tmp_path):
    write(tmp_path, "AGENTS.md", "---\npaths: web/**\n---\nweb\n")
    assert paths(load_instructions(tmp_path, ["./web/a.tsx"])) == ["AGENTS.md"]
    assert paths(load_instructions(tmp_path, [str(tmp_path / "web" / "a.tsx")])) == ["AGENTS.md"]
    assert paths(load_instructions(tmp_path, ["../web/a.tsx"])) == []


def test_cursor_rules_globs_and_always_apply(tmp_path):
    rules = ".cursor/rules/"
    write(tmp_path, rules + "ts.mdc", '---\ndescription: TS\nglobs: "**/*.{ts,tsx}"\n---\nts\n')
    write(
        tmp_path,
        rules + "py.mdc",
        "---\nglobs: src/**/*.py, tests/**\nalwaysApply: false\n---\npy\n",
    )
    write(tmp_path, rules + "core.mdc", "---\nglobs: nothing/**\nalwaysApply: true\n---\ncore\n")
    write(
        tmp_path,
        rules + "empty.mdc",
        "---\ndescription: asked for\nglobs:\nalwaysApply: false\n---\nx\n",
    )
    write(tmp_path, rules + "list.mdc", "---\nglobs:\n  - docs/**\n---\ndocs\n")
    ts = load_instructions(tmp_path, ["web/src/app.tsx"])
    assert paths(ts) == [rules + "core.mdc", rules + "empty.mdc", rules + "ts.mdc"]
    assert text_of(ts, rules + "ts.mdc") == "ts\n"
    assert {d["path"]: d["reason"] for d in ts.dropped} == {
        rules + "list.mdc": "globs: docs/** match no pack file",
        rules + "py.mdc": "globs: src/**/*.py, tests/** match no pack file",
    }
    py = load_instructions(tmp_path, ["tests/unit/test_x.py"])
    assert rules + "py.mdc" in paths(py) and rules + "ts.mdc" not in paths(py)
    assert ts.notes == []


def test_other_front_matter_keys_are_passed_over(tmp_path):
    front = "---\nmetadata:\n  owner: web\n  tags:\n    - a: 1\n      b: 2\npaths: web/**\n---\n"
    write(tmp_path, "AGENTS.md", front + "web rules\n")
    result = load_instructions(tmp_path, ["api/x.py"])
    assert result.files == [] and result.notes == []
    assert result.dropped[0]["reason"] == "paths: web/** match no pack file"
    assert parse_front_matter(["a:\n", "  - x: 1\n", "    y: 2\n"], ["b"]) == {}


def test_paths_and_globs_together_add_up(tmp_path):
    write(tmp_path, "AGENTS.md", "---\npaths: a/**\nglobs: b/**\n---\nboth\n")
    assert paths(load_instructions(tmp_path, ["b/x"])) == ["AGENTS.md"]
    result = load_instructions(tmp_path, ["c/x"])
    assert result.dropped[0]["reason"] == "paths+globs: a/**, b/** match no pack file"


def test_negated_pattern(tmp_path):
    write(tmp_path, "AGENTS.md", "---\npaths: pkg/**, !pkg/vendor/**\n---\nx\n")
    assert paths(load_instructions(tmp_path, ["pkg/a.go"])) == ["AGENTS.md"]
    assert paths(load_instructions(tmp_path, ["pkg/vendor/a.go"])) == []


def test_gated_out_sections_take_no_room(tmp_path):
    gated = "## Huge <!-- paths: never/** -->\n" + "gated line\n" * 600  # 6,600 bytes
    write(tmp_path, "AGENTS.md", "# Keep\n" + "kept line\n" * 300 + gated + "## Tail\ntail\n")
    result = load_instructions(tmp_path, ["src/a.py"])
    f = result.files[0]
    assert not f.truncated
    assert f.text == "# Keep\n" + "kept line\n" * 300 + "## Tail\ntail\n"


def test_crlf_and_bom(tmp_path):
    data = "\ufeff---\r\npaths: web/**\r\n---\r\n# Title\r\n## Web <!-- paths: web/** -->\r\nw\r\n"
    write(tmp_path, "AGENTS.md", data)
    result = load_instructions(tmp_path, ["web/a"])
    assert text_of(result, "AGENTS.md") == "# Title\r\n## Web\r\nw\r\n"
    write(tmp_path, "AGENTS.md", "\ufeffplain start\n")
    assert text_of(load_instructions(tmp_path, None), "AGENTS.md") == "plain start\n"


def test_cjk_text_is_kept_whole(tmp_path):
    cjk = "# 说明\n\n## 前端 <!-- paths: web/** -->\n使用函数组件。\n## 提交\n用祈使语气写提交。\n"
    write(tmp_path, "AGENTS.md", cjk)
    result = load_instructions(tmp_path, ["server/main.go"])
    assert text_of(result, "AGENTS.md") == "# 说明\n\n## 提交\n用祈使语气写提交。\n"
    assert result.dropped[0]["section"] == "前端"


def test_invalid_utf8_is_replaced(tmp_path):
    write(tmp_path, "AGENTS.md", b"caf\xe9 and \xff\xfe bytes\n")
    result = load_instructions(tmp_path, None)
    assert text_of(result, "AGENTS.md") == "caf\ufffd and \ufffd\ufffd bytes\n"
    assert result.files[0].size == 18


# --------------------------------------------------------------------------- malformed


@pytest.mark.parametrize(
    ("front", "why"),
    [
        ("paths: [unclosed\n", "paths: unclosed '['"),
        ("paths: '**/*.go\n", "paths: unclosed '"),
        ("paths:\n", "paths: is empty"),
        ("paths: web/**\npaths: api/**\n", "key 'paths' is given twice"),
        ("just some words\n", "line 2 is not 'key: value': just some words"),
        ("paths: '[z-a]'\n", "paths: bad pattern"),
        ("paths: a/**\n  - b/**\n", "paths: a value and list items at once"),
        ("paths: {a,{b,c}}{d,e,f,g,h,i,j,k}{1,2,3,4,5,6,7,8}{1,2,3,4,5}\n", "expand to over 256"),
    ],
)
def test_malformed_front_matter_is_noted_and_ungated(tmp_path, front, why):
    write(tmp_path, "AGENTS.md", f"---\n{front}---\nbody text\n")
    before = tree_digest(tmp_path)
    result = load_instructions(tmp_path, ["src/other.py"])
    assert text_of(result, "AGENTS.md") == "body text\n"  # stripped, and not gated out
    assert len(result.notes) == 1
    assert result.notes[0].startswith("AGENTS.md: malformed front matter (")
    assert why in result.notes[0]
    assert result.notes[0].endswith("; read as ungated")
    assert result.dropped == []
    assert tree_digest(tmp_path) == before


def test_unterminated_front_matter_is_read_as_text(tmp_path):
    data = "---\npaths: web/**\n\n# Title\nno closing delimiter\n"
    write(tmp_path, "AGENTS.md", data)
    result = load_instructions(tmp_path, ["api/x.py"])
    assert text_of(result, "AGENTS.md") == data
    assert result.notes == [
        "AGENTS.md: malformed front matter (no closing '---' within 200 lines); "
        "read as ungated text"
    ]


def test_front_matter_too_long_counts_as_unterminated(tmp_path):
    data = "---\n" + "k: v\n" * 300 + "---\nbody\n"
    write(tmp_path, "AGENTS.md", data)
    result = load_instructions(tmp_path, None)
    assert "no closing '---' within 200 lines" in result.notes[0]
    assert text_of(result, "AGENTS.md").startswith("---\nk: v\n")


@pytest.mark.parametrize(
    ("heading", "why"),
    [
        ("## Web <!-- paths: web/** \n", "(no closing '-->')"),
        ("## Web <!-- paths: -->\n", "(paths: is empty)"),
        ("## Web <!-- paths: [z-a] -->\n", "(paths: bad pattern"),
    ],
)
def test_malformed_heading_gate_leaves_the_section_in(tmp_path, heading, why):
    write(tmp_path, "AGENTS.md", "# Top\n" + heading + "web stuff\n## Next\nnext\n")
    result = load_instructions(tmp_path, ["api/x.py"])
    assert "web stuff" in text_of(result, "AGENTS.md")
    assert result.notes[0].startswith("AGENTS.md: malformed gate on heading 'Web")
    assert why in result.notes[0]
    assert result.notes[0].endswith("section ungated")
    assert result.dropped == []


# --------------------------------------------------------------------------- once only


def test_symlinked_and_hard_linked_and_copied_files_appear_once(tmp_path):
    write(tmp_path, "AGENTS.md", "the one\n")
    (tmp_path / "CLAUDE.md").symlink_to("AGENTS.md")
    os.link(tmp_path / "AGENTS.md", tmp_path / "AGENT.md")
    write(tmp_path, ".cursor/rules/link.mdc", b"")
    (tmp_path / ".cursor/rules/link.mdc").unlink()
    (tmp_path / ".cursor/rules/link.mdc").symlink_to("../../AGENTS.md")
    write(tmp_path, ".ctx/AGENTS.md", "the one\n")  # same bytes, its own file
    result = load_instructions(tmp_path, None)
    assert paths(result) == ["AGENTS.md"]
    assert result.dropped == [
        {"path": "CLAUDE.md", "section": None, "reason": "same file as AGENTS.md"},
        {"path": "AGENT.md", "section": None, "reason": "same file as AGENTS.md"},
        {"path": ".cursor/rules/link.mdc", "section": None, "reason": "same file as AGENTS.md"},
        {"path": ".ctx/AGENTS.md", "section": None, "reason": "same content as AGENTS.md"},
    ]
    assert result.notes == []


def test_a_capped_copy_is_found_too(tmp_path):
    write(tmp_path, "AGENTS.md", lines_of(25_000))
    write(tmp_path, "CLAUDE.md", lines_of(25_000))
    write(tmp_path, "AGENT.md", lines_of(25_000).replace("x", "y"))  # same size, other bytes
    result = load_instructions(tmp_path, None)
    assert paths(result) == ["AGENTS.md", "AGENT.md"]
    assert result.dropped[1] == {
        "path": "CLAUDE.md",
        "section": None,
        "reason": "same content as AGENTS.md",
    }


def test_a_copy_does_not_repeat_its_gating_entries(tmp_path):
    write(tmp_path, "AGENTS.md", AGENTS)
    write(tmp_path, "CLAUDE.md", AGENTS)
    result = load_instructions(tmp_path, ["web/a.tsx"])
    assert paths(result) == ["AGENTS.md"]
    assert [(d["path"], d["section"]) for d in result.dropped] == [
        ("AGENTS.md", "Go"),
        ("CLAUDE.md", None),
    ]


# --------------------------------------------------------------------------- never outside


def test_symlink_out_of_root_is_skipped(tmp_path):
    root = tmp_path / "repo"
    outside = tmp_path / "secret"
    write(outside, "notes.md", "SECRET outside text\n")
    write(outside, "rules/x.mdc", "SECRET rule\n")
    write(root, "AGENT.md", "inside\n")
    root.joinpath("AGENTS.md").symlink_to(outside / "notes.md")
    root.joinpath(".ctx").symlink_to(outside)  # a folder on the way
    (root / ".cursor").mkdir()
    root.joinpath(".cursor/rules").symlink_to(outside / "rules")
    write(outside, "AGENTS.md", "SECRET via .ctx\n")
    result = load_instructions(root, None)
    assert paths(result) == ["AGENT.md"]
    assert "SECRET" not in "".join(f.text for f in result.files)
    assert result.notes == [
        "AGENTS.md: a symlink to outside the root; skipped",
        ".cursor/rules: a symlink to outside the root; skipped",
        ".ctx/AGENTS.md: a symlink to outside the root; skipped",
    ]


def test_rule_file_linking_out_of_root_is_skipped(tmp_path):
    root = tmp_path / "repo"
    write(tmp_path, "elsewhere.md", "SECRET\n")
    write(root, ".cursor/rules/ok.mdc", "ok\n")
    root.joinpath(".cursor/rules/out.mdc").symlink_to(tmp_path / "elsewhere.md")
    result = load_instructions(root, None)
    assert paths(result) == [".cursor/rules/ok.mdc"]
    assert result.notes == [".cursor/rules/out.mdc: a symlink to outside the root; skipped"]


def test_symlink_loop_broken_link_fifo_directory_socket(tmp_path):
    (tmp_path / "AGENTS.md").symlink_to("AGENTS.md")  # a loop
    (tmp_path / "CLAUDE.md").symlink_to("missing.md")
    os.mkfifo(tmp_path / "AGENT.md")  # opening it would block
    (tmp_path / ".cursorrules").mkdir()
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / ".ctx-sock"))
        (tmp_path / ".ctx").mkdir()
        os.rename(tmp_path / ".ctx-sock", tmp_path / ".ctx/AGENTS.md")
        write(tmp_path, ".ctx/PROJECT.md", "still read\n")
        result = load_instructions(tmp_path, None)
    finally:
        sock.close()
    assert paths(result) == [".ctx/PROJECT.md"]
    assert result.notes[0].startswith("AGENTS.md: cannot be read (")
    assert "symbolic links" in result.notes[0]
    assert result.notes[1:] == [
        "CLAUDE.md: a broken symlink; skipped",
        "AGENT.md: not a regular file; skipped",
        ".cursorrules: not a regular file; skipped",
        ".ctx/AGENTS.md: not a regular file; skipped",
    ]


def test_binary_file_is_skipped_with_a_note(tmp_path):
    write(tmp_path, "AGENTS.md", b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + b"\x00" * 64)
    write(tmp_path, "CLAUDE.md", "text\n")
    result = load_instructions(tmp_path, None)
    assert paths(result) == ["CLAUDE.md"]
    assert result.notes == ["AGENTS.md: binary file; skipped"]


def test_unreadable_file_is_skipped_with_a_note(tmp_path, monkeypatch):
    write(tmp_path, "AGENTS.md", "locked\n")
    write(tmp_path, "CLAUDE.md", "open\n")
    real_open = open

    def fake_open(path, *args, **kw):
        if str(path).endswith("AGENTS.md"):
            raise PermissionError(13, "Permission denied", str(path))
        return real_open(path, *args, **kw)

    monkeypatch.setattr(reading, "open", fake_open, raising=False)
    result = load_instructions(tmp_path, None)
    assert paths(result) == ["CLAUDE.md"]
    assert result.notes == ["AGENTS.md: cannot be read (Permission denied); skipped"]


def test_unreadable_rules_folder(tmp_path, monkeypatch):
    write(tmp_path, ".cursor/rules/a.mdc", "a\n")
    write(tmp_path, ".cursor/rules/sub/b.mdc", "b\n")
    real_walk = os.walk

    def walk(top, onerror=None, **kw):
        for dirpath, dirs, files in real_walk(top, **kw):
            if dirpath.endswith("sub"):
                onerror(PermissionError(13, "Permission denied", dirpath))
                continue
            yield dirpath, dirs, files

    monkeypatch.setattr(discovery.os, "walk", walk)
    result = load_instructions(tmp_path, None)
    assert paths(result) == [".cursor/rules/a.mdc"]
    assert result.notes == [".cursor/rules: 1 folder(s) cannot be read; skipped"]


def test_too_many_rule_files(tmp_path, monkeypatch):
    monkeypatch.setattr(discovery, "RULES_LIMIT", 3)
    for i in range(5):
        write(tmp_path, f".cursor/rules/r{i}.mdc", f"r{i}\n")
    result = load_instructions(tmp_path, None)
    assert paths(result) == [f".cursor/rules/r{i}.mdc" for i in range(3)]
    assert result.notes == [".cursor/rules: over 3 rule files; only the first 3 by path are read"]


def test_rules_path_that_is_a_file(tmp_path):
    write(tmp_path, ".cursor/rules", "not a folder\n")
    result = load_instructions(tmp_path, None)
    assert result.files == []
    assert result.notes == [".cursor/rules: not a directory; skipped"]


# --------------------------------------------------------------------------- caps

MARKER_RE = re.compile(r"\[… ([\d,]+) bytes of (\S+) left out: (.+)\]\n\Z")


def split_marker(text: str) -> tuple[str, int, str, str]:
    m = MARKER_RE.search(text)
    assert m, text[-200:]
    return text[: m.start()], int(m.group(1).replace(",", "")), m.group(2), m.group(3)


def lines_of(n: int, width: int = 40) -> str:
    return "".join(f"{i:05d} " + "x" * (width - 7) + "\n" for i in range(n))


def test_one_megabyte_agents_md_is_capped_at_a_line_boundary(tmp_path):
    body = lines_of(25_000)  # 1,000,000 bytes
    # a malformed gate at the end: a note would show that the tail was read
    data = body + "## Tail <!-- paths: [z-a] -->\nend\n"
    write(tmp_path, "AGENTS.md", data)
    result = load_instructions(tmp_path, ["src/x.py"])
    f = result.files[0]
    assert f.truncated and f.size == len(data)
    encoded = f.text.encode("utf-8")
    assert len(encoded) <= ins.MAX_FILE
    kept, left, path, reason = split_marker(f.text)
    assert (path, reason) == ("AGENTS.md", "cap of 4,000 bytes a file")
    assert data.startswith(kept) and kept.endswith("\n")
    assert left == len(data) - len(kept.encode("utf-8"))
    assert len(kept) == 40 * (len(kept) // 40) and len(kept) > 3_800  # whole lines, nearly full
    assert result.notes == [
        "instructions over their caps (4,000 bytes a file, 12,000 in all): AGENTS.md cut or "
        "left out"
    ]
    assert result.dropped == [
        {"path": "AGENTS.md", "section": None, "reason": "cap of 4,000 bytes a file"}
    ]


def test_capped_file_is_read_only_as_far_as_needed(tmp_path, monkeypatch):
    data = lines_of(25_000)
    write(tmp_path, "AGENTS.md", data)
    reads: list[int] = []
    real_open = open

    class Counting:
        def __init__(self, fh):
            self.fh = fh

        def read(self, n=-1):
            out = self.fh.read(n)
            reads.append(len(out))
            return out

        def readline(self, n=-1):
            out = self.fh.readline(n)
            reads.append(len(out))
            return out

        def seek(self, *a):
            reads.clear()  # the binary probe is read again from the start
            return self.fh.seek(*a)

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

    monkeypatch.setattr(reading, "open", lambda p, m: Counting(real_open(p, m)), raising=False)
    result = load_instructions(tmp_path, None)
    assert result.files[0].truncated
    assert sum(reads) <= ins.MAX_FILE + 4096 + 1  # the budget and the one line that overflowed


def test_total_cap_cuts_the_last_file_and_stops(tmp_path):
    write(tmp_path, "AGENTS.md", lines_of(85))  # 3,400 bytes each
    write(tmp_path, "CLAUDE.md", lines_of(85).replace("x", "c"))
    write(tmp_path, "AGENT.md", lines_of(85).replace("x", "a"))
    write(tmp_path, ".cursorrules", lines_of(85).replace("x", "r"))
    write(tmp_path, ".ctx/AGENTS.md", "never reached\n")
    write(tmp_path, ".ctx/PROJECT.md", b"\x00binary, but never read\n")
    result = load_instructions(tmp_path, None)
    sizes = [len(f.text.encode()) for f in result.files]
    assert paths(result) == ["AGENTS.md", "CLAUDE.md", "AGENT.md", ".cursorrules"]
    assert sizes[:3] == [3_400, 3_400, 3_400]
    assert [f.truncated for f in result.files] == [False, False, False, True]
    assert result.total == sum(sizes) <= ins.MAX_TOTAL
    assert ins.MAX_TOTAL - result.total < 40 + 80  # one line and the marker's slack
    kept, left, _, reason = split_marker(result.files[3].text)
    assert reason == "cap of 12,000 bytes in all"
    assert left == 3_400 - len(kept)
    assert result.dropped == [
        {"path": ".cursorrules", "section": None, "reason": "cap of 12,000 bytes in all"},
        {"path": ".ctx/AGENTS.md", "section": None, "reason": "cap of 12,000 bytes in all"},
        {"path": ".ctx/PROJECT.md", "section": None, "reason": "cap of 12,000 bytes in all"},
    ]
    assert result.notes == [
        "instructions over their caps (4,000 bytes a file, 12,000 in all): .cursorrules, "
        ".ctx/AGENTS.md, .ctx/PROJECT.md cut or left out"
    ]


def test_total_reached_exactly_stops_further_files(tmp_path):
    write(tmp_path, "AGENTS.md", lines_of(100))  # 4,000 bytes: exactly a file's cap
    write(tmp_path, "CLAUDE.md", lines_of(100))
    write(tmp_path, "AGENT.md", lines_of(100).replace("x", "y"))
    write(tmp_path, ".cursorrules", "late\n")
    write(tmp_path, "CLAUDE.md", lines_of(100).replace("x", "z"))
    result = load_instructions(tmp_path, None)
    assert [len(f.text) for f in result.files] == [4_000, 4_000, 4_000]
    assert not any(f.truncated for f in result.files)
    assert result.dropped == [
        {"path": ".cursorrules", "section": None, "reason": "cap of 12,000 bytes in all"}
    ]


def test_share_too_small_for_the_marker_drops_the_file(tmp_path):
    write(tmp_path, "AGENTS.md", lines_of(6, 20))  # 120 bytes
    write(tmp_path, "CLAUDE.md", "a line that will not fit\n")
    write(tmp_path, "AGENT.md", "nor this\n")
    result = load_instructions(tmp_path, None, max_total=130, max_file=200)
    assert paths(result) == ["AGENTS.md"]
    assert result.dropped == [
        {"path": "CLAUDE.md", "section": None, "reason": "cap of 130 bytes in all"},
        {"path": "AGENT.md", "section": None, "reason": "cap of 130 bytes in all"},
    ]


def test_small_caps_hold_for_every_file(tmp_path):
    write(tmp_path, "AGENTS.md", lines_of(10))
    write(tmp_path, "CLAUDE.md", lines_of(10).replace("x", "c"))
    write(tmp_path, "AGENT.md", "short\n")
    result = load_instructions(tmp_path, None, max_total=350, max_file=150)
    for f in result.files:
        assert len(f.text.encode()) <= 150
    assert result.total <= 350
    assert paths(result)[:2] == ["AGENTS.md", "CLAUDE.md"]


def test_single_long_cjk_line_is_cut_at_a_character_boundary(tmp_path):
    line = "长" * 3_000 + "\n"  # 9,001 bytes, one line
    write(tmp_path, "AGENTS.md", line + "next line\n")
    result = load_instructions(tmp_path, None)
    f = result.files[0]
    raw = f.text.encode("utf-8")
    assert len(raw) <= 4_000 and f.truncated
    kept, left, _, _ = split_marker(f.text)
    assert set(kept[:-1]) == {"长"} and kept.endswith("\n")
    assert len(kept[:-1]) > 1_280  # nearly the whole cap
    assert left == len(line.encode()) + 10 - len(kept[:-1]) * 3


def test_long_line_after_short_ones_is_not_cut_mid_line(tmp_path):
    write(tmp_path, "AGENTS.md", "short one\nshort two\n" + "y" * 10_000 + "\n")
    f = load_instructions(tmp_path, None).files[0]
    kept, left, _, _ = split_marker(f.text)
    assert kept == "short one\nshort two\n"
    assert left == 10_001


def test_single_line_with_invalid_utf8_is_cut_within_the_cap(tmp_path):
    # Each bad byte shows as a 3-byte U+FFFD; a quarter of them is still text (all of them
    # would make the file binary: binary.is_binary).
    write(tmp_path, "AGENTS.md", b"\xffabc" * 1_250)
    f = load_instructions(tmp_path, None).files[0]
    assert len(f.text.encode()) <= 4_000
    kept, left, _, _ = split_marker(f.text)
    assert set(kept[:-1]) == {"\ufffd", "a", "b", "c"}
    assert left == 5_000 - len(kept[:-1])
    write(tmp_path, "AGENTS.md", b"\xff" * 5_000)
    assert load_instructions(tmp_path, None).notes == ["AGENTS.md: binary file; skipped"]


def test_last_line_without_newline_over_the_cap(tmp_path):
    write(tmp_path, "AGENTS.md", "first\n" + "z" * 100)
    result = load_instructions(tmp_path, None, max_file=80)
    kept, left, _, _ = split_marker(result.files[0].text)
    assert kept == "first\n" and left == 100
    write(tmp_path, "AGENTS.md", "first\n" + "z" * 50)  # fits whole: no marker
    assert load_instructions(tmp_path, None, max_file=80).files[0].text == "first\n" + "z" * 50


def test_read_limit_when_gated_out_text_goes_on(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "SCAN_LIMIT", 5_000)
    data = "# Keep\nkept\n## Gated <!-- paths: never/** -->\n" + lines_of(500) + "## After\nlate\n"
    write(tmp_path, "AGENTS.md", data)
    result = load_instructions(tmp_path, ["src/a.py"])
    f = result.files[0]
    kept, left, _, reason = split_marker(f.text)
    assert kept == "# Keep\nkept\n"
    assert reason == "read limit of 5,000 bytes"
    assert f.truncated
    assert "late" not in f.text
    assert 0 < left < len(data)


def test_caps_count_in_bytes_not_characters(tmp_path):
    write(tmp_path, "AGENTS.md", "中文\n" * 1_000)  # 7,000 bytes, 3,000 characters
    f = load_instructions(tmp_path, None).files[0]
    assert f.truncated and len(f.text.encode()) <= 4_000
    kept, left, _, _ = split_marker(f.text)
    assert kept == "中文\n" * (len(kept) // 3)
    assert len(kept.encode()) == 7 * (len(kept) // 3) > 3_900
    assert left == 7_000 - len(kept.encode())


# --------------------------------------------------------------------------- determinism


def build(root: Path, order: list[int]) -> None:
    items = [
        ("AGENTS.md", AGENTS),
        ("CLAUDE.md", "---\npaths: web/**\n---\nclaude web\n"),
        (".cursorrules", "legacy\n"),
        (".cursor/rules/zeta.mdc", "---\nglobs: **/*.go\n---\nzeta\n"),
        (".cursor/rules/alpha.mdc", "alpha\n"),
        (".cursor/rules/mid/beta.mdc", "beta\n"),
        (".cursor/rules/Upper.mdc", "upper\n"),
        (".ctx/PROJECT.md", lines_of(200)),
        (".ctx/AGENTS.md", "---\npaths: [broken\n---\nbroken gate\n"),
    ]
    for i in order:
        write(root, *items[i])


def render(result) -> bytes:
    parts = []
    for f in result.files:
        parts.append(f"{f.path}|{f.size}|{f.truncated}\n{f.text}")
    parts.append(repr(result.dropped))
    parts.append(repr(result.notes))
    return "\n".join(parts).encode()


def test_same_bytes_whatever_the_creation_order(tmp_path):
    rng = random.Random(7)
    outputs = set()
    for k in range(4):
        order = list(range(9))
        rng.shuffle(order)
        root = tmp_path / f"r{k}"
        build(root, order)
        for pack in (["web/a.tsx", "pkg/x.go"], ["pkg/x.go", "web/a.tsx"]):
            outputs.add(render(load_instructions(root, pack)))
            outputs.add(render(load_instructions(root, pack)))
    assert len(outputs) == 1
    result = load_instructions(tmp_path / "r0", ["web/a.tsx"])
    assert paths(result)[3:7] == [
        ".cursor/rules/Upper.mdc",
        ".cursor/rules/alpha.mdc",
        ".cursor/rules/mid/beta.mdc",
        ".ctx/AGENTS.md",
    ]


# --------------------------------------------------------------------------- bad input


def test_missing_root(tmp_path):
    with pytest.raises(NotFoundError) as exc:
        load_instructions(tmp_path / "nope", None)
    assert str(exc.value) == f"root {tmp_path / 'nope'}: no such directory"
    assert exc.value.exit_status == ExitStatus.FAILURE
    assert not (tmp_path / "nope").exists()


def test_root_is_a_file(tmp_path):
    write(tmp_path, "file.txt", "x\n")
    before = tree_digest(tmp_path)
    with pytest.raises(InputError) as exc:
        load_instructions(tmp_path / "file.txt", None)
    assert str(exc.value) == f"root {tmp_path / 'file.txt'}: not a directory"
    assert exc.value.exit_status == ExitStatus.FAILURE
    assert tree_digest(tmp_path) == before


@pytest.mark.parametrize(
    ("kw", "message"),
    [
        ({"max_total": 0}, "max_total must be a positive number of bytes, not 0"),
        ({"max_file": -5}, "max_file must be a positive number of bytes, not -5"),
        ({"max_file": True}, "max_file must be a positive number of bytes, not True"),
        ({"max_total": 1.5}, "max_total must be a positive number of bytes, not 1.5"),
    ],
)
def test_bad_caps(tmp_path, kw, message):
    write(tmp_path, "AGENTS.md", "x\n")
    with pytest.raises(UsageError) as exc:
        load_instructions(tmp_path, None, **kw)
    assert str(exc.value) == message
    assert exc.value.exit_status == ExitStatus.USAGE


def test_nothing_under_the_root_is_written(tmp_path):
    build(tmp_path, list(range(9)))
    before = tree_digest(tmp_path)
    load_instructions(tmp_path, ["web/a.tsx"], include_readme=True)
    assert tree_digest(tmp_path) == before


# --------------------------------------------------------------------------- parser units


def test_parse_front_matter_subset():
    lines = [
        "# a comment\n",
        "name: pdf-tools\n",
        "description: >\n",
        "  Folded text\n",
        "  over lines.\n",
        "literal: |\n",
        "  one\n",
        "  two\n",
        "single: 'it''s'\n",
        'double: "a \\"b\\" \\\\ c"\n',
        "flow: [a, 'b, c', \"d\"]\n",
        "items:\n",
        "  - x/** # comment\n",
        "  - 'y'\n",
        "plain: value # trailing comment\n",
        "continued: first\n",
        "  second\n",
        "empty:\n",
        "\n",
    ]
    assert parse_front_matter(lines) == {
        "name": "pdf-tools",
        "description": "Folded text over lines.",
        "literal": "one\ntwo",
        "single": "it's",
        "double": 'a "b" \\ c',
        "flow": ["a", "b, c", "d"],
        "items": ["x/**", "y"],
        "plain": "value",
        "continued": "first second",
        "empty": "",
    }


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (["  indented: first\n"], "line 2 is not 'key: value'"),
        (["key: 'open\n"], "key: unclosed '"),
        (['key: "a" b\n'], "key: text after the closing quote"),
        (["key:\n", "  - a\n", "  b\n"], "key: list items mixed with other lines"),
    ],
)
def test_parse_front_matter_errors(lines, message):
    with pytest.raises(FrontMatterError) as exc:
        parse_front_matter(lines)
    assert message in str(exc.value)


def test_expand_braces_and_glob_patterns():
    assert expand_braces("**/*.{ts,tsx}") == ["**/*.ts", "**/*.tsx"]
    assert expand_braces("{a,b{c,d}}/x") == ["a/x", "bc/x", "bd/x"]
    assert expand_braces("no/braces/*") == ["no/braces/*"]
    assert expand_braces("{single}") == ["{single}"]
    assert glob_patterns(" ./src/**, 'x/{a,b}' ,, src/** ", "paths") == ["src/**", "x/a", "x/b"]
    assert glob_patterns(["a/**", "./b"], "globs") == ["a/**", "b"]
    with pytest.raises(FrontMatterError, match="expand to over 4 patterns"):
        expand_braces("{a,b,c}{d,e}", limit=4)


def test_gate_fast_path_agrees_with_pathspec():
    import pathspec

    rng = random.Random(11)
    parts = ["pkg", "cmd", "web", "a", "b", "docs", "x.go", "y.tsx", "z.py", "README.md"]
    files = sorted(
        {"/".join(rng.choice(parts) for _ in range(rng.randint(1, 5))) for _ in range(400)}
    )
    patterns = [
        "pkg/**/*.go",
        "cmd/**",
        "*.go",
        "**/*.tsx",
        "docs/",
        "/README.md",
        "a/b*/x.go",
        "web/y.tsx",
        "a/**/b/**",
        "b/*",
        "pkg/?md/*",
        "[ab]/x.go",
        "**/x.go",
        "**/docs/",
        "*.py",
        "x.go",
        "b/**/z.py",
    ]
    cache: dict[str, bool] = {}
    seen = set()
    for k in range(400):
        chosen = rng.sample(patterns, rng.randint(1, 3))
        gate = ins.compile_gate(chosen)
        assert gate.probes is not None
        spec = pathspec.GitIgnoreSpec.from_lines(chosen)
        subset = sorted(rng.sample(files, rng.randint(0, 12)))
        expected = any(spec.match_file(f) for f in subset)
        assert gate.applies(subset) == expected, (k, chosen, subset)
        assert gate.applies(subset, cache) == expected, (k, chosen, subset)
        cache.clear()  # a cache holds for one set of files
        seen.add(expected)
    assert seen == {True, False}
    negated = ins.compile_gate(["pkg/**", "!pkg/vendor/**"])
    assert negated.probes is None
    assert negated.applies(["pkg/vendor/a.go", "pkg/z.go"])
    assert not negated.applies(["pkg/vendor/a.go"])


def test_many_malformed_gates_give_ten_notes_and_a_count(tmp_path):
    text = "".join(f"## Part {i} <!-- paths: [z-a] -->\nbody {i}\n" for i in range(25))
    write(tmp_path, "AGENTS.md", text)
    write(tmp_path, "CLAUDE.md", "## One <!-- paths: [z-a] -->\nx\n")
    result = load_instructions(tmp_path, ["a.py"])
    assert len(result.notes) == 12
    assert result.notes[0].startswith("AGENTS.md: malformed gate on heading 'Part 0' (paths: bad")
    assert result.notes[9].startswith("AGENTS.md: malformed gate on heading 'Part 9' (")
    assert result.notes[10] == "AGENTS.md: 15 more malformed gates; sections ungated"
    assert result.notes[11].startswith("CLAUDE.md: malformed gate on heading 'One' (")
    assert "body 24" in text_of(result, "AGENTS.md")


def test_read_limit_is_noted(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "SCAN_LIMIT", 2_000)
    write(tmp_path, "AGENTS.md", "kept\n## G <!-- paths: no/** -->\n" + lines_of(100))
    result = load_instructions(tmp_path, ["a.py"])
    assert result.dropped[-1] == {
        "path": "AGENTS.md",
        "section": "G",
        "reason": "read limit of 2,000 bytes",
    }
    assert result.notes == [
        "instructions over their caps (4,000 bytes a file, 12,000 in all): AGENTS.md cut or "
        "left out"
    ]


def test_absolute_pack_files_through_a_symlinked_root(tmp_path):
    real = tmp_path / "real"
    write(real, "AGENTS.md", "---\npaths: web/**\n---\nweb\n")
    (tmp_path / "link").symlink_to(real)
    via_link = str(tmp_path / "link" / "web" / "a.tsx")
    via_real = str(real / "web" / "a.tsx")
    for root in (tmp_path / "link", real):
        for f in (via_link, via_real):
            assert paths(load_instructions(root, [f])) == ["AGENTS.md"], (root, f)


def test_read_limit_with_nothing_applying_leaves_the_file_out(tmp_path, monkeypatch):
    monkeypatch.setattr(reading, "SCAN_LIMIT", 2_000)
    write(tmp_path, "AGENTS.md", "# G <!-- paths: no/** -->\n" + lines_of(100) + "# After\nx\n")
    write(tmp_path, "CLAUDE.md", "next\n")
    result = load_instructions(tmp_path, ["a.py"])
    assert paths(result) == ["CLAUDE.md"]
    assert result.dropped == [
        {"path": "AGENTS.md", "section": "G", "reason": "paths: no/** match no pack file"}
    ]
    assert result.notes == [
        "AGENTS.md: nothing in its first 2,000 bytes applies; the rest is not read"
    ]
