"""Which function a diff's hunk touches: the names ``retrieval.history`` reads from
``git show -U0``.

Git names the function a hunk is in on its header line (``@@ -1,2 +1,2 @@ def f(x):``)
by a function-context driver per language (its ``xfuncname``): git's own where it has one,
``DRIVERS`` for the languages it has none for (passed with ``-c``, by the attributes file
``ctxtools/data/history.gitattributes``). ``header_name`` reads the name from the header
line, ``defined_name`` from a changed line that is a definition's first.
"""

from __future__ import annotations

import re

# Function-context drivers for the languages git has none for (its ``xfuncname``: POSIX
# extended expressions, one a line, a ``!`` line a line that is never a function's). Git's
# default takes any line that starts with a letter: for JavaScript and TypeScript that is
# the class around a method, ``export class Foo {``, never the method a hunk is in. Git
# runs them on every line above a hunk up to the first that matches, a minified bundle's
# megabytes long among them, so a match ends at the name (a trailing ``.*`` took 5 s on
# a 16 MB bundle line: glibc keeps the submatch through the whole line). Bounded
# repetitions (``{0,300}``) would cap a line's cost but make every line's dearer: 1.4 s
# against 0.07 s for one babel commit. What is left is linear, about 0.4 us a byte of a
# line the expressions run through (``bench/bench_history_lines.py``), under ``history.TIMEOUT``.
_LEAD = r"^[ \t]*"  # a line's indentation
_S = r"[ \t]+"  # a space between words
_O = r"[ \t]*"  # a space or none
_ID = r"[A-Za-z_$][A-Za-z0-9_$]*"  # a name: in the EREs above and the expressions below
_JS_MODS = (
    f"((public|private|protected|static|readonly|abstract|override|async|get|set){_S})*")
_JS_PARAMS = r"\([^;]*\)"
DRIVERS = {
    "ctxjs": "\n".join((
        f"!{_LEAD}(if|else|for|while|do|switch|catch|return|try|finally|with|throw|new|await"
        f"|yield|case|typeof|delete|void)([ \\t({{;]|$)",
        f"{_LEAD}((export{_S})?(default{_S})?(declare{_S})?(abstract{_S})?(async{_S})?"
        f"(function[ \\t*]+|class{_S}|interface{_S}|enum{_S}|namespace{_S}|type{_S}){_ID})",
        # a function bound to a name: ``const f = (a, b) =>``, ``let g = function``
        f"{_LEAD}((export{_S})?(const|let|var){_S}{_ID}{_O}(:[^=]*)?={_O}(async{_S})?"
        f"(function|\\([^)]*\\){_O}(:[^=]*)?=>|\\([^)]*$|{_ID}{_O}=>))",
        # a method: its name, its parameters, an opening brace (or parameters still open)
        f"{_LEAD}({_JS_MODS}\\*?#?{_ID}{_O}(<[^()]*>)?{_O}{_JS_PARAMS}{_O}"
        f"(:[^;]*)?\\{{{_O}$)",
        f"{_LEAD}({_JS_MODS}\\*?#?{_ID}{_O}(<[^()]*>)?{_O}\\([^;)]*$)",
    )),
    "ctxscala": (
        f"{_LEAD}(((private|protected|override|final|implicit|lazy|abstract|sealed|case|inline"
        f"|transparent|open)(\\[[^]]*\\])?{_S})*(def|class|object|trait|enum|given)"
        f"{_S}{_ID})"),
    "ctxswift": (
        f"{_LEAD}(((public|private|internal|fileprivate|open|static|class|override|final"
        f"|mutating|nonmutating|convenience|required|@[A-Za-z]+){_S})*"
        f"(func{_S}{_ID}|(init|deinit|subscript)[ \\t(<?]"
        f"|(class|struct|enum|protocol|extension|actor){_S}{_ID}))"),
}

# A name followed by its call's parenthesis (a generic's arguments between: ``f<T>(``).
_CALL = re.compile(f"({_ID})" + r"\s*(?:<[^()]*>)?\s*\(")
_KEYWORDS = frozenset({
    "func", "if", "for", "while", "switch", "return", "def", "fn", "function", "catch",
    "sizeof", "elif", "with", "assert", "print", "super", "new", "async", "await", "typeof",
    "fun"})
# A definition's first line: its modifiers, its keyword, its name (Python, Go, Rust, Ruby,
# JavaScript and TypeScript, Kotlin, Scala, Swift, and Java's or C#'s types).
_DEFLINE = re.compile(
    r"^\s*(?:(?:pub(?:\([^)]*\))?|export|default|declare|abstract|public|private|protected"
    r"|internal|static|final|override|open|sealed|data|inline|suspend|async|unsafe|extern"
    r"|virtual|partial|readonly|implicit|lazy|case|mutating|fileprivate)\s+)*"
    r"(?:def|fn|func|function\*?|fun|class|struct|enum|trait|interface|type|object|protocol"
    r"|extension|namespace|module)\s+(?:\([^)]*\)\s*)?(?:self\.)?" f"({_ID})")
# ``const name = (...) =>``, ``let name = function``: a function bound to a name.
_BINDING = re.compile(
    r"^\s*(?:export\s+)?(?:const|let|var|val)\s+" f"({_ID})" r"\s*(?::[^=]*)?="
    r"\s*(?:async\s+)?(?:function|\(|" + _ID + r"\s*=>)")

def defined_name(line: str) -> str | None:
    """The name a line of code defines (``def f``, ``fn f``, ``func (r *T) F``, ``class C``
    ...), if it is a definition's first line."""
    m = _DEFLINE.match(line)
    return m.group(1) if m else None


def header_name(text: str) -> str | None:
    """The function a hunk header's context line defines, else the first it calls."""
    name = defined_name(text)
    if name:
        return name
    m = _BINDING.match(text)
    if m:
        return m.group(1)
    return next((n for n in _CALL.findall(text) if n not in _KEYWORDS), None)
