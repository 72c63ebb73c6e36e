"""Re-create the golden definitions of tests/data/scan/real/ from an oracle that is not our
scanner: Universal Ctags 5.9 (/usr/bin/ctags), run and filtered exactly as
bench/bench_scan_oracle.py runs and filters it for that language (its ``ctags_tags``:
the same options, kinds, junk and nested-tag filters), or, for Swift and Scala, which
ctags 5.9 cannot parse, the bench's line-pattern oracle (its ``line_tags``).

    python tools/gen_scan_goldens.py           # rewrite every <file>.tags.json
    python tools/gen_scan_goldens.py --check   # exit 1 when one would change
    python tools/gen_scan_goldens.py --copy    # first copy the sources and licences again
                                               # from bench/corpora/repos/ (see the bench)

Each <file>.tags.json is a list of {kind, name, line, scope}, sorted by line then name:
the bench's normalised tag (its name and kind, the line of the name) plus ctags' scope,
with ``::`` and ``\\`` written ``.`` and the leading namespaces and packages left out (we
give a C++ method of ``leveldb::SkipList`` the scope ``SkipList``); a Lua ``M.f`` is
named ``f`` by the bench, its scope is ``M``. The line oracle knows no scopes (null).

Needs ctags; tests/lib/test_scan_real.py reads the JSON files and does not.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
REAL = ROOT / "tests" / "data" / "scan" / "real"
sys.path.insert(0, str(ROOT / "bench"))

import bench_scan_oracle as bench  # noqa: E402

# file in tests/data/scan/real -> (language, path in its project, licence file there)
FILES = {
    "internal.h": ("c", "src/unix/internal.h", "LICENSE"),
    "skiplist.h": ("cpp", "db/skiplist.h", "LICENSE"),
    "DateTimeUtils.cs": ("csharp", "Src/Newtonsoft.Json/Utilities/DateTimeUtils.cs", None),
    "reloader.rb": ("ruby", "sinatra-contrib/lib/sinatra/reloader.rb", "LICENSE"),
    "MiddlewareDispatcher.php": ("php", "Slim/MiddlewareDispatcher.php", "LICENSE.md"),
    "Cookie.kt": ("kotlin", "okhttp/src/commonJvmAndroid/kotlin/okhttp3/Cookie.kt", "LICENSE.txt"),
    "lua.lua": ("lua", "src/luarocks/fs/lua.lua", "COPYING"),
    "install.sh": ("bash", "install.sh", "LICENSE.md"),
    "Combine.swift": ("swift", "Source/Features/Combine.swift", "LICENSE"),
    "NonEmptyList.scala": ("scala", "core/src/main/scala/cats/data/NonEmptyList.scala", "COPYING"),
}
CONTAINERS = {"namespace", "package"}


def project(lang: str) -> tuple[str, str]:
    """(owner/name, commit) of the language's repository in the bench."""
    repo, commit, _ = bench.TS_REPOS[lang]
    return repo, commit


def copy_sources() -> None:
    """Copy every file and its project's licence, unmodified, from bench/corpora/repos."""
    (REAL / "LICENSES").mkdir(parents=True, exist_ok=True)
    for name, (lang, rel, licence) in FILES.items():
        repo, _ = project(lang)
        top = bench.REPOS / repo.replace("/", "+")
        shutil.copyfile(top / rel, REAL / name)
        if licence is not None:
            shutil.copyfile(top / licence, REAL / "LICENSES" / f"{repo.split('/')[1]}.txt")


def raw_ctags(lang: str, path: Path) -> list[dict]:
    """ctags' own tags of PATH, with the options the bench gives it."""
    proc = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+nKSe", "--langmap=TypeScript:+.tsx",
         *bench.CTAGS_EXTRA.get(lang, ()), f"--languages={bench.CTAGS_LANG[lang]}",
         "-f", "-", str(path)],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    tags = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    return [t for t in tags if t.get("_type") == "tag"]


def dotted(scope: str | None) -> str:
    return (scope or "").replace("::", ".").replace("\\", ".")


def scope_of(tag: dict, containers: set[str]) -> str | None:
    """TAG's scope without its leading namespaces and packages (CONTAINERS: their full
    dotted names in the file)."""
    scope = dotted(tag.get("scope"))
    stripped = True
    while scope and stripped:
        stripped = False
        parts = scope.split(".")
        for i in range(len(parts), 0, -1):
            if ".".join(parts[:i]) in containers:
                head = ".".join(parts[:i]) + "."
                scope, stripped = ".".join(parts[i:]), True
                containers = {c[len(head) :] for c in containers if c.startswith(head)}
                break
    return scope or None


def ctags_goldens(lang: str, path: Path) -> list[dict]:
    """The bench's tags of PATH, each given the scope of the ctags tag it came from."""
    tags, _ = bench.ctags_tags(lang, [path])
    raw = raw_ctags(lang, path)
    containers = {
        f"{dotted(t.get('scope'))}.{t['name']}".lstrip(".") for t in raw if t["kind"] in CONTAINERS
    }
    out = []
    for name, line, kind in tags.get(str(path), ()):
        same = [t for t in raw if t["line"] == line and t["kind"] == kind]
        named = [t for t in same if re.split(r"[.:]", t["name"].replace(" ", ""))[-1] == name]
        (tag,) = named or same  # the bench renames a macro-wrapped C function: one there
        scope = scope_of(tag, containers)
        if lang == "lua" and re.search(r"[.:]", tag["name"]):
            scope = re.sub(r"[.:][^.:]*$", "", tag["name"]).replace(":", ".")
        out.append({"kind": kind, "name": name, "line": line, "scope": scope})
    return out


def line_goldens(lang: str, path: Path) -> list[dict]:
    tags, _ = bench.line_tags(lang, [path])
    return [
        {"kind": kind, "name": name, "line": line, "scope": None}
        for name, line, kind in tags.get(str(path), ())
    ]


def goldens(name: str) -> str:
    lang = FILES[name][0]
    path = REAL / name
    rows = (line_goldens if lang in bench.LINE_ORACLE else ctags_goldens)(lang, path)
    rows.sort(key=lambda r: (r["line"], r["name"], r["kind"]))
    return "[\n" + ",\n".join(json.dumps(r) for r in rows) + "\n]\n"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--check", action="store_true", help="exit 1 when a file would change")
    ap.add_argument("--copy", action="store_true", help="copy the sources from the bench first")
    args = ap.parse_args()
    if shutil.which("ctags") is None:
        print("gen_scan_goldens: needs Universal Ctags (ctags) on PATH", file=sys.stderr)
        return 1
    if args.copy:
        copy_sources()
    stale = []
    for name in FILES:
        text = goldens(name)
        out = REAL / f"{name}.tags.json"
        if out.exists() and out.read_text(encoding="utf-8") == text:
            continue
        stale.append(out.name)
        if not args.check:
            out.write_text(text, encoding="utf-8")
    for name in stale:
        print(("stale: " if args.check else "wrote ") + name)
    return 1 if args.check and stale else 0


if __name__ == "__main__":
    sys.exit(main())
