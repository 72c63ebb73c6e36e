"""scan.languages: the one table of languages the scanners read, and the dispatch by it."""

from __future__ import annotations

import importlib
from collections import Counter

import pytest

from ctxtools.source import scan
from ctxtools.source.scan import languages
from ctxtools.source.scan.languages import TABLE


def test_each_language_is_read_by_one_scanner_or_one_grammar():
    for lang in TABLE:
        assert (lang.scanner is None) != (lang.grammar is None), lang.name
        assert lang.extensions or lang.names, lang.name


def test_no_extension_file_name_or_interpreter_belongs_to_two_languages():
    """The look-ups are dicts made from the table: a second claim would silently win."""
    for field in ("extensions", "names", "interpreters"):
        claims = Counter(x for lang in TABLE for x in getattr(lang, field))
        assert [x for x, n in claims.items() if n > 1] == [], field
    assert len({lang.name for lang in TABLE}) == len(TABLE)
    assert all(ext == ext.lower() and ext.startswith(".") for ext in languages.EXTENSIONS)


def test_every_scanner_and_rule_table_the_table_names_exists():
    for lang in TABLE:
        if lang.scanner is not None:
            module, function = lang.scanner
            assert callable(getattr(importlib.import_module(f"{scan.__name__}.{module}"), function))
        else:
            rules = importlib.import_module(f"{scan.__name__}.{lang.grammar.rules}")
            assert rules.rules(lang.name) is not None, lang.name


@pytest.mark.parametrize("lang", TABLE, ids=[lang.name for lang in TABLE])
def test_the_dispatch_goes_by_the_table(lang):
    """A file of each extension and name is that language's, and a hand-written
    language's files are read by the scanner its entry names."""
    for ext in lang.extensions:
        assert scan.language_for(f"src/a{ext}") == lang.name
        assert scan.language_for(f"src/A{ext.upper()}") == lang.name
    for name in lang.names:
        assert scan.language_for(f"sub/{name}") == lang.name
    for exe in lang.interpreters:
        assert scan.shebang_language(f"#!/usr/bin/env {exe}\n") == lang.name
    if lang.scanner is not None:
        got = scan.scan_source(f"a{lang.extensions[0]}", "")
        assert got is not None and got.language == lang.name
        assert lang.name in scan.LANGUAGES
    else:
        assert lang.name in scan.TREE_SITTER
