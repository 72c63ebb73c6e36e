"""Scanner definitions against Universal Ctags, per language, plus scanning speed.

Run by hand:  .venv/bin/python bench/bench_scan_oracle.py [--show N] [--lang L ...]
              .venv/bin/python bench/bench_scan_oracle.py --parity   (needs the six
              grammar wheels: pip install tree-sitter-python tree-sitter-go ...)

Corpora (bench/corpora/, gitignored; prepared on first run when missing):
  python      Django 5.1.4 release tarball (pip download --no-binary), all 2,788 .py files
  go          golang.org/x/tools and spf13/cobra from Debian golang-*-dev packages
  rust        regex, serde, tokio, hashbrown, rayon, indexmap, memchr from Debian librust-*-dev
  java        java.base's java/util, java/io, java/lang from Debian openjdk-17-source
  typescript  rxjs 7 src, @trpc/server 10, @tanstack/query-core 5 (.ts/.tsx, no .d.ts), npm
  javascript  webpack 5 lib/ and express 4 lib/ (npm pack): CommonJS
  js-esm      svelte 4 src/ and preact 10 src/ (npm pack): JavaScript as ES modules
  .d.ts       every declaration file of those and of @angular/core 17, vue 3, zod 3

Tree-sitter languages (ctxtools/source/scan/treesitter.py), one real repository each, at
the commit named in TS_REPOS, unpacked under bench/corpora/repos/<owner>+<name>/ (a
``git archive`` of that commit; the bench never fetches them itself):
  c           libuv/libuv (.c, and .h read as C: --langmap=C:.c.h)
  cpp         google/leveldb (.cc, .h)
  cpp-fmt     fmtlib/fmt (.cc, .h): modern C++, templates, specialisations, operators
  csharp      JamesNK/Newtonsoft.Json    ruby    sinatra/sinatra    php     slimphp/Slim
  kotlin      square/okhttp              lua     luarocks/luarocks  bash    nvm-sh/nvm
Universal Ctags 5.9 has no Swift or Scala parser: Alamofire/Alamofire and typelevel/cats
are compared against a line-pattern oracle instead (LINE_ORACLE: a declaration keyword
after attributes and modifiers at the start of a line, not inside a Swift function's
braces by an independent brace count; in Scala, not inside any code brace: a def's or a
val's body, a block passed to a call such as ``test("...") {``, ``new T {``, a refinement
type, a bare block -- every brace but the template body of a class, object, trait, enum,
given or extension, see ``scala_nested``), weaker than a parser; variables are
left out of those two rows. Its C#
parser loses methods after nullable types and generic constraints: each extra of ours is
checked against its source line (does it declare that name? an operator as ctags names
it, ``operator ==``, ``operator JToken``), and the report says how many that confirms.
Lua and Kotlin tags nested in a function are dropped by an
independent block count (ctags 5.9 gives them no scope there); so are Kotlin properties
and locals that ctags gives no scope or the package's although they lie inside a class, a
constructor, an ``init`` block or a getter (braces and parentheses counted, comments and
strings skipped), and backticked Kotlin functions are left out of both sides (ctags 5.9
names them garbage bytes or drops them, differently from run to run); and ctags' made-up names
(``__anon...`` structs, ``<lambda>``) are dropped too.
Kinds compared there (ctags kinds, C/C++ with prototypes switched on, --kinds-C=+p):
  c/cpp       function, prototype, struct, union, enum, typedef, class (C++), variable
              at file level (left out: macro, member, enumerator, namespace, extern var)
  csharp      class, interface, struct, enum, method   (left out: property, field, event)
  ruby        class, module, method, singletonMethod, constant (left out: accessor, alias)
  php         class, interface, trait, function (methods too)  (left out: variable, define)
  kotlin      class, interface, object, method, typealias, constant, variable at file level
  lua, bash   function

The oracle is ``ctags --output-format=json --fields=+nKSe``. Only top-level and
class-level definitions count: a ctags tag whose scope is a function or method is dropped
(we do not report nested functions by design), and so is a tag that lies inside the body
of a function-like tag (ctags' "end" field): a class defined in a function and its
methods, an impl block inside a test function. In Go the blank identifier ``_`` is
dropped (it defines nothing). Kinds are compared as follows (ctags kinds
on the left, left out entirely when not listed):

  python      class, function, member -> class, function, method
              (variables left out: ctags reports every module-level assignment; we report
              only UPPER_CASE and annotated ones; see the separate "python-vars" row, which
              compares module-level UPPER_CASE names only)
  go          func, methodSpec, struct, interface, type, talias, const, var
              (left out: member = struct fields, package, anonMember, receiver)
  rust        function, method, struct, enum, interface (trait), implementation (impl),
              typedef, variable (static)  (left out: field, enumerator, module, macro)
  java        class, interface, enum, annotation, method
              (left out: field, enumConstant, package, local)
  typescript  class, function, method, interface, alias, enum, generator, constant/variable
              at module level (left out: property, enumerator, namespace, local, parameter)
  javascript  class, function, method, getter, setter, generator, constant/variable at
              module level (left out: field, property)

JavaScript and TypeScript against ctags: Universal Ctags 5.9 (what Debian ships) adds junk
of its own there, which ``js_junk`` removes before counting, each kind counted in the
report's "ctags junk removed" lines: anonymous callbacks under made-up names, import and
export specifiers (``import { type X }``) read as type aliases, locals of functions and
methods reported at module level (an unscoped tag on an indented line: ctags keeps no
scope for them in TypeScript and loses it in JavaScript), object literals read as classes,
``module.exports = class X`` and ``X.Y = class Z`` read a second time as classes named
``exports`` and ``Y``, ``X.prototype.m = ...`` read as a class ``X``, and keywords read
as names (``type A = B extends {...}`` as a type named ``extends``). ``var x =
require("x")`` is an import by our definition, so ctags' variable for it is left out too.
``X.m = function`` at the start of a line is kept, whatever scope kind ctags gives ``X``.
ctags reports an overloaded TypeScript function once, at its first signature, so ours are
counted that way too (``overload_signatures``). What remains is ctags' own omissions: it
loses class methods after a method or parameter named ``get``/``set`` and static generic
methods; every definition of ours that ctags lacks is therefore checked against the
TypeScript compiler's parse, and the report says how many it confirms.

The TypeScript compiler's own parser is the second oracle (typescript 5.6.3 from npm,
bench/bench_scan_tsc_oracle.js; rows "ts-tsc", "js-tsc", "js-esm-tsc" and "dts-tsc", the
last over every .d.ts file the npm packages above ship, Angular's 16,000-line index.d.ts
included): top-level functions, classes, interfaces, type aliases, enums, variables (an
arrow/function initializer makes a function; a require binding is an import, not a
variable), namespace contents, class methods/accessors/constructors/arrow-function
properties, interface method signatures, ``module.exports = class X``, ``module.exports =
function query`` (``query``; an anonymous one is ``module.exports``),
``X.prototype.m = function``, ``app.m = function``, ``exports.f = function`` and named
function expressions handed to a top-level call (``defineGetter(req, 'protocol', function
protocol() {...})``: the method ``protocol`` of ``req``). Those rows compare every kind we
report.

A definition matches when (file, name, line) agree; the kind is not required to agree
(ctags calls an arrow-function const a "constant", we call it a function). Recall =
matched / ctags tags, precision = matched / our definitions, both over the kinds above.
"""

from __future__ import annotations

import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
CORPORA = HERE / "corpora"
sys.path.insert(0, str(ROOT))

from ctxtools.source.scan import scan_source  # noqa: E402

CTAGS_KINDS = {
    "python": {"class", "function", "member"},
    "python-vars": {"variable"},
    "go": {"func", "methodSpec", "struct", "interface", "type", "talias", "const", "var"},
    "rust": {
        "function",
        "method",
        "struct",
        "enum",
        "interface",
        "implementation",
        "typedef",
        "variable",
    },
    "java": {"class", "interface", "enum", "annotation", "method"},
    "typescript": {
        "class",
        "function",
        "method",
        "interface",
        "alias",
        "enum",
        "generator",
        "constant",
        "variable",
    },
    "javascript": {
        "class",
        "function",
        "method",
        "getter",
        "setter",
        "generator",
        "constant",
        "variable",
    },
}
CTAGS_KINDS["js-esm"] = CTAGS_KINDS["javascript"]
_C_KINDS = {"function", "prototype", "struct", "union", "enum", "typedef", "variable"}
CTAGS_KINDS.update(
    {
        "c": _C_KINDS,
        "cpp": _C_KINDS | {"class"},
        "cpp-fmt": _C_KINDS | {"class"},
        "csharp": {"class", "interface", "struct", "enum", "method"},
        "ruby": {"class", "module", "method", "singletonMethod", "constant"},
        "php": {"class", "interface", "trait", "function"},
        "kotlin": {"class", "interface", "object", "method", "typealias", "constant", "variable"},
        "lua": {"function"},
        "bash": {"function"},
    }
)
# repository, commit, suffixes (unpacked under bench/corpora/repos/<owner>+<name>)
TS_REPOS = {
    "c": ("libuv/libuv", "6179e7af87413396d5853a1c3722c8b5749336c8", (".c", ".h")),
    "cpp": ("google/leveldb", "78a352f47ed6c1e9d750545e9b242289185b87e1", (".cc", ".h")),
    # modern C++: templates, specialisations, operators, export macros (fmt 12.1.0)
    "cpp-fmt": ("fmtlib/fmt", "407c905e45ad75fc29bf0f9bb7c5c2fd3475976f", (".cc", ".h")),
    "csharp": ("JamesNK/Newtonsoft.Json", "09bb545d72969ad7fb4ea07db0d5c34f4fc07877", (".cs",)),
    "ruby": ("sinatra/sinatra", "cb22afd7902b566b6eaba6c4ea89739494a65d12", (".rb",)),
    "php": ("slimphp/Slim", "038fd5713d5a41636fdff0e8dcceedecdd17fc17", (".php",)),
    "kotlin": ("square/okhttp", "1682d9bac8c03dffde2969b0b74d47649d0dbb52", (".kt",)),
    "lua": ("luarocks/luarocks", "2d2cc8eff2f03c23d142f8059146fb241dcf56b5", (".lua",)),
    "bash": ("nvm-sh/nvm", "b17550a0b9ab691439815dfccc8b73e3a59fa103", (".sh",)),
}
# Universal Ctags 5.9 has no Swift or Scala parser: those two are compared against a
# line-pattern oracle (LINE_ORACLE), weaker than a parser, named as such in the report
LINE_REPOS = {
    "swift": ("Alamofire/Alamofire", "7595cbcf59809f9977c5f6378500de2ad73b7ddb", (".swift",)),
    "scala": ("typelevel/cats", "7f2dce5162074c0a0ebc597b89b6cd25e5fe0536", (".scala",)),
}
TS_REPOS.update(LINE_REPOS)
REPOS = CORPORA / "repos"
FUNCTION_KINDS = {"function", "member", "method", "func", "getter", "setter", "generator"}
# ctags kinds that are only counted at module level (no scope)
TOP_ONLY = {"constant", "variable", "const", "var"}
NESTED_SCOPES = {"function", "method", "member", "func", "getter", "setter", "generator", "local"}
OUR_KINDS = {
    "python": {"class", "function", "method"},
    "python-vars": {"variable"},
    "go": {"function", "method", "struct", "interface", "type", "const", "variable"},
    "rust": {"function", "method", "struct", "enum", "trait", "impl", "type", "variable"},
    "java": {"class", "interface", "enum", "method"},
    "typescript": {
        "class",
        "function",
        "method",
        "interface",
        "type",
        "enum",
        "const",
        "variable",
    },
    "javascript": {"class", "function", "method", "const", "variable"},
}
OUR_KINDS["js-esm"] = OUR_KINDS["javascript"]
_ALL_OURS = {"class", "function", "method", "interface", "struct", "enum", "trait", "type",
             "const", "variable", "impl"}  # fmt: skip
OUR_KINDS.update({lang: _ALL_OURS for lang in TS_REPOS})
OUR_KINDS.update({lang: _ALL_OURS - {"variable", "const"} for lang in LINE_REPOS})
OUR_KINDS["ts-tsc"] = OUR_KINDS["typescript"]
OUR_KINDS["js-tsc"] = OUR_KINDS["javascript"]
OUR_KINDS["js-esm-tsc"] = OUR_KINDS["javascript"]
OUR_KINDS["dts-tsc"] = OUR_KINDS["typescript"]
TSC = CORPORA / "node" / "node_modules" / "typescript"
CTAGS_LANG = {
    "python": "Python",
    "python-vars": "Python",
    "go": "Go",
    "rust": "Rust",
    "java": "Java",
    "typescript": "TypeScript",
    "javascript": "JavaScript",
    "js-esm": "JavaScript",
    "c": "C",
    "cpp": "C++",
    "cpp-fmt": "C++",
    "csharp": "C#",
    "ruby": "Ruby",
    "php": "PHP",
    "kotlin": "Kotlin",
    "lua": "Lua",
    "bash": "Sh",
}
CTAGS_EXTRA = {
    "c": ["--kinds-C=+p", "--langmap=C:.c.h"],
    "cpp": ["--kinds-C++=+p", "--langmap=C++:.cc.h"],
    "cpp-fmt": ["--kinds-C++=+p", "--langmap=C++:.cc.h"],
}
SUFFIXES = {
    "python": (".py",),
    "python-vars": (".py",),
    "go": (".go",),
    "rust": (".rs",),
    "java": (".java",),
    "typescript": (".ts", ".tsx"),
    "javascript": (".js",),
    "js-esm": (".js",),
    "ts-tsc": (".ts", ".tsx"),
    "js-tsc": (".js",),
    "js-esm-tsc": (".js",),
    "dts-tsc": (".d.ts",),
    **{lang: spec[2] for lang, spec in TS_REPOS.items()},
}

DJANGO = CORPORA / "Django-5.1.4"
NPM_TS = {
    "rxjs@7.8.1": "rxjs-7.8.1/package/src",
    "@trpc/server@10.45.2": "trpc-server-10.45.2/package/src",
    "@tanstack/query-core@5.59.0": "tanstack-query-core-5.59.0/package/src",
}
NPM_JS = {
    "webpack@5.96.1": "webpack-5.96.1/package/lib",
    "express@4.21.1": "express-4.21.1/package/lib",
}
NPM_ESM = {  # JavaScript as ES modules (import/export), not CommonJS
    "svelte@4.2.19": "svelte-4.2.19/package/src",
    "preact@10.24.3": "preact-10.24.3/package/src",
}
NPM_DTS_ONLY = {  # packed for their .d.ts files (dts-tsc covers every package's)
    "@angular/core@17.3.12": "angular-core-17.3.12/package",
    "vue@3.4.38": "vue-3.4.38/package",
    "zod@3.23.8": "zod-3.23.8/package",
}
NPM = {**NPM_TS, **NPM_JS, **NPM_ESM, **NPM_DTS_ONLY}
RUST_CRATES = {"regex", "serde", "tokio", "hashbrown", "rayon", "indexmap", "memchr"}
DEBIAN = {
    "go": (
        ["golang-golang-x-tools-dev", "golang-github-spf13-cobra-dev"],
        [
            "/usr/share/gocode/src/golang.org/x/tools",
            "/usr/share/gocode/src/github.com/spf13/cobra",
        ],
    ),
    "rust": (["librust-regex-dev", "librust-serde-dev", "librust-tokio-dev"], []),
    "java": (["openjdk-17-source"], []),
}


def run(cmd: list[str], **kw) -> subprocess.CompletedProcess:
    return subprocess.run(cmd, check=True, **kw)


def prepare_ts() -> dict[str, list[Path]]:
    """The tree-sitter languages' repositories that are there (named when missing)."""
    out = {}
    for lang, (repo, commit, _) in TS_REPOS.items():
        d = REPOS / repo.replace("/", "+")
        if d.is_dir():
            out[lang] = [d]
        else:
            print(f"({lang}: {d} missing: unpack {repo} at {commit} there)", file=sys.stderr)
    return out


def prepare() -> dict[str, list[Path]]:
    CORPORA.mkdir(parents=True, exist_ok=True)
    if not DJANGO.is_dir():
        run(
            [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
             "django==5.1.4", "-d", str(CORPORA)]
        )  # fmt: skip
        run(["tar", "xzf", str(CORPORA / "Django-5.1.4.tar.gz"), "-C", str(CORPORA)])
    ts = CORPORA / "ts"
    ts.mkdir(exist_ok=True)
    for spec, sub in NPM.items():
        if not (ts / sub).is_dir() and not (ts / sub).parent.is_dir():
            out = run(["npm", "pack", "--silent", spec], cwd=ts, capture_output=True, text=True)
            tgz = out.stdout.strip().splitlines()[-1]
            dest = ts / tgz[: -len(".tgz")]
            dest.mkdir(exist_ok=True)
            run(["tar", "xzf", str(ts / tgz), "-C", str(dest)])
    if not TSC.is_dir():
        (CORPORA / "node").mkdir(exist_ok=True)
        run(["npm", "install", "--silent", "--no-audit", "--no-fund", "typescript@5.6.3"],
            cwd=CORPORA / "node")  # fmt: skip
    for lang, (packages, _) in DEBIAN.items():
        if not (CORPORA / lang).is_dir():
            missing = [p for p in packages if subprocess.run(
                ["dpkg", "-s", p], capture_output=True).returncode != 0]  # fmt: skip
            if missing:
                run(["apt-get", "install", "-y", "-q", *missing])
            dest = CORPORA / lang
            if lang == "go":
                for src in DEBIAN["go"][1]:
                    shutil.copytree(src, dest / Path(src).name, symlinks=False)
            elif lang == "rust":
                reg = Path("/usr/share/cargo/registry")
                for d in sorted(reg.iterdir()):
                    if d.name.split("-")[0] in RUST_CRATES:
                        shutil.copytree(d, dest / d.name, symlinks=False)
            else:
                with zipfile.ZipFile("/usr/lib/jvm/openjdk-17/lib/src.zip") as z:
                    for name in z.namelist():
                        if name.startswith(
                            ("java.base/java/util/", "java.base/java/io/", "java.base/java/lang/")
                        ) and name.endswith(".java"):
                            z.extract(name, dest)
    return {
        **prepare_ts(),
        "python": [DJANGO],
        "python-vars": [DJANGO],
        "go": [CORPORA / "go"],
        "rust": [CORPORA / "rust"],
        "java": [CORPORA / "java"],
        "typescript": [ts / sub for sub in NPM_TS.values()],
        "javascript": [ts / sub for sub in NPM_JS.values()],
        "js-esm": [ts / sub for sub in NPM_ESM.values()],
        "ts-tsc": [ts / sub for sub in NPM_TS.values()],
        "js-tsc": [ts / sub for sub in NPM_JS.values()],
        "js-esm-tsc": [ts / sub for sub in NPM_ESM.values()],
        "dts-tsc": [ts],  # every declaration file the npm packages ship
    }


def files_for(lang: str, dirs: list[Path]) -> list[Path]:
    out = []
    for d in dirs:
        for dirpath, _, names in os.walk(d):
            for n in names:
                if n.endswith(SUFFIXES[lang]) and (lang == "dts-tsc") == n.endswith(".d.ts"):
                    out.append(Path(dirpath) / n)
    return sorted(out)


def ctags_tags(lang: str, files: list[Path]) -> tuple[dict, float]:
    kinds = CTAGS_KINDS[lang]
    t = time.perf_counter()
    proc = subprocess.run(
        ["ctags", "--output-format=json", "--fields=+nKSe", "--langmap=TypeScript:+.tsx",
         *CTAGS_EXTRA.get(lang, ()), f"--languages={CTAGS_LANG[lang]}", "-L", "-", "-f", "-"],
        input="\n".join(str(f) for f in files), capture_output=True, text=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - t
    tags: dict[str, set] = collections.defaultdict(set)
    parsed = []
    # (line, end) of every function-like tag per file: a tag strictly inside one is local
    bodies: dict[str, list] = collections.defaultdict(list)
    for line in proc.stdout.splitlines():
        try:
            tag = json.loads(line)
        except ValueError:
            continue
        if tag.get("_type") != "tag":
            continue
        parsed.append(tag)
        if tag.get("kind") in FUNCTION_KINDS and tag.get("end"):
            bodies[tag["path"]].append((tag["line"], tag["end"]))
    # full names of function-like tags: a tag whose scope path passes through one is local
    # (ctags gives no "end" for Rust, so the line ranges above do not catch those)
    functions: dict[str, set] = collections.defaultdict(set)
    for tag in parsed:
        if tag.get("kind") in FUNCTION_KINDS:
            scope = (tag.get("scope") or "").replace("::", ".")
            functions[tag["path"]].add(f"{scope}.{tag['name']}" if scope else tag["name"])
    lines = SourceLines()
    for tag in parsed:
        if tag.get("kind") not in kinds:
            continue
        if lang in CTAGS_JS:
            text = lines.get(tag["path"], tag["line"])
            reason = js_junk(tag, text)
            if reason is not None:
                JUNK[lang][reason] += 1
                continue
            if tag["name"] == "exports" and tag.get("scope") == "module":
                # module.exports = function () {...}: what we call module.exports
                tags[tag["path"]].add(("module.exports", tag["line"], tag["kind"]))
                continue
            if member_assignment(tag, text):  # X.m = function at the top: not a local
                tags[tag["path"]].add((tag["name"], tag["line"], tag["kind"]))
                continue
        scope = (tag.get("scope") or "").replace("::", ".")
        if scope:
            parts = scope.split(".")
            fns = functions[tag["path"]]
            if any(".".join(parts[:i]) in fns for i in range(1, len(parts) + 1)):
                continue
        if lang != "go" and any(a < tag["line"] <= b for a, b in bodies[tag["path"]]):
            continue
        if lang in ("c", "cpp", "cpp-fmt"):
            if tag["name"].startswith("__anon"):
                continue  # ctags' made-up name for an anonymous struct/enum
            tag["name"] = tag["name"].replace(" ", "")  # "operator =" is operator=
            if tag["name"] in ("offsetof", "sizeof", "alignof"):
                continue  # STATIC_ASSERT(offsetof(...)) read as a prototype
            text = lines.get(tag["path"], tag["line"])
            if tag["kind"] == "prototype" and _MACRO_CALL.match(text):
                # FMT_TYPE_CONSTANT(int, int_type); -- a macro called, not a prototype
                # (ctags 5.9 names it after the macro)
                JUNK[lang]["macro calls read as prototypes"] += 1
                continue
            m = _MACRO_DEFINED.match(text)
            if m and lang == "c" and m.group(1) == tag["name"] and tag["kind"] == "function":
                # TEST_IMPL(fs_access) {...}: ctags names the function after the macro,
                # we after what it defines
                tag["name"] = m.group(2)
        if lang == "lua":
            if tag["line"] in lua_nested(tag["path"]):
                continue  # a function inside a function: ctags 5.9 keeps no scope in Lua
            tag["name"] = re.split(r"[.:]", tag["name"])[-1]  # M.f, M:g: the field's name
        if lang == "kotlin":
            if tag["name"] == "<lambda>":
                continue  # ctags' made-up name for a lambda
            if tag["line"] in kotlin_nested(tag["path"]):
                continue  # a local of a function: ctags 5.9 keeps no scope for it
            reason = kotlin_junk(tag, lines.get(tag["path"], tag["line"]))
            if reason is not None:
                JUNK[lang][reason] += 1
                continue
        if lang == "go" and tag["name"] == "_":
            continue  # the blank identifier defines nothing
        if tag.get("scopeKind") in NESTED_SCOPES:
            continue
        if tag["kind"] in TOP_ONLY and tag.get("scopeKind") not in (None, "package"):
            continue
        if lang == "python-vars" and not (tag.get("scopeKind") is None and tag["name"].isupper()):
            continue
        tags[tag["path"]].add((tag["name"], tag["line"], tag["kind"]))
    return tags, elapsed


# --- Universal Ctags 5.9's own junk in JavaScript and TypeScript -------------------------

CTAGS_JS = ("typescript", "javascript", "js-esm")
_MACRO_CALL = re.compile(r"\s*[A-Z_][A-Z0-9_]*\s*\(.*\)\s*;")
_MACRO_DEFINED = re.compile(r"([A-Z_][A-Z0-9_]*)\(\s*(\w+)\s*[,)]")
JUNK: dict[str, collections.Counter] = collections.defaultdict(collections.Counter)
_IMPORT_LINE = re.compile(r"\s*(?:import\b|export\s*(?:type\s*)?\{|export\s*\*)")
_REQUIRE_BINDING = re.compile(r"\s*(?:var|let|const)\s.*=\s*require\s*\(")
_MEMBER_ASSIGNMENT = re.compile(r"(?P<scope>[\w$.]+?)(?:\.prototype)?\.(?P<name>[\w$]+)\s*=[^=]")
# X.y = {, y = {, y: {  (object literals, which ctags 5.9 reports as classes)
_OBJECT_LITERAL = re.compile(
    r"""\s*(?:[\w$.]+(?:\[[^\]]*\])?\s*=|(?:[\w$]+|"[^"]*"|'[^']*')\s*:)\s*\{"""
)
# X.Y = class Z, module.exports = class Z: ctags also reports a class named Y (exports)
_CLASS_ASSIGNMENT = re.compile(r"\s*[\w$.]+\s*=\s*class\s+(?P<cls>[\w$]+)")
_NAMED_EXPORT = re.compile(r"\s*module\.exports\s*=\s*(?:async\s+)?function\s*\*?\s*[\w$]")
# words ctags 5.9 reads as names: 'type A = B extends {' gives a type alias "extends"
_NOT_NAMES = frozenset(("extends", "new", "symbol", "keyof", "typeof", "infer"))


class SourceLines:
    """A file's lines, read once."""

    def __init__(self) -> None:
        self.files: dict[str, list[str]] = {}

    def get(self, path: str, line: int) -> str:
        lines = self.files.get(path)
        if lines is None:
            text = Path(path).read_bytes().decode("utf-8", "replace")
            lines = self.files[path] = text.split("\n")
        return lines[line - 1] if 0 < line <= len(lines) else ""


_LUA_TOKENS = re.compile(
    r"--\[(=*)\[.*?\]\1\]|--[^\n]*|\[(=*)\[.*?\]\2\]|\"(?:\\.|[^\"\\\n])*\"|'(?:\\.|[^'\\\n])*'"
    r"|\b(function|if|do|repeat|end|until)\b|\n",
    re.S,
)
_LUA_NESTED: dict[str, set] = {}


def lua_nested(path: str) -> set[int]:
    """Lines of a Lua file that start inside a function body (an independent block
    count: function/if/do/repeat open, end/until close; comments and strings skipped)."""
    if path in _LUA_NESTED:
        return _LUA_NESTED[path]
    text = Path(path).read_bytes().decode("utf-8", "replace")
    out: set[int] = set()
    stack: list[str] = []
    line = 1
    depth_f = 0
    for m in _LUA_TOKENS.finditer(text):
        tok = m.group(0)
        if tok == "\n":
            line += 1
            if depth_f:
                out.add(line)
            continue
        word = m.group(3)
        if word is None:
            line += tok.count("\n")
            continue
        if word in ("function", "if", "do", "repeat"):
            stack.append(word)
            depth_f += word == "function"
        elif stack:
            depth_f -= stack.pop() == "function"
    # a line whose function opened on it is not inside it
    _LUA_NESTED[path] = out
    return out


_KT_TOKENS = re.compile(
    r'/\*.*?\*/|//[^\n]*|"""(?:.|\n)*?"""|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\''
    r"|\b(?:fun|func|def|init|val|var)\b|[{}=()\n]",
    re.S,
)
_KT_NESTED: dict[str, set] = {}


def kotlin_nested(path: str) -> set[int]:
    return brace_nested(path, "fun")


_KT_BLANK = re.compile(
    r'/\*.*?\*/|//[^\n]*|"""(?:.|\n)*?"""|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'', re.S
)
_KT_DEPTH: dict[str, tuple] = {}
_KT_BACKTICK_FUN = re.compile(
    r"\s*(?:@[\w.:]+(?:\([^)]*\))?\s+)*(?:[a-z]+\s+)*fun\s+"
    r"(?:<[^>]*>\s*)?(?:[\w.]+\.)?(`[^`]+`)"
)
# ctags 5.9 names a backticked function garbage bytes, or drops it, differently from run
# to run: those are left out of both sides (ours counted in BACKTICKED_OURS)
BACKTICKED = "backticked function (left out of both sides: ctags reads garbage or nothing)"
BACKTICKED_OURS = collections.Counter()


def kotlin_depth(path: str, line: int, col: int) -> int:
    """How many braces and parentheses are open at LINE:COL of a Kotlin file (comments
    and strings skipped): 0 at the file's level."""
    if path not in _KT_DEPTH:
        text = Path(path).read_bytes().decode("utf-8", "replace")
        blank = _KT_BLANK.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), text)
        rows = blank.split("\n")
        starts = []
        depth = 0
        for row in rows:
            starts.append(depth)
            depth += row.count("{") + row.count("(") - row.count("}") - row.count(")")
        _KT_DEPTH[path] = (rows, starts)
    rows, starts = _KT_DEPTH[path]
    if not 0 < line <= len(rows):
        return 0
    head = rows[line - 1][:col]
    return starts[line - 1] + head.count("{") + head.count("(") - head.count("}") - head.count(")")


def kotlin_junk(tag: dict, text: str) -> str | None:
    """Why a Universal Ctags 5.9 Kotlin tag is not what it says (None when it may be):
    it gives a class's properties (in its body or its constructor) and the locals of an
    ``init`` block or a getter no scope or the package's, so they look like file-level
    ones, and it reads a backticked function name (``fun `decode tag and length`()``) as
    garbage bytes, or drops it, differently from run to run (those are left out of both
    sides: see ``ours``)."""
    if tag["kind"] in TOP_ONLY and tag.get("scopeKind") in (None, "package"):
        m = re.search(r"\b(?:val|var)\s+`?" + re.escape(tag["name"]) + r"\b", text)
        if kotlin_depth(tag["path"], tag["line"], m.start() if m else 0) > 0:
            return "property or local given the file's scope (not at file level)"
    if _KT_BACKTICK_FUN.match(text):
        return BACKTICKED
    return None


def brace_nested(path: str, fun: str) -> set[int]:
    """Lines of a file inside a function's braces (an independent count: the keyword FUN
    then the first ``{`` outside parentheses opens a body, unless an ``=`` comes first)."""
    key = f"{fun}:{path}"
    if key in _KT_NESTED:
        return _KT_NESTED[key]
    text = Path(path).read_bytes().decode("utf-8", "replace")
    out: set[int] = set()
    stack: list[bool] = []
    pending = False
    parens = 0
    line = 1
    for m in _KT_TOKENS.finditer(text):
        tok = m.group(0)
        if tok == "\n":
            line += 1
            if any(stack):
                out.add(line)
            if pending and fun == "def" and parens <= 0:
                # Scala: a definition whose line does not end open has no braced body
                last = text[max(0, m.start() - 80) : m.start()].rstrip()[-1:]
                pending = last in ("=", "{", "(", ",", ":")
        elif tok in ("fun", "func", "def", "init", "val", "var"):
            # a function's body, or (Scala) a val's: an anonymous class's members there
            # are not the file's definitions
            if tok == fun or (fun, tok) in (("func", "init"), ("def", "val"), ("def", "var")):
                pending, parens = True, 0
        elif tok == "(":
            parens += 1
        elif tok == ")":
            parens -= 1
        elif tok == "=" and pending and parens <= 0 and fun != "def":
            pending = False  # Kotlin: fun f() = expr, no braced body
        elif tok == "{":
            stack.append(pending and parens <= 0)
            pending = False
        elif tok == "}":
            if stack:
                stack.pop()
        else:
            line += tok.count("\n")
    _KT_NESTED[key] = out
    return out


def js_junk(tag: dict, text: str) -> str | None:
    """Why a Universal Ctags 5.9 JavaScript/TypeScript tag is not a definition (None when it
    may be one). Its parsers report anonymous callbacks under made-up names, import and
    export specifiers (``import { type X }``) as type aliases, locals of functions and
    methods as module-level constants (it keeps no scope for them in TypeScript, and loses
    it in JavaScript after a method it did not recognise, such as one named ``get``), a
    ``module.exports = class X`` a second time as a class named ``exports``, construct
    signatures as methods named ``new``, and keywords as names. A require binding is an
    import by our definition (see ctxtools/source/scan/js.py), so it is left out too."""
    name = tag["name"]
    scope = tag.get("scope") or ""
    if name.startswith("AnonymousFunction") or "AnonymousFunction" in scope:
        return "anonymous function"
    if _IMPORT_LINE.match(text):
        return "import/export specifier"
    if name in _NOT_NAMES:
        return "keyword read as a name"
    if tag["kind"] == "class" and _OBJECT_LITERAL.match(text):
        return "object literal read as a class"
    m = _MEMBER_ASSIGNMENT.match(text)
    if m is not None and name == m.group("scope").split(".")[0] != m.group("name"):
        return "member assignment named after its object"  # X.prototype.m = f(...)
    if name == "exports" and scope == "module" and _NAMED_EXPORT.match(text):
        return "class named after its assignment target"  # module.exports = function f
    if tag["kind"] == "class":
        m = _CLASS_ASSIGNMENT.match(text)
        if m is not None and name != m.group("cls"):
            return "class named after its assignment target"  # module.exports = class X
    if not scope and text[:1] in (" ", "\t"):
        return "local reported at module level"
    if tag["kind"] in TOP_ONLY and _REQUIRE_BINDING.match(text):
        return "require binding (an import)"
    return None


def member_assignment(tag: dict, text: str) -> bool:
    """Whether the tag is ``X.m = ...`` or ``X.prototype.m = ...`` at the start of a line:
    a member defined at the top level, whatever scope kind ctags gives ``X``."""
    m = _MEMBER_ASSIGNMENT.match(text)
    return (
        m is not None
        and m.group("name") == tag["name"]
        and (tag.get("scope") or "") in (m.group("scope"), m.group("scope") + ".prototype")
    )


def overload_signatures(definitions: list, text: str) -> set[int]:
    """Indexes of TypeScript overload signatures among our definitions that ctags does not
    report: of a run of same-named functions or methods (same scope) made of signatures
    ending with ';' and an implementation with a body, ctags reports only the first."""
    lines = text.split("\n")

    def bodiless(d) -> bool:
        end = d.end_line or d.line
        return 0 < end <= len(lines) and lines[end - 1].rstrip().endswith(";")

    out: set[int] = set()
    i = 0
    n = len(definitions)
    while i < n:
        d = definitions[i]
        j = i + 1
        while (
            j < n
            and d.kind in ("function", "method")
            and (definitions[j].name, definitions[j].scope) == (d.name, d.scope)
        ):
            j += 1
        run = definitions[i:j]
        if len(run) > 1 and all(map(bodiless, run[:-1])) and not bodiless(run[-1]):
            out.update(range(i + 1, j))
        i = j
    return out


CONFIRMED_BY = {
    "js": "the TypeScript compiler's parse",
    "csharp": "their source line declaring that name",
}
DECLARATION_LINE = {
    "csharp": re.compile(
        r"\s*(?:\[[^\]]*\]\s*)*(?:(?:public|private|protected|internal|static|virtual"
        r"|override|abstract|sealed|async|extern|unsafe|new|partial|readonly|ref)\s+)*"
        r"(?:(?:class|struct|interface|enum|record)\s+(?P<type>\w+)"
        # operators, named as ctags names them: "operator ==", "operator JToken"
        r"|(?:implicit|explicit)\s+operator\s+(?P<conv>[^(]*?)\s*\("
        r"|[\w<>\[\]?,.\s]*?\boperator\s*(?P<op>true|false|[^\w\s(][^\s(]*)\s*\("
        r"|[\w<>\[\]?,.\s]*?\b(?P<name>\w+)\s*(?:<[^()]*>)?\s*\()"
    )
}


def declares(text: str, name: str, pattern: re.Pattern) -> bool:
    m = pattern.match(text)
    if m is None:
        return False
    groups = m.groupdict()
    if groups.get("conv") or groups.get("op"):
        return name == "operator " + (groups.get("conv") or groups.get("op"))
    return name in (groups.get("type"), groups.get("name"))


_SWIFT_MODS = (
    r"(?:(?:public|private|fileprivate|internal|open|final|static|class|override|mutating"
    r"|nonmutating|convenience|required|indirect|dynamic|optional|nonisolated|package"
    r"|(?:private|fileprivate|internal|public)\(set\))\s+)*"
)
_SCALA_MODS = (
    r"(?:(?:private|protected)(?:\[[\w.]+\])?\s+|(?:final|sealed|abstract|implicit|override"
    r"|lazy|case|inline|transparent|open|infix|opaque)\s+)*"
)
LINE_ORACLE = {
    "swift": (
        re.compile(
            r"\s*(?:@\w+(?:\([^)]*\))?\s+)*"
            + _SWIFT_MODS
            + r"(func|class|struct|enum|protocol|extension|actor|typealias|init)\b"
            r"\s*([\w.]+|[^\s(<]+)?"
        ),  # fmt: skip
        "func",
    ),
    "scala": (
        re.compile(
            r"\s*(?:@\w+(?:\([^)]*\))?\s+)*"
            + _SCALA_MODS
            + r"(def|class|object|trait|enum|type|package\s+object)\s+"
            r"(`[^`]+`|[\w$]+(?:_[^\s\w\[(:`]+)?|[^\s\w\[(:`]+)"
        ),  # fmt: skip
        "def",
    ),
}


_SCALA_TOKENS = re.compile(
    r'/\*.*?\*/|//[^\n]*|"""(?:.|\n)*?"""|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])\''
    r"|\b(?:class|object|trait|enum|given|extension|def|val|var|type|new)\b"
    r"|(?<![=<>!:])=(?![>=])|[{}()\[\]\n]",
    re.S,
)


def scala_nested(path: str) -> set[int]:
    """Lines of a Scala file inside code braces: every ``{`` opens code (a function's or a
    val's body, a block passed to a call such as a test suite's ``test("...") {``, an
    anonymous class's ``new T {``, a refinement type) except the template body of a
    class, object, trait, enum, given or extension header; comments and strings skipped."""
    text = Path(path).read_bytes().decode("utf-8", "replace")
    out: set[int] = set()
    stack: list[bool] = []
    header = False  # a template header is open: its "{" holds members
    parens = 0
    line = 1
    for m in _SCALA_TOKENS.finditer(text):
        tok = m.group(0)
        if tok == "\n":
            line += 1
            if any(stack):
                out.add(line)
        elif tok in ("class", "object", "trait", "enum", "given", "extension"):
            header, parens = True, 0
        elif tok in ("def", "val", "var", "type", "new"):
            header = header and parens > 0  # class A(val x: Int): still the header
        elif tok in ("(", "["):
            parens += 1
        elif tok in (")", "]"):
            parens -= 1
        elif tok == "=":
            header = header and parens > 0  # given x: T = ...: code
        elif tok == "{":
            stack.append(not header)
            header = False
        elif tok == "}":
            if stack:
                stack.pop()
        else:
            line += tok.count("\n")
    return out


def line_tags(lang: str, files: list[Path]) -> tuple[dict, float]:
    """The line-pattern oracle: a declaration keyword (after attributes and modifiers)
    and a name at the start of a line, not inside a function's braces."""
    pattern, fun = LINE_ORACLE[lang]
    t = time.perf_counter()
    tags: dict[str, set] = collections.defaultdict(set)
    for f in files:
        p = str(f)
        nested = scala_nested(p) if lang == "scala" else brace_nested(p, fun)
        text = f.read_bytes().decode("utf-8", "replace")
        for n, line in enumerate(text.split("\n"), 1):
            m = pattern.match(line)
            if m is None or n in nested:
                continue
            name = m.group(2) or ""
            if m.group(1) == "init":
                name = "init"
            elif m.group(1) == "extension" or lang == "swift":
                name = name.rsplit(".", 1)[-1]
            if name:
                tags[p].add((name.strip("`") if lang == "scala" else name, n, m.group(1)))
    return tags, time.perf_counter() - t


def tsc_tags(lang: str, files: list[Path]) -> tuple[dict, float]:
    t = time.perf_counter()
    proc = subprocess.run(
        ["node", str(HERE / "bench_scan_tsc_oracle.js"), str(TSC)],
        input="\n".join(str(f) for f in files), capture_output=True, text=True, check=True,
    )  # fmt: skip
    elapsed = time.perf_counter() - t
    tags: dict[str, set] = collections.defaultdict(set)
    for line in proc.stdout.splitlines():
        if line.strip():
            tag = json.loads(line)
            tags[tag["path"]].add((tag["name"], tag["line"], tag["kind"]))
    return tags, elapsed


REPEAT = 3


def ours(lang: str, files: list[Path]) -> tuple[dict, float, int]:
    kinds = OUR_KINDS[lang]
    texts = [(str(f), f.read_bytes().decode("utf-8", errors="replace")) for f in files]
    nbytes = sum(len(t) for _, t in texts)
    elapsed = float("inf")
    for _ in range(REPEAT):  # best of REPEAT: the machine is shared
        t = time.perf_counter()
        results = [(p, scan_source(p, text)) for p, text in texts]
        elapsed = min(elapsed, time.perf_counter() - t)
    defs: dict[str, set] = {}
    texts_by_path = dict(texts)
    for p, r in results:
        s = set()
        skip = overload_signatures(r.definitions, texts_by_path[p]) if lang in CTAGS_JS else ()
        for i, d in enumerate(r.definitions):
            if d.kind not in kinds or i in skip:
                continue
            if lang == "python-vars" and not d.name.isupper():
                continue
            if lang == "kotlin" and d.name.startswith("`"):
                BACKTICKED_OURS[lang] += 1  # see BACKTICKED
                continue
            name = d.name
            if lang in ("c", "cpp", "cpp-fmt"):
                name = name.replace(" ", "")  # operator bool, as ctags' names are compared
            s.add((name, d.line, d.kind))
        defs[p] = s
    return defs, elapsed, nbytes


def compare(lang: str, files: list[Path], show: int) -> dict:
    if lang.endswith("-tsc"):
        theirs, ctags_time = tsc_tags(lang, files)
    elif lang in LINE_ORACLE:
        theirs, ctags_time = line_tags(lang, files)
    else:
        theirs, ctags_time = ctags_tags(lang, files)
    mine, my_time, nbytes = ours(lang, files)
    n_theirs = n_mine = matched = kind_agree = 0
    missed: list = []
    extra: list = []
    for f in files:
        p = str(f)
        t = {(n, line): k for n, line, k in theirs.get(p, ())}
        m = {(n, line): k for n, line, k in mine.get(p, ())}
        n_theirs += len(t)
        n_mine += len(m)
        both = t.keys() & m.keys()
        matched += len(both)
        missed.extend((p, key, t[key]) for key in sorted(t.keys() - m.keys()))
        extra.extend((p, key, m[key]) for key in sorted(m.keys() - t.keys()))
    row = {
        "lang": lang,
        "files": len(files),
        "MB": nbytes / 1e6,
        "ctags": n_theirs,
        "ours": n_mine,
        "matched": matched,
        "recall": matched / n_theirs if n_theirs else 1.0,
        "precision": matched / n_mine if n_mine else 1.0,
        "files_s": len(files) / my_time if my_time else 0.0,
        "ctags_s": len(files) / ctags_time if ctags_time else 0.0,
    }
    if lang in CTAGS_JS:
        # What the compiler says of the disagreements: an extra of ours that its parse
        # confirms is a definition ctags 5.9 left out (a static generic method, a method
        # named get, an arrow function whose parameter is named set...).
        compiler, _ = tsc_tags(lang, files)
        confirmed = {(p, n, ln) for p, names in compiler.items() for n, ln, _k in names}
        row["extra"] = len(extra)
        row["extra_confirmed"] = sum((p, n, ln) in confirmed for p, (n, ln), _k in extra)
        row["missed"] = len(missed)
    if lang in DECLARATION_LINE:
        # ctags 5.9's C# parser loses methods after nullable types (``object?``), generic
        # constraints and attributes; an extra of ours whose line declares that name (a
        # textual check: modifiers, a type, the name, "(") is counted as confirmed
        lines = SourceLines()
        row["extra"] = len(extra)
        row["missed"] = len(missed)
        row["extra_confirmed"] = sum(
            declares(lines.get(p, ln), n, DECLARATION_LINE[lang]) for p, (n, ln), _k in extra
        )
    if show:
        print(f"--- {lang}: missed (ctags has, we do not): {len(missed)}")
        for item in missed[:show]:
            print("   ", item)
        print(f"--- {lang}: extra (we have, ctags does not): {len(extra)}")
        for item in extra[:show]:
            print("   ", item)
    del kind_agree
    return row


# The six hand-scanned languages' grammar wheels, for --parity (not dependencies)
PARITY_GRAMMARS = {
    "python": ("tree_sitter_python", "language"),
    "go": ("tree_sitter_go", "language"),
    "rust": ("tree_sitter_rust", "language"),
    "java": ("tree_sitter_java", "language"),
    "typescript": ("tree_sitter_typescript", "language_tsx"),
    "javascript": ("tree_sitter_javascript", "language"),
}


def parity(lang: str, files: list[Path]) -> dict | None:
    """Hand scanner (the whole scan: definitions and references) against tree-sitter's
    parse alone -- a lower bound of any tree-sitter backend, which must walk the tree and
    count references on top -- best of REPEAT, CPU seconds."""
    import importlib

    try:
        import tree_sitter as ts

        module, func = PARITY_GRAMMARS[lang]
        parser = ts.Parser(ts.Language(getattr(importlib.import_module(module), func)()))
    except ImportError:
        print(f"({lang}: pip install {PARITY_GRAMMARS[lang][0].replace('_', '-')} for --parity)")
        return None
    texts = [(str(f), f.read_bytes().decode("utf-8", errors="replace")) for f in files]
    data = [t.encode() for _, t in texts]

    def best(fn) -> float:
        out = float("inf")
        for _ in range(REPEAT):
            t = time.process_time()
            fn()
            out = min(out, time.process_time() - t)
        return out

    hand = best(lambda: [scan_source(p, t) for p, t in texts])
    parse = best(lambda: [parser.parse(d) for d in data])
    return {"lang": lang, "files": len(files), "MB": sum(map(len, data)) / 1e6,
            "hand": hand, "parse": parse}  # fmt: skip


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--show", type=int, default=0, help="print N missed/extra examples")
    ap.add_argument("--lang", action="append", help="only these languages")
    ap.add_argument(
        "--parity",
        action="store_true",
        help="the six hand scanners' speed against tree-sitter's parse alone",
    )
    args = ap.parse_args()
    if args.parity:
        corpora = prepare()
        print(f"{'language':<12}{'files':>7}{'MB':>7}{'hand s':>9}{'ts parse s':>11}{'ratio':>7}")
        for lang in PARITY_GRAMMARS:
            if args.lang and lang not in args.lang:
                continue
            r = parity(lang, files_for(lang, corpora[lang]))
            if r is not None:
                print(f"{lang:<12}{r['files']:>7}{r['MB']:>7.1f}{r['hand']:>9.2f}"
                      f"{r['parse']:>11.2f}{r['parse'] / r['hand']:>7.2f}")  # fmt: skip
        return
    corpora = prepare_ts() if args.lang and set(args.lang) <= set(TS_REPOS) else prepare()
    rows = []
    for lang, dirs in corpora.items():
        if args.lang and lang not in args.lang:
            continue
        files = files_for(lang, dirs)
        rows.append(compare(lang, files, args.show))
    print(
        f"{'language':<12}{'files':>7}{'MB':>7}{'ctags':>8}{'ours':>8}{'match':>8}"
        f"{'recall':>8}{'prec':>8}{'files/s':>9}{'oracle f/s':>11}"
    )
    for r in rows:
        print(
            f"{r['lang']:<12}{r['files']:>7}{r['MB']:>7.1f}{r['ctags']:>8}{r['ours']:>8}"
            f"{r['matched']:>8}{r['recall']:>8.1%}{r['precision']:>8.1%}"
            f"{r['files_s']:>9.0f}{r['ctags_s']:>11.0f}"
        )
    for r in rows:
        if "extra" in r:
            print(
                f"{r['lang']}: {r['extra']} definitions ctags lacks, {r['extra_confirmed']} of"
                f" them confirmed by {CONFIRMED_BY.get(r['lang'], CONFIRMED_BY['js'])}"
                f" (precision counting"
                f" those: {(r['matched'] + r['extra_confirmed']) / r['ours']:.1%});"
                f" {r['missed']} ctags tags we lack"
            )
    for lang, n in BACKTICKED_OURS.items():
        print(f"{lang}: {n} backticked functions of ours left out ({BACKTICKED})")
    for lang in sorted(JUNK):
        if JUNK[lang]:
            removed = ", ".join(f"{n} {why}" for why, n in JUNK[lang].most_common())
            print(f"ctags junk removed ({lang}): {removed}")


if __name__ == "__main__":
    main()
