"""The languages the scanners read: one table, one entry a language.

An entry names the files that are the language's -- their EXTENSIONS, the file NAMES that
carry no telling extension (``Rakefile``), the INTERPRETERS a ``#!`` line may name -- and
what reads them: a hand-written scanner of this package (``scanner``: its module and the
function of the text it calls), or a tree-sitter grammar (``grammar``: the wheel's module,
the function that returns the language, the package to install) with the rule table that
walks its trees beside it (``Grammar.rules``: the module of this package whose
``rules(language)`` says what the language declares and where its bodies are).

Adding a language is adding an entry here (and its scanner, or its rules). Nothing is
imported: ``scan`` loads a scanner, ``scan.treesitter`` a grammar, the first time a file
needs it. A ``.h`` header is C's by its extension; ``scan.header_language`` decides by its
content between C, C++ and Objective-C (which no scanner reads).
"""

from __future__ import annotations

from typing import NamedTuple


class Grammar(NamedTuple):
    """A tree-sitter grammar: MODULE's FUNCTION returns the language; PACKAGE is the wheel
    to install; RULES the module of this package whose ``rules(language)`` walks it."""

    module: str
    function: str
    package: str
    rules: str


class Language(NamedTuple):
    """One language: its files (EXTENSIONS, NAMES, INTERPRETERS of a ``#!`` line) and what
    reads them, a hand-written SCANNER (module, function) or a tree-sitter GRAMMAR."""

    name: str
    extensions: tuple[str, ...]
    names: tuple[str, ...] = ()
    interpreters: tuple[str, ...] = ()
    scanner: tuple[str, str] | None = None
    grammar: Grammar | None = None


def _tree_sitter(module: str, rules: str, function: str = "language") -> Grammar:
    return Grammar(module, function, module.replace("_", "-"), rules)


TABLE: tuple[Language, ...] = (
    # the hand-written scanners
    Language(
        "python",
        (".py", ".pyi", ".pyw"),
        interpreters=("python", "python3", "python2"),
        scanner=("python", "scan"),
    ),
    Language("go", (".go",), scanner=("go", "scan")),
    Language(
        "javascript",
        (".js", ".jsx", ".mjs", ".cjs"),
        interpreters=("node", "nodejs"),
        scanner=("js", "scan_javascript"),
    ),
    Language(
        "typescript",
        (".ts", ".tsx", ".mts", ".cts"),
        interpreters=("deno",),
        scanner=("js", "scan_typescript"),
    ),
    Language("rust", (".rs",), scanner=("rust", "scan")),
    Language("java", (".java",), scanner=("java", "scan")),
    # tree-sitter grammars, each with its rule table
    Language("c", (".c", ".h"), grammar=_tree_sitter("tree_sitter_c", "tsrules_c")),
    Language(
        "cpp",
        (".cc", ".cpp", ".cxx", ".c++", ".hh", ".hpp", ".hxx", ".h++", ".ipp", ".tpp", ".inl"),
        grammar=_tree_sitter("tree_sitter_cpp", "tsrules_c"),
    ),
    Language("csharp", (".cs",), grammar=_tree_sitter("tree_sitter_c_sharp", "tsrules_other")),
    Language(
        "ruby",
        (".rb", ".rake", ".gemspec"),
        names=("Rakefile", "Gemfile"),
        interpreters=("ruby",),
        grammar=_tree_sitter("tree_sitter_ruby", "tsrules_other"),
    ),
    Language(
        "php",
        (".php",),
        interpreters=("php",),
        grammar=_tree_sitter("tree_sitter_php", "tsrules_other", "language_php"),
    ),
    Language(
        "kotlin", (".kt", ".kts"), grammar=_tree_sitter("tree_sitter_kotlin", "tsrules_other")
    ),
    Language("swift", (".swift",), grammar=_tree_sitter("tree_sitter_swift", "tsrules_other")),
    Language(
        "scala", (".scala", ".sc"), grammar=_tree_sitter("tree_sitter_scala", "tsrules_other")
    ),
    Language(
        "lua",
        (".lua",),
        interpreters=("lua", "luajit"),
        grammar=_tree_sitter("tree_sitter_lua", "tsrules_other"),
    ),
    Language(
        "bash",
        (".sh", ".bash"),
        names=(".bashrc", ".bash_profile"),
        interpreters=("sh", "bash", "dash", "ksh", "zsh"),
        grammar=_tree_sitter("tree_sitter_bash", "tsrules_other"),
    ),
)

# The table read the ways the scanners ask it.
BY_NAME = {lang.name: lang for lang in TABLE}
EXTENSIONS = {ext: lang.name for lang in TABLE for ext in lang.extensions}
NAMES = {name: lang.name for lang in TABLE for name in lang.names}
INTERPRETERS = {exe: lang.name for lang in TABLE for exe in lang.interpreters}
GRAMMARS = {lang.name: lang.grammar for lang in TABLE if lang.grammar is not None}
TREE_SITTER = frozenset(GRAMMARS)
LANGUAGES = tuple(lang.name for lang in TABLE if lang.scanner is not None)  # hand-written
