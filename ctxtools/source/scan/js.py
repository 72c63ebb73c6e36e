"""JavaScript and TypeScript scanner (.js .jsx .mjs .cjs .ts .tsx .mts .cts).

Definitions: classes (abstract, exported, default, declared, decorated) with their methods,
getters/setters, constructors and arrow-function fields; functions (generators, async,
overloads, ``declare``); ``const``/``let``/``var`` at module level (an arrow function or
function expression makes it a function: ``export const f = async (a: number) => ...``);
``X.prototype.m = function`` and ``app.m = function`` (methods scoped to ``X``, ``app``);
``exports.f = ...`` / ``module.exports.f = ...`` with a function value (functions);
``module.exports = function query()`` (the function ``query``; an anonymous one is
``module.exports``); named function expressions handed to a top-level call
(``app.use(function logger() {...})``: the function ``logger``;
``defineGetter(req, 'protocol', function protocol() {...})``: the method ``protocol`` of
``req``); but not ``var x = require("x")`` nor ``const {a, b} = require("x")``: imports,
whose names stay references for the graph;
TypeScript interfaces (with their methods), type aliases and enums; namespaces and
``declare module`` blocks scope what they contain. Comments, strings, template literals
(their ``${}`` code stays code) and regular expression literals are masked first.
"""

from __future__ import annotations

import re

from ctxtools.source.scan.clike import CLikeLanguage, Decl, scan_clike
from ctxtools.source.scan.common import ScanResult, at_word_start, words
from ctxtools.source.scan.mask import C_COMMENTS

_MASTER = re.compile(
    C_COMMENTS
    + r"""
      | (?P<s>'[^'\\\n]*(?:\\.[^'\\\n]*)*(?:'|$)|"[^"\\\n]*(?:\\.[^"\\\n]*)*(?:"|$))
      | (?P<tpl>`)
      | (?P<rx>/)
    """,
    re.S | re.M | re.X,
)
_LEAD = re.compile(r"[/`\"']")  # where a match of _MASTER can start

_DECORATORS = re.compile(r"\s*(?:@[\w$.]+\s*(?:\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)\s*)?)*")
_TOP_MODS = re.compile(
    r"(?:(?:export|default|declare|abstract|async)\s+"
    r"|[\w$]+(?:\.[\w$]+)*\s*=\s*(?=class\b))*"  # module.exports = class X, A.B = class X
)
_ID = r"(?:[^\W\d]|\$)[\w$]*"  # Unicode letters too (Angular: ɵɵdefineDirective)
_TOP = re.compile(
    rf"""(?:
        (?P<class>class)\s+(?P<cname>{_ID})
      | (?P<function>function)\s*\*?\s*(?P<fname>{_ID})
      | (?P<interface>interface)\s+(?P<iname>{_ID})
      | (?P<type>type)\s+(?P<tname>{_ID})\s*(?=[<=])
      | (?:const\s+)?(?P<enum>enum)\s+(?P<ename>{_ID})
      | (?P<ns>namespace|module)\s+(?P<nname>{_ID}(?:\.{_ID})*)
      | (?P<module>module(?=\s*")|global(?=\s*\Z))
      | (?P<var>const|let|var)\s+(?P<vname>{_ID})\s*[!]?\s*
        (?::(?P<vtype>(?:=>|[^=])*))?(?:=(?P<value>.*))?
      | (?P<owner>{_ID}(?:\.{_ID})*)\.(?P<member>{_ID})\s*=(?P<mvalue>[^=>].*)
    )""",
    re.S | re.X,
)
_FUNCTION_VALUE = re.compile(
    rf"""\s*(?:async\s*)?(?:
        \(?\s*function\b
      | (?:<[^=]*?>\s*)?(?:\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)|{_ID})\s*(?::[^=]*?)?=>
    )""",
    re.S | re.X,
)
# A binding whose value is a CommonJS import: require("m"), require("m").x, require("m")(y),
# also as the first of several (var http = require("http"), fresh = require("fresh"))
_REQUIRE = r'require\s*\(\s*"[^"\n]*"\s*\)(?:\s*(?:\.\s*[\w$]+|\((?:[^()]|\([^()]*\))*\)))*'
_REQUIRE_VALUE = re.compile(rf"\s*{_REQUIRE}(?:\s*,\s*{_ID}\s*=\s*{_REQUIRE})*\s*\Z")
# A statement that is a call: callee(...), a.b.c(...)
_CALL_HEAD = re.compile(rf"(?P<callee>{_ID}(?:\s*\.\s*{_ID})*)\s*\(")
# The first two arguments of defineGetter(obj, 'key', ...): an object and a key
_OBJ_KEY = re.compile(rf'\s*(?P<obj>{_ID}(?:\.{_ID})*)\s*,\s*"[^"\n]*"\s*,')
_NAMED_FUNCTION = re.compile(rf"function\s*\*?\s*(?P<name>{_ID})\s*(?:<[^>{{}}]*>\s*)?\(")
_NOT_CALLS = frozenset(
    ("if", "for", "while", "switch", "catch", "with", "return", "typeof", "void", "await",
     "yield", "new", "delete", "throw", "function", "super", "import")
)  # fmt: skip
_CHAINED = re.compile(rf"^\s*(?:{_ID}(?:\.{_ID})*\s*=(?![=>])\s*)+")
_MEMBER_MODS = (
    r"(?:(?:public|private|protected|static|readonly|abstract|override|declare|async"
    r"|accessor|get|set)\s+)*"
)
_MEMBER = re.compile(
    rf"""{_MEMBER_MODS}\*?\s*(?P<name>\#?{_ID})\s*[?!]?\s*(?:
        (?P<call><.*?>\s*\(|\()
      | (?::(?:=>|[^=])*)?=(?P<value>.*)
    )""",
    re.S | re.X,
)
# import ... from "m", import "m", export ... from "m", import("m"), require("m")
_IMPORT = re.compile(r'(?:from|import|require)\s*\(?\s*"( *)"')

KEYWORDS = words(
    """break case catch class const continue debugger default delete do else export extends
    finally for function if import in instanceof new return super switch this throw try
    typeof var void while with yield let static enum await implements package protected
    interface private public null true false undefined async of as from get set type
    declare abstract readonly namespace module keyof infer is any unknown never string
    number boolean symbol object bigint satisfies"""
)


class JavaScript(CLikeLanguage):
    def classify(self, stmt, container, has_body, scope):
        p = _DECORATORS.match(stmt).end()
        start = p
        if container in ("root", "items"):
            p = _TOP_MODS.match(stmt, p).end()
            m = _TOP.match(stmt, p)
            if m is None:
                return _call_functions(stmt, p, start)
            if m.group("class"):
                return [Decl("class", m.group("cname"), m.start("cname"), start, body="members")]
            if m.group("function"):
                return [Decl("function", m.group("fname"), m.start("fname"), start)]
            if m.group("interface"):
                name = m.group("iname")
                return [Decl("interface", name, m.start("iname"), start, body="members")]
            if m.group("type"):
                return [Decl("type", m.group("tname"), m.start("tname"), start, one_line=True)]
            if m.group("enum"):
                return [Decl("enum", m.group("ename"), m.start("ename"), start)]
            if m.group("ns"):
                name = m.group("nname")
                return [Decl("namespace", name, m.start("nname"), start, body="items", emit=False)]
            if m.group("module"):
                return [Decl("namespace", "", m.start("module"), start, body="items", emit=False)]
            if m.group("var"):
                name = m.group("vname")
                value = m.group("value")
                vtype = m.group("vtype")
                if value is not None and _REQUIRE_VALUE.match(value):
                    return []  # an import (var x = require("x")): a use, not a definition
                if (value is not None and _FUNCTION_VALUE.match(value)) or (
                    value is None and vtype is not None and "=>" in vtype
                ):
                    return [Decl("function", name, m.start("vname"), start)]
                kind = "const" if m.group("var") == "const" else "variable"
                return [Decl(kind, name, m.start("vname"), start, one_line=True)]
            if m.group("owner"):
                # CommonJS and prototype style: exports.f = function, module.exports.f =
                # (a) =>, X.prototype.m = function, app.init = function init()
                value = _CHAINED.sub("", m.group("mvalue"), count=1)  # a.b = a.c = function
                if not _FUNCTION_VALUE.match(value):
                    return []
                owner = m.group("owner")
                name = m.group("member")
                if owner == "module" and name == "exports":
                    # module.exports = function query(options): looked up as query
                    at = _ASYNC.match(stmt, m.end("mvalue") - len(value)).end()
                    f = _NAMED_FUNCTION.match(stmt, at)
                    if f is not None:
                        return [Decl("function", f.group("name"), f.start("name"), start)]
                    return [Decl("function", "module.exports", m.start("owner"), start)]
                if owner in ("exports", "module.exports"):
                    return [Decl("function", name, m.start("member"), start)]
                if owner.endswith(".prototype"):
                    owner = owner[: -len(".prototype")]
                return [Decl("method", name, m.start("member"), start, scope=owner)]
            return []
        if container not in ("class", "interface"):
            return []
        m = _MEMBER.match(stmt, p)
        if m is None:
            return []
        name = m.group("name")
        if name == "new" and container == "interface":
            return []  # a construct signature
        if m.group("call") is not None:
            return [Decl("method", name, m.start("name"), start)]
        value = m.group("value")
        if container == "class" and value is not None and _FUNCTION_VALUE.match(value):
            return [Decl("method", name, m.start("name"), start)]
        return []

    def imports(self, masked, text):
        out = []
        for m in _IMPORT.finditer(masked):
            if at_word_start(masked, m.start()):
                out.append(text[m.start(1) : m.end(1)])
        return out


_ASYNC = re.compile(r"\s*(?:async\s+)?")
_PAREN = re.compile(r"[()]")


def _call_functions(stmt: str, p: int, start: int) -> list[Decl]:
    """Named function expressions passed to a call at the top level: a function defined
    on an object by a helper (``defineGetter(req, 'protocol', function protocol() {...})``:
    the method ``protocol`` of ``req``) or handed over by name (``app.use(function
    logger(req, res, next) {...})``: the function ``logger``). Anonymous ones define
    nothing. The signature runs from the call to the function's parameters."""
    m = _CALL_HEAD.match(stmt, p)
    if m is None or m.group("callee") in _NOT_CALLS:
        return []
    open_at = m.end() - 1
    if stmt.find("function", open_at) < 0:
        return []
    close_at = _matching_paren(stmt, open_at)
    k = _OBJ_KEY.match(stmt, open_at + 1)
    if k is not None and k.group("obj") in ("this", "super"):
        k = None  # not an object with a name to look the function up by
    out = []
    for f in _NAMED_FUNCTION.finditer(stmt, open_at + 1, close_at):
        if not at_word_start(stmt, f.start()):
            continue
        body = stmt.find("{}", f.end(), close_at)  # (the body, flattened)
        if body < 0:
            continue
        if k is not None and f.start() >= k.end():
            kind, scope = "method", k.group("obj")
        else:
            kind, scope = "function", None
        name = f.group("name")
        at = f.start("name")
        out.append(Decl(kind, name, at, start, scope=scope, end=body + 2, sig_end=body))
    return out


def _matching_paren(stmt: str, open_at: int) -> int:
    """Offset of the ')' closing the '(' at OPEN_AT (strings are masked: no parentheses
    inside them), or the statement's end."""
    depth = 0
    for m in _PAREN.finditer(stmt, open_at):
        if m.group() == "(":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return m.start()
    return len(stmt)


_JS = JavaScript("javascript", _MASTER, KEYWORDS, asi=True, lead=_LEAD)
_TS = JavaScript("typescript", _MASTER, KEYWORDS, asi=True, lead=_LEAD)


def scan_javascript(text: str) -> ScanResult:
    return scan_clike(text, _JS)


def scan_typescript(text: str) -> ScanResult:
    return scan_clike(text, _TS)
