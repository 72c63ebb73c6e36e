"""Every command fed random bytes and malformed JSON: a documented exit status and at most
a one-line error, never a traceback (issue 11). The inputs are generated from fixed seeds,
so a failure names an input that can be made again."""

from __future__ import annotations

import io
import json
import random

import pytest

SEED = 20261130
RUNS = 120  # inputs per command and kind; each run is in-process (a few ms)

# Exit statuses each command documents (ctx-count 3: a gate; ctx-compact 4: no headroom).
STATUSES = {
    "ctx-count": {0, 1, 2, 3},
    "ctx-stash": {0, 1, 2},
    "ctx-read": {0, 1, 2},
    "ctx-excerpt": {0, 1, 2},
    "ctx-compact": {0, 1, 2, 4},
    "ctx-repomap": {0, 1, 2},
    "ctx-pack": {0, 1, 2},
}


def random_bytes(rng: random.Random) -> bytes:
    """Bytes of an unlucky shape: noise, NUL runs, invalid UTF-8, CJK, long lines, digits."""
    kind = rng.randrange(8)
    n = rng.choice([0, 1, 7, 100, 4096, 70_000])
    if kind == 0:
        return rng.randbytes(n)
    if kind == 1:
        return b"\0" * n
    if kind == 2:
        return bytes(rng.choice([0x80, 0xC3, 0xE2, 0xF0, 0xFF, 0x41, 0x0A]) for _ in range(n))
    if kind == 3:
        return "".join(rng.choice("漢字かなカナ한국어\n ") for _ in range(n)).encode()
    if kind == 4:
        return b"x" * n + b"\n" + b"y" * n
    if kind == 5:
        return "\n".join(str(i) for i in range(n // 4)).encode()
    if kind == 6:
        return b"\xef\xbb\xbf" + rng.randbytes(n)
    return "".join(rng.choice('{}[]",:0123456789truefalsnl\\u ') for _ in range(n)).encode()


def _deep(depth: int, open_: str, close: str, inner: str = "1") -> str:
    return open_ * depth + inner + close * depth


def malformed_json(rng: random.Random) -> bytes:
    """JSON documents that parse badly or parse into the wrong shape."""
    message = {"role": "user", "content": "fix the bug in parse_header"}
    valid = json.dumps([{"role": "system", "content": "be brief"}, message])
    choices = [
        lambda: valid[: rng.randrange(len(valid))],  # truncated
        lambda: _deep(rng.choice([100, 1000, 5000]), "[", "]"),
        lambda: _deep(rng.choice([100, 1000, 5000]), '{"a":', "}"),
        lambda: '{"messages": ' + _deep(600, "[", "]") + "}",
        lambda: '[{"role": "user", "content": 1e999}]',
        lambda: '[{"role": "user", "content": NaN}]',
        lambda: '[{"role": "user", "content": "\\ud800"}]',
        lambda: json.dumps([{"role": rng.choice([None, 1, [], "tool", "assistant"])}]),
        lambda: json.dumps({"messages": [{"role": "tool", "tool_call_id": "x"}]}),
        lambda: json.dumps([{"role": "user", "content": [{"type": "tool_result"}]}]),
        lambda: json.dumps([{"role": "assistant", "tool_calls": [{"id": 1}]}, message]),
        lambda: json.dumps({"kind": "handle", "name": "../x", "sha256": "../../etc"}),
        lambda: json.dumps({"kind": "handle", "session_id": "default", "name": "n"}),
        lambda: "\n".join(json.dumps(message) for _ in range(3)) + "\n{broken",
        lambda: json.dumps([]),
        lambda: json.dumps({}),
        lambda: json.dumps("just a string"),
        lambda: "\ufeff" + valid,
        lambda: valid.replace('"user"', '"us\\u0000er"'),
        # fields of the wrong JSON type (issue 21.12): each was a TypeError
        lambda: json.dumps(_anthropic_result(rng.choice([[], {}, 5, True]))),
        lambda: json.dumps(_openai_result(rng.choice([[], {}, 5, False]))),
        lambda: json.dumps({"kind": "handle", "name": "x", "sha256": rng.choice([5, [], {}])}),
        lambda: json.dumps({"kind": "handle", "name": "x", "session_id": rng.choice([7, []])}),
    ]
    return rng.choice(choices)().encode("utf-8", "surrogatepass")


def _anthropic_result(uid) -> list:
    use = {"type": "tool_use", "id": "t1", "name": "read", "input": {}}
    result = {"type": "tool_result", "tool_use_id": uid, "content": "r"}
    return [
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": [use]},
        {"role": "user", "content": [result]},
    ]


def _openai_result(cid) -> list:
    call = {"id": "c1", "type": "function", "function": {"name": "read", "arguments": "{}"}}
    return [
        {"role": "user", "content": "fix it"},
        {"role": "assistant", "content": None, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": cid, "content": "r"},
    ]


def stdin_of(data: bytes):
    return io.TextIOWrapper(io.BytesIO(data))


def check(result, name: str, what: str) -> None:
    assert "Traceback" not in result.stderr, f"{name} on {what}:\n{result.stderr[-2000:]}"
    assert result.returncode in STATUSES[name], (
        f"{name} on {what}: exit {result.returncode}\n{result.stderr[-500:]}"
    )
    if result.returncode not in (0, 3, 4):
        lines = [x for x in result.stderr.splitlines() if x.strip()]
        assert lines, f"{name} on {what}: failed without a word"


STDIN_CALLS = {
    "ctx-count": [
        ["ctx-count"],
        ["ctx-count", "--heuristic", "--json"],
        ["ctx-count", "--messages"],
    ],
    "ctx-stash": [["ctx-stash", "--name", "fuzz"], ["ctx-stash", "--always", "--type", "json"]],
    "ctx-read": [
        ["ctx-read", "--grep", "a+b|[0-9]{3}", "-C", "1"],
        ["ctx-read", "--jsonpath", "$..content"],
        ["ctx-read", "--head", "3"],
        ["ctx-read", "--count"],
    ],
    "ctx-excerpt": [["ctx-excerpt", "-q", "parse header"], ["ctx-excerpt", "--signatures"]],
    "ctx-compact": [["ctx-compact", "--limit", "3000"], ["ctx-compact", "--repair"]],
}


@pytest.mark.script_launch_mode("inprocess")
@pytest.mark.parametrize("name", sorted(STDIN_CALLS))
def test_random_bytes_on_stdin(script_runner, name):
    rng = random.Random(f"{SEED}-{name}-bytes")
    calls = STDIN_CALLS[name]
    for i in range(RUNS):
        data = random_bytes(rng)
        args = calls[i % len(calls)]
        check(script_runner.run(args, stdin=stdin_of(data)), name, f"bytes #{i} {args}")


@pytest.mark.script_launch_mode("inprocess")
@pytest.mark.parametrize("name", sorted(STDIN_CALLS))
def test_malformed_json_on_stdin(script_runner, name):
    rng = random.Random(f"{SEED}-{name}-json")
    calls = STDIN_CALLS[name]
    for i in range(RUNS):
        data = malformed_json(rng)
        args = calls[i % len(calls)]
        check(script_runner.run(args, stdin=stdin_of(data)), name, f"json #{i} {args}")


SUFFIXES = [".py", ".go", ".js", ".ts", ".rs", ".java", ".md", ""]


@pytest.mark.script_launch_mode("inprocess")
@pytest.mark.parametrize("name", ["ctx-repomap", "ctx-pack"])
def test_random_files_in_a_tree(script_runner, tmp_path, monkeypatch, name):
    """Trees of random files (every scanner's language, instruction files, bytes and bad
    JSON): the map and the pack are built or refused in one line, never a traceback."""
    rng = random.Random(f"{SEED}-{name}-tree")
    monkeypatch.chdir(tmp_path)
    for i in range(RUNS // 4):
        root = tmp_path / f"t{i}"
        root.mkdir()
        for k in range(rng.randrange(1, 6)):
            data = random_bytes(rng) if rng.random() < 0.7 else malformed_json(rng)
            (root / f"f{k}{rng.choice(SUFFIXES)}").write_bytes(data)
        if rng.random() < 0.3:
            (root / "AGENTS.md").write_bytes(b"---\npaths: [\n" + random_bytes(rng))
        if name == "ctx-repomap":
            args = ["ctx-repomap", str(root), "--tokens", str(rng.choice([50, 200, 1000]))]
        else:
            task = rng.choice(["fix @f0.py", "parse header", "  x  ", "@ctx:nope", "修复 bug"])
            args = ["ctx-pack", "-q", task, "--root", str(root), str(root), "--tokens", "800"]
        check(script_runner.run(args), name, f"tree #{i} {args}")


# --- the hostile pass (issue 21.12): every number and field type a traceback came from -----

HUGE = "1" + "0" * 400  # 10^400
NINES = "9" * 400
INT64 = str(2**63)  # one past a C ssize_t


def _number_options():
    """(command, option, kind) for every option of every command that takes a number."""
    import click

    from ctxtools.cli import compact, count, excerpt, pack, read, repomap, stash
    from ctxtools.cli.types import FiniteFloat, Size

    for mod in (compact, count, excerpt, pack, read, repomap, stash):
        for param in mod.cli.params:
            if not isinstance(param, click.Option) or param.is_flag:
                continue
            kind = None
            if isinstance(param.type, click.types.IntParamType):
                kind = "int"
            elif isinstance(param.type, Size):
                kind = "size"
            elif isinstance(param.type, (FiniteFloat, click.types.FloatParamType)):
                kind = "float"
            if kind:
                yield f"ctx-{mod.__name__.rsplit('.', 1)[1]}", param, kind


def test_every_integer_option_has_an_upper_bound():
    """An integer option without a max lets 10^400 through to a float, a C size or an
    allocation; a size option goes through the bounded parse_size."""
    import click

    seen = 0
    for name, param, kind in _number_options():
        if kind == "int":
            assert isinstance(param.type, click.IntRange), (name, param.opts)
            assert param.type.max is not None and param.type.min is not None, (name, param.opts)
            assert param.type.max <= 1 << 40, (name, param.opts)
            seen += 1
    assert seen >= 30  # the seven commands' whole-number options, all of them


@pytest.mark.script_launch_mode("inprocess")
@pytest.mark.parametrize("value", [HUGE, NINES, INT64, "-" + HUGE])
def test_every_number_option_refuses_numbers_past_its_bound(script_runner, tmp_path, value):
    """Each number option of each command, given 10^400, 400 nines, 2^63 or -10^400: one
    line, exit 2, naming the option -- never a traceback (OverflowError, MemoryError)."""
    monkeypatch_dir = tmp_path / "d"
    monkeypatch_dir.mkdir()
    for name, param, kind in _number_options():
        option = max(param.opts, key=len)
        args = [name, option, value]
        if kind == "size" and value == INT64:
            args[2] = value  # bytes, not a size suffix
        result = script_runner.run(args, stdin=stdin_of(b"hello\n"), cwd=monkeypatch_dir)
        assert "Traceback" not in result.stderr, (args, result.stderr[-800:])
        assert result.returncode == 2, (args[:2], result.stderr)
        lines = result.stderr.splitlines()
        assert len(lines) == 1 and lines[0].startswith(f"{name}: error: "), (args[:2], lines)
        assert option in lines[0] or any(o in lines[0] for o in param.opts), lines[0]


@pytest.mark.script_launch_mode("inprocess")
def test_a_bound_that_is_allowed_reads_in_bounded_memory(script_runner, tmp_path):
    """--max-file-size 1T and --threshold 1,000,000,000 are allowed: the reads they bound
    go a chunk at a time (fh.read(1T) was a MemoryError on a 14-byte file)."""
    (tmp_path / "a.py").write_text("def connect():\n    pass\n")
    result = script_runner.run(["ctx-repomap", str(tmp_path), "--max-file-size", "1T"])
    assert result.returncode == 0, result.stderr
    assert "def connect()" in result.stdout
    result = script_runner.run(
        ["ctx-stash", "--threshold", "1000000000"], stdin=stdin_of(b"small\n")
    )
    assert (result.returncode, result.stdout) == (0, "small\n"), result.stderr


HOSTILE_STDIN = [
    (["ctx-read"], b'{"kind":"handle","name":"x","sha256":5}', 2, '"sha256" is not a string'),
    (["ctx-read"], b'{"kind":"handle","name":"x","session_id":[]}', 2, '"session_id"'),
    (
        ["ctx-compact", "--limit", "1000", "--force"],
        json.dumps(_anthropic_result([])).encode(),
        1,
        'message 3, block 1: "tool_use_id" is a list, not a string',
    ),
    (
        ["ctx-compact", "--limit", "1000", "--force"],
        json.dumps(_openai_result({})).encode(),
        1,
        'message 3: "tool_call_id" is an object, not a string',
    ),
    (
        ["ctx-count", "--messages"],
        json.dumps(_openai_result({})).encode(),
        1,
        '"tool_call_id" is an object',
    ),
    (
        ["ctx-compact", "--keep-tool", "read", "--limit", "1000"],
        json.dumps(
            [{"role": "assistant", "tool_calls": [{"id": "c", "function": {"name": []}}]}]
        ).encode(),
        1,
        'tool call 1: "name" is a list, not a string',
    ),
]


@pytest.mark.script_launch_mode("inprocess")
@pytest.mark.parametrize(("args", "data", "status", "said"), HOSTILE_STDIN)
def test_fields_of_the_wrong_type_are_one_line(script_runner, args, data, status, said):
    result = script_runner.run(args, stdin=stdin_of(data))
    assert "Traceback" not in result.stderr, result.stderr[-800:]
    assert result.returncode == status, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and said in lines[0], lines


@pytest.mark.script_launch_mode("inprocess")
@pytest.mark.parametrize(
    "toml",
    [
        "[models.house]\n",
        "[families.house]\nmax_output = 100\n",
        "[models.house]\ncontext_limit = true\n",
        f"[models.house]\ncontext_limit = {2**62}\n",
    ],
)
@pytest.mark.parametrize(
    "args",
    [
        ["ctx-count", "--profiles"],
        ["ctx-count", "--model", "house", "--budget"],
        ["ctx-pack", "--task", "x", "--model", "house", "--no-map"],
    ],
)
def test_a_profiles_file_without_a_window_is_one_line(script_runner, tmp_path, toml, args):
    path = tmp_path / "profiles.toml"
    path.write_text(toml)
    result = script_runner.run([*args, "--profiles-file", str(path)], cwd=tmp_path)
    assert "Traceback" not in result.stderr, result.stderr[-800:]
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith(f"{args[0]}: error: {path}: ") and "house" in result.stderr
    assert result.stderr.count("\n") == 1


WORDLEVEL = {
    "version": "1.0",
    "truncation": None,
    "padding": None,
    "added_tokens": [],
    "normalizer": None,
    "pre_tokenizer": {"type": "Whitespace"},
    "post_processor": None,
    "decoder": None,
    "model": {"type": "WordLevel", "vocab": {"hello": 0, "world": 1}, "unk_token": "[UNK]"},
}


@pytest.mark.script_launch_mode("inprocess")
@pytest.mark.parametrize(
    "args",
    [
        ["ctx-count"],
        ["ctx-read", "--count"],
        ["ctx-excerpt", "-q", "world", "--tokens", "100"],  # "hello": a stop-word
    ],
)
def test_a_wordlevel_tokenizer_without_unk_is_one_line(script_runner, tmp_path, args):
    """tokenizers loads such a file, then raises a bare Exception on the first word it has
    not seen; the ruler refuses it when it is loaded, naming the file."""
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(WORDLEVEL))
    result = script_runner.run(
        [*args, "--tokenizer", str(path)], stdin=stdin_of(b"hello there\n"), cwd=tmp_path
    )
    assert "Traceback" not in result.stderr, result.stderr[-800:]
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert lines[-1] == (
        f"{args[0]}: error: {path} is not a usable tokenizer.json: "
        "WordLevel error: Missing [UNK] token from the vocabulary"
    ), lines


def test_a_wordlevel_tokenizer_with_unk_still_counts(tmp_path):
    from ctxtools.tokens import get_ruler

    doc = json.loads(json.dumps(WORDLEVEL))
    doc["model"]["vocab"]["[UNK]"] = 2
    path = tmp_path / "tokenizer.json"
    path.write_text(json.dumps(doc))
    assert get_ruler(tokenizer=str(path)).ruler.count("hello there world") == 3
