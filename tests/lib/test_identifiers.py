"""Query -> identifiers, and the compound-name helpers."""

from __future__ import annotations

import pytest

from ctxtools.analyzer import identifiers_from_query, is_stop
from ctxtools.identifiers import (
    compound_parts,
    contains_parts,
    split_compound,
    split_dotted,
    valid_identifier,
)


def test_words_compounds_and_dotted_paths():
    got = identifiers_from_query("Fix auth.jwt.verify: verifyJwtToken fails for parse_header")
    assert got == [
        "auth",
        "jwt",
        "verify",
        "auth.jwt.verify",
        "verifyJwtToken",
        "parse_header",
    ]  # "fails": a word every bug report is written in, a stop word of the one list


def test_stop_words_keywords_and_one_letter_words_are_dropped():
    got = identifiers_from_query("Why does the def in x return None when self is a Token?")
    assert got == ["return", "Token"]  # "return" may be what a task is about


def test_rust_paths_and_dotted_paths_without_usable_parts():
    assert identifiers_from_query("see std::fs::read_to_string") == [
        "std",
        "fs",
        "read_to_string",
        "std::fs::read_to_string",
    ]
    # "e.g." and "i.e." have no usable part: nothing at all
    assert identifiers_from_query("e.g. i.e.") == []
    # a dotted path keeps its whole even when one part is a keyword
    assert identifiers_from_query("self.session_store") == ["session_store", "self.session_store"]


def test_duplicates_keep_the_first_occurrence_and_case_variants_stay():
    assert identifiers_from_query("token Token token verify token") == ["token", "Token", "verify"]


def test_extra_identifiers_are_taken_as_they_are():
    assert identifiers_from_query("the cache", ["self", "cache", "LruCache"]) == [
        "cache",
        "self",
        "LruCache",
    ]


def test_nothing_usable():
    assert identifiers_from_query("") == []
    assert identifiers_from_query("fix the bug in it, please") == []
    assert identifiers_from_query("123 456 -- !!") == []


@pytest.mark.parametrize(
    "name, parts",
    [
        ("verifyJwtToken", ["verify", "Jwt", "Token"]),
        ("VerifyJWTToken", ["Verify", "JWT", "Token"]),
        ("HTTPServer", ["HTTP", "Server"]),
        ("getHTTPResponseCode", ["get", "HTTP", "Response", "Code"]),
        ("parse_url_v2", ["parse", "url", "v2"]),
        ("MAX_RETRY_COUNT", ["MAX", "RETRY", "COUNT"]),
        ("__init__", ["init"]),
        ("sha256Sum", ["sha256", "Sum"]),
        ("plain", ["plain"]),
        ("größe_x", ["größe", "x"]),
    ],
)
def test_split_compound(name, parts):
    assert split_compound(name) == parts


def test_compound_parts_and_runs():
    assert compound_parts("verifyJwtToken") == ("verify", "jwt", "token")
    hay = compound_parts("verifyJwtToken")
    assert contains_parts(hay, ("jwt",))
    assert contains_parts(hay, compound_parts("jwt_token"))
    assert contains_parts(hay, compound_parts("verifyJwt"))
    assert not contains_parts(hay, compound_parts("verify_token"))  # not a contiguous run
    assert not contains_parts(hay, ())
    assert not contains_parts(("a",), ("a", "b"))


def test_helpers():
    assert split_dotted("auth.jwt.verify") == ["auth", "jwt", "verify"]
    assert split_dotted("a::b") == ["a", "b"]
    assert is_stop("The") and is_stop("x") and is_stop("def")
    assert not is_stop("Def") and not is_stop("jwt")
    assert valid_identifier("auth.jwt.verify") and valid_identifier("parse_header")
    assert (
        not valid_identifier("2fast") and not valid_identifier("a b") and not valid_identifier("")
    )
