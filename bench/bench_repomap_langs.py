"""ctx-repomap on the tree-sitter languages: does each map fit its budget, and does it
name the repository's central types first?

Run by hand:  .venv/bin/python bench/bench_repomap_langs.py [--tokens 1000 2000]
                  [--lang c cpp ...] [--encoding o200k_base] [--json OUT]

One real repository per language, the ones bench/bench_scan_oracle.py compares against
ctags (TS_REPOS, unpacked under bench/corpora/repos/<owner>+<name>/; this bench never
fetches them). For each budget the installed ``ctx-repomap`` (the one beside this
interpreter) runs on the repository with a fresh CTX_STORE, once as text and once with
--json, and the bench reports:

fit      the printed map counted again by ``ctx-count`` with the encoding the map says it
         used; over the budget is a failure (exit 1); slack = budget - tokens. The --json
         map must be the same text.
central  the repository's central types, chosen without the ranker: each is named by the
         project's own documentation (DOC below says where) and checked by a plain
         word-boundary grep -- how many distinct source files of the repository mention
         the name, the files defining it left out ("refs"; "rank" is its place in
         grep-top's order, 1 = most referenced). For each, the position of its first
         line in the map: the n-th definition line of the map in reading order (files
         in rank order, a file's symbols in line order) and the n-th file shown ("-"
         when absent at that budget).
first10  the map's first ten definition lines, by name ("(cl)" a class, "(ty)" a type...).
grep-top the type names most files mention (same count as "refs"; one-letter names,
         names defined only in test files and, outside C, C++, Lua and Bash, lower-case
         ones -- Scala package objects -- left out), for comparison: what a reader
         could call central without any docs.

Lua and Bash have no types: their central entries are modules (a file, counted by the
files that ``require`` it; grep-top is then the most required modules) and functions
(counted by the files that name them, nvm's extensionless test scripts included: the
bench finds them by their #! line).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from bench_scan_oracle import REPOS, TS_REPOS  # noqa: E402

BIN = Path(sys.executable).parent
TYPE_KINDS = {"class", "struct", "interface", "enum", "trait", "type", "record", "object"}
IDENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

# language -> [(entry, doc)]. An entry is a type name ("Base" or "Sinatra::Base", the
# scope checked when given), "file:PATH" (a module: counted by GREP below) or "fn:NAME".
CENTRAL = {
    "c": [
        ("uv_loop_t", "docs/src/loop.rst: 'uv_loop_t -- Event loop'"),
        ("uv_handle_t", "docs/src/handle.rst: 'uv_handle_t -- Base handle'"),
        ("uv_req_t", "docs/src/request.rst: 'uv_req_t -- Base request'"),
        ("uv_stream_t", "docs/src/stream.rst: 'uv_stream_t -- Stream handle'"),
        ("uv_tcp_t", "docs/src/tcp.rst; design.rst's example of a handle"),
        ("uv_buf_t", "docs/src/misc.rst: the buffer every read/write takes"),
    ],
    "cpp": [
        ("DB", "doc/index.md: 'Opening A Database', leveldb::DB::Open"),
        ("Options", "doc/index.md: leveldb::Options passed to DB::Open"),
        ("Status", "doc/index.md: section 'Status'"),
        ("Slice", "doc/index.md: section 'Slice'"),
        ("Iterator", "doc/index.md: section 'Iteration', db->NewIterator"),
        ("WriteBatch", "doc/index.md: section 'Atomic Updates'"),
    ],
    "csharp": [
        ("JsonConvert", "newtonsoft.com/json docs: 'Serializing and Deserializing JSON'"),
        ("JsonSerializer", "same page: JsonSerializer for control over serialization"),
        ("JsonReader", "docs: 'Basic Reading and Writing JSON'"),
        ("JsonWriter", "docs: 'Basic Reading and Writing JSON'"),
        ("JToken", "docs: 'LINQ to JSON', the base of JObject/JArray/JValue"),
        ("JObject", "docs: 'LINQ to JSON'"),
    ],
    "ruby": [
        ("Sinatra::Base", "README.md: 'Modular vs. Classic Style', Sinatra::Base (18x)"),
        ("Sinatra::Application", "README.md: the classic app, Sinatra::Application (8x)"),
        ("Sinatra::Request", "README.md: 'Accessing the Request Object'"),
        ("Sinatra::Helpers", "README.md: 'Helpers'; lib/sinatra/base.rb module Helpers"),
    ],
    "php": [
        ("App", "slimframework.com docs 4.x: 'Application', Slim\\App"),
        ("AppFactory", "docs: 'AppFactory::create()' starts every example"),
        ("RouteCollectorProxy", "docs: 'Route groups', $app->group(..., RouteCollectorProxy)"),
        ("Route", "docs: 'Routing', the Route object"),
        ("RouteCollector", "docs: 'Routing'; the App's route collector"),
        ("MiddlewareDispatcher", "docs: 'Middleware'; App::handle runs it"),
    ],
    "kotlin": [
        ("OkHttpClient", "README.md: 'Get a URL' / 'Post to a Server'"),
        ("Request", "README.md: Request.Builder()"),
        ("Response", "README.md: client.newCall(request).execute() returns a Response"),
        ("Call", "docs/features/calls.md: 'OkHttp uses Call to model the task'"),
        ("Interceptor", "docs/features/interceptors.md"),
    ],
    "lua": [
        ("file:src/luarocks/util.lua", "the utility module every command requires"),
        ("file:src/luarocks/core/cfg.lua", "docs/config_file_format.md: the configuration"),
        ("file:src/luarocks/fs.lua", "the file-system layer (fs/*.lua back ends)"),
        ("file:src/luarocks/dir.lua", "path helpers used by every command"),
        ("file:src/luarocks/path.lua", "docs: rock tree layout (path.rocks_dir, ...)"),
    ],
    "bash": [
        ("fn:nvm", "README.md: every usage line is 'nvm <command>'"),
        ("fn:nvm_echo", "the output helper most functions and tests call"),
        ("fn:nvm_err", "the error helper"),
        ("fn:nvm_ls", "README.md: 'nvm ls'"),
        ("fn:nvm_install_binary", "README.md: 'nvm install' (binary install path)"),
    ],
    "swift": [
        ("Session", "README.md / Documentation/Usage.md: 'Session' (AF is Session.default)"),
        ("Request", "Usage.md: Request, the base of every request type"),
        ("DataRequest", "Usage.md: AF.request returns a DataRequest"),
        ("DataResponse", "Usage.md: 'Response Handling', DataResponse"),
        ("AFError", "Usage.md: errors are AFError"),
    ],
    "scala": [
        ("Functor", "docs/typeclasses.md and docs/typeclasses/functor.md"),
        ("Applicative", "docs/typeclasses/applicative.md"),
        ("Monad", "docs/typeclasses/monad.md"),
        ("Eq", "docs/typeclasses/eq.md (cats.kernel.Eq)"),
        ("Semigroup", "docs/typeclasses/semigroup.md (cats.kernel.Semigroup)"),
        ("Monoid", "docs/typeclasses/monoid.md (cats.kernel.Monoid)"),
        ("Traverse", "docs/typeclasses/traverse.md"),
    ],
}


def run(argv: list[str], store: str, stdin: str | None = None) -> str:
    env = dict(os.environ, CTX_STORE=store)
    p = subprocess.run(argv, input=stdin, capture_output=True, text=True, env=env, check=True)
    return p.stdout


def parse_map(text: str) -> list[tuple[str, int | None]]:
    """The map's lines as (path, line number) in reading order; None for a bare path."""
    out = []
    path = None
    for line in text.splitlines():
        m = re.match(r"(\d+):", line)
        if m and path is not None:
            out.append((path, int(m.group(1))))
        elif line.endswith(":"):
            path = line[:-1]
        else:
            path = line
            out.append((path, None))
    return out


def map_entries(text: str, doc: dict) -> list[dict]:
    """Each definition line of the map, matched to its definition in the --json files."""
    by_file = {f["path"]: f for f in doc["files"]}
    lines = text.splitlines()
    entries = []
    file_pos: dict[str, int] = {}
    li = 0
    for path, lineno in parse_map(text):
        file_pos.setdefault(path, len(file_pos) + 1)
        if lineno is None:
            continue
        while not lines[li].startswith(f"{lineno}:"):
            li += 1
        shown = lines[li]
        li += 1
        defs = [d for d in by_file.get(path, {}).get("definitions", []) if d["line"] == lineno]
        named = [d for d in defs if d["name"] in shown] or defs
        d = named[0] if named else {"name": "?", "kind": "?", "scope": None}
        entries.append(
            {
                "pos": len(entries) + 1,
                "file_pos": file_pos[path],
                "path": path,
                "line": lineno,
                "name": d["name"],
                "kind": d["kind"],
                "scope": d["scope"],
            }
        )
    return entries


def source_files(root: Path, lang: str, doc: dict) -> dict[str, str]:
    """The repository's source files of LANG: by suffix, plus what the map detected as
    LANG (extensionless scripts)."""
    suffixes = TS_REPOS[lang][2]
    rels = {f["path"] for f in doc["files"] if f["language"] == lang}
    for p in root.rglob("*"):
        if p.is_file() and p.suffix in suffixes:
            rels.add(p.relative_to(root).as_posix())
    if lang == "bash":  # extensionless scripts (nvm's tests): by their #! line
        for p in root.rglob("*"):
            if p.is_file() and not p.suffix and _shell_script(p):
                rels.add(p.relative_to(root).as_posix())
    out = {}
    for rel in sorted(rels):
        with contextlib.suppress(OSError):
            out[rel] = (root / rel).read_text("utf-8", "replace")
    return out


_SHELL = re.compile(rb"#!\s*(?:/usr)?/bin/(?:env\s+)?(?:ba|z|k|da)?sh\b")


def _shell_script(p: Path) -> bool:
    try:
        with p.open("rb") as fh:
            return _SHELL.match(fh.read(64)) is not None
    except OSError:
        return False


# Test files by the usual layouts, for leaving test-only types out of "grep-top" (the
# bench's own rule, not the ranker's)
_TESTISH = re.compile(
    r"(?:^|/)(?:tests?|Tests?|spec|specs|[^/]+\.Tests?|testing|[^/]*-tests?)/"
    r"|(?:Tests?|Spec|Suite)\.\w+$|_(?:test|spec)\.\w+$"
)


def split_entry(entry: str) -> tuple[str, str | None]:
    """``Sinatra::Base`` -> ("Base", "Sinatra"); ``Base`` -> ("Base", None)."""
    parts = re.split(r"::|\.", entry)
    return parts[-1], (".".join(parts[:-1]) or None)


def defining_files(doc: dict, name: str, scope: str | None, kinds) -> set[str]:
    out = set()
    for f in doc["files"]:
        for d in f["definitions"]:
            if d["name"] == name and d["kind"] in kinds and (scope is None or d["scope"] == scope):
                out.add(f["path"])
    return out


def ref_counts(sources: dict[str, str], names: set[str], defined: dict[str, set[str]]):
    """For each name, how many source files mention it as a word, its defining files
    left out."""
    counts: Counter = Counter()
    for rel, text in sources.items():
        for w in set(IDENT.findall(text)) & names:
            if rel not in defined.get(w, ()):
                counts[w] += 1
    return counts


def require_count(sources: dict[str, str], rel: str) -> int:
    """Files that require the Lua module at REL (``luarocks.util`` for src/luarocks/util.lua)."""
    mod = rel.removeprefix("src/").removesuffix(".lua").replace("/", ".")
    pat = re.compile(r"require\s*\(?\s*[\"']" + re.escape(mod) + r"[\"']")
    return sum(1 for r, text in sources.items() if r != rel and pat.search(text))


def central_report(lang: str, doc: dict, sources: dict[str, str], entries: list[dict]):
    fn_kinds = {"function", "method"}
    kinds = fn_kinds if lang in ("lua", "bash") else TYPE_KINDS
    all_names: dict[str, set[str]] = {}
    for f in doc["files"]:
        if f["language"] != lang:
            continue
        for d in f["definitions"]:
            if d["kind"] in kinds:
                all_names.setdefault(d["name"], set()).add(f["path"])
    counts = ref_counts(sources, set(all_names), all_names)
    ranked = sorted(counts, key=lambda n: (-counts[n], n))
    lower_ok = lang in ("c", "cpp", "lua", "bash")
    shown = [
        n
        for n in ranked
        if len(n) > 1
        and (lower_ok or not n[:1].islower())  # Scala package objects, type variables
        and not all(_TESTISH.search(f) for f in all_names[n])
    ]
    rank_of = {n: i + 1 for i, n in enumerate(shown)}
    rows = []
    for entry, why in CENTRAL.get(lang, []):
        row = {"entry": entry, "doc": why}
        if entry.startswith("file:"):
            rel = entry[5:]
            row["refs"] = require_count(sources, rel)
            hit = next((e for e in entries if e["path"] == rel), None)
            row["defined_in"] = [rel] if rel in sources else []
        else:
            name, scope = split_entry(entry.removeprefix("fn:"))
            files = defining_files(doc, name, scope, kinds)
            row["defined_in"] = sorted(files)
            c = ref_counts(sources, {name}, {name: files})
            row["refs"] = c[name]
            row["rank"] = rank_of.get(name)
            hit = next(
                (
                    e
                    for e in entries
                    if e["name"] == name
                    and e["kind"] in kinds
                    and (scope is None or e["scope"] == scope)
                ),
                None,
            )
        row["pos"] = hit["pos"] if hit else None
        row["file_pos"] = hit["file_pos"] if hit else None
        rows.append(row)
    if lang == "lua":  # modules, by the files that require them
        mods = [r for r in sources if r.startswith("src/") and not _TESTISH.search(r)]
        req = {r: require_count(sources, r) for r in mods}
        shown = sorted(req, key=lambda r: (-req[r], r))
        counts = Counter(req)
        all_names = {r: {r} for r in mods}
    top = [{"name": n, "refs": counts[n], "files": sorted(all_names[n])[:3]} for n in shown[:8]]
    return rows, top


def one(lang: str, budgets: list[int], encoding: str | None = None) -> dict:
    repo, commit, _suffixes = TS_REPOS[lang]
    root = REPOS / repo.replace("/", "+")
    if not root.is_dir():
        return {"lang": lang, "repo": repo, "missing": str(root)}
    out = {"lang": lang, "repo": repo, "commit": commit, "budgets": []}
    with tempfile.TemporaryDirectory(prefix="bench-langs-") as store:
        for budget in budgets:
            argv = [str(BIN / "ctx-repomap"), str(root), "--tokens", str(budget)]
            if encoding:
                argv += ["--encoding", encoding]
            text = run(argv, store)
            doc = json.loads(run(argv + ["--json"], store))
            counted = int(run([str(BIN / "ctx-count"), "--encoding", doc["counter"]], store,
                              stdin=text).split()[0])  # fmt: skip
            entries = map_entries(text, doc)
            sources = source_files(root, lang, doc)
            rows, top = central_report(lang, doc, sources, entries)
            out["budgets"].append(
                {
                    "budget": budget,
                    "tokens_reported": doc["tokens"],
                    "tokens_counted": counted,
                    "slack": budget - counted,
                    "over": counted > budget,
                    "json_map_same": doc["map"] == text,
                    "counter": doc["counter"],
                    "shown": doc["shown"],
                    "central": rows,
                    "first10": entries[:10],
                    "grep_top": top,
                    "source_files": len(sources),
                }
            )
    return out


def show(r: dict) -> None:
    if "missing" in r:
        print(f"{r['lang']}: {r['repo']} not unpacked at {r['missing']}")
        return
    print(f"== {r['lang']}  {r['repo']}@{r['commit'][:12]}")
    for b in r["budgets"]:
        flag = "OVER" if b["over"] else "ok"
        same = "" if b["json_map_same"] else "  (--json map differs from the text!)"
        print(
            f"  budget {b['budget']}: {b['tokens_counted']} tokens by ctx-count"
            f" ({b['counter']}; map says {b['tokens_reported']}), slack {b['slack']} {flag};"
            f" {b['shown']['files']} files, {b['shown']['symbols']} symbols{same}"
        )
        cells = []
        for c in b["central"]:
            where = f"#{c['pos']} (file {c['file_pos']})" if c["pos"] else "-"
            rank = f", rank {c['rank']}" if c.get("rank") else ""
            cells.append(f"{c['entry']} [refs {c['refs']}{rank}] {where}")
        print("    central: " + "; ".join(cells))
        print("    first10: " + ", ".join(_label(e) for e in b["first10"]))
    top = r["budgets"][0]["grep_top"] if r["budgets"] else []
    print("    grep-top: " + ", ".join(f"{t['name']} {t['refs']}" for t in top))


def _label(e: dict) -> str:
    return f"{e['name']}" if e["kind"] not in TYPE_KINDS else f"{e['name']}({e['kind'][:2]})"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, nargs="+", default=[1000, 2000])
    ap.add_argument("--lang", nargs="+", choices=sorted(TS_REPOS), default=list(TS_REPOS))
    ap.add_argument("--encoding", help="the ruler of both tools (default: theirs)")
    ap.add_argument("--json", metavar="OUT", help="write every figure to OUT as JSON")
    args = ap.parse_args()
    results = []
    for lang in args.lang:
        r = one(lang, args.tokens, args.encoding)
        show(r)
        results.append(r)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1) + "\n")
    over = any(b["over"] for r in results for b in r.get("budgets", ()))
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
