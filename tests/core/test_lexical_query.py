"""FTS5 match expressions of a search (contract §5.2) and Rust's notion of alphanumeric."""

from __future__ import annotations

import sqlite3
import unicodedata

import pytest

from zkr.retrieval._fts_query import (
    MAX_TOKEN_TERMS,
    build_queries,
    is_alphanumeric,
    phrase_query,
    quote,
    token_query,
    token_terms,
)


def test_phrase_query_quotes_the_whole_text_and_doubles_inner_quotes() -> None:
    assert phrase_query("Acme") == '"Acme"'
    assert phrase_query('say "hi" now') == '"say ""hi"" now"'
    assert phrase_query("What's Alice's project?") == "\"What's Alice's project?\""


def test_token_query_matches_the_contract_example() -> None:
    assert token_query("Where does Alice work at Acme?") == (
        '"Where" OR "does" OR "Alice" OR "work" OR "at" OR "Acme"'
    )


def test_apostrophes_and_punctuation_split_terms() -> None:
    assert token_terms("What's Alice's project?") == ["What", "s", "Alice", "project"]
    assert token_terms("e-mail: bob@example.com (2024)") == [
        "e",
        "mail",
        "bob",
        "example",
        "com",
        "2024",
    ]


def test_fts_operators_in_user_text_become_quoted_words() -> None:
    assert token_query('NEAR(a b) AND c* OR "d" ^e col:f') == (
        '"NEAR" OR "a" OR "b" OR "AND" OR "c" OR "OR" OR "d" OR "e" OR "col" OR "f"'
    )


def test_duplicates_are_case_insensitive_and_keep_the_first_spelling() -> None:
    assert token_terms("Acme acme ACME Beta beta") == ["Acme", "Beta"]
    # Unicode lowercase: Ärger/ärger are one term; Straße/STRASSE are not (ß lowercases to ß).
    assert token_terms("Ärger ärger Straße STRASSE") == ["Ärger", "Straße", "STRASSE"]


def test_fewer_than_two_unique_terms_give_no_token_query() -> None:
    assert token_query("Acme") is None
    assert token_query("Acme acme ACME!") is None
    assert token_query("?!...") is None
    assert token_query("") is None
    assert build_queries("Acme").tokens is None
    assert build_queries("Acme Beta").tokens == '"Acme" OR "Beta"'


def test_a_thousand_term_query_keeps_the_first_32_unique_terms() -> None:
    query = " ".join(f"term{index}" for index in range(1000))
    terms = token_terms(query)
    assert len(terms) == MAX_TOKEN_TERMS == 32
    assert terms == [f"term{index}" for index in range(32)]
    # Duplicates do not use up the budget.
    assert token_terms("a A " + query)[:2] == ["a", "term0"]
    assert len(token_terms("a A " + query)) == 32


def test_unicode_letters_and_numbers_are_word_characters() -> None:
    assert token_terms("café crème, Zürich; 東京 ٣٤ Ⅻ ½") == [
        "café",
        "crème",
        "Zürich",
        "東京",
        "٣٤",
        "Ⅻ",
        "½",
    ]
    # Symbols, punctuation and spaces of every script separate words.
    assert token_terms("a\u00a0b\u3000c—d€e☃f") == ["a", "b", "c", "d", "e", "f"]


def test_other_alphabetic_combining_marks_are_alphanumeric_like_rust() -> None:
    # U+0345 COMBINING GREEK YPOGEGRAMMENI: Mn, Other_Alphabetic. Python's isalnum rejects it.
    assert not "\u0345".isalnum()
    assert is_alphanumeric("\u0345")
    assert token_terms("α\u0345 β") == ["α\u0345", "β"]
    # Devanagari vowel sign AA (Mc) and circled Latin capital A (So) are Other_Alphabetic too.
    assert is_alphanumeric("\u093e")
    assert is_alphanumeric("\u24b6")
    assert token_terms("क\u093e ख") == ["क\u093e", "ख"]
    # Plain combining accents are not alphabetic: they split words (Rust does the same).
    assert not is_alphanumeric("\u0301")
    assert token_terms("e\u0301x y") == ["e", "x", "y"]


def test_is_alphanumeric_agrees_with_isalnum_outside_other_alphabetic() -> None:
    # Every letter and number Python knows is alphanumeric; no separator category is.
    for code in range(0x3000):
        char = chr(code)
        category = unicodedata.category(char)
        if char.isalnum():
            assert is_alphanumeric(char)
        if category[0] in "PZC" or category in ("Sm", "Sc", "Sk"):
            assert not is_alphanumeric(char), hex(code)


def test_quote_escapes_double_quotes() -> None:
    assert quote('a"b') == '"a""b"'


@pytest.mark.parametrize(
    "query",
    [
        "What's Alice's project?",
        '"unbalanced',
        'a "" b',
        "???",
        "NOT",
        "AND OR NOT",
        "*",
        "col:value",
        "α\u0345 β",
        "\u0345",
        "\u0345 \u0363",
        "x" * 5000,
        "a\x00b",
    ],
)
def test_every_expression_is_valid_fts5(query: str) -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61')")
    conn.execute("INSERT INTO t VALUES ('Alice s project is called Apollo')")
    queries = build_queries(query)
    for expression in (queries.phrase, queries.tokens):
        if expression is not None:
            conn.execute("SELECT count(*) FROM t WHERE t MATCH ?", (expression,)).fetchone()


def test_phrase_matches_the_token_sequence_ignoring_punctuation() -> None:
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61')")
    conn.execute("INSERT INTO t VALUES ('what s alice s project')")
    conn.execute("INSERT INTO t VALUES ('project of alice')")
    rows = conn.execute(
        "SELECT content FROM t WHERE t MATCH ?", (phrase_query("What's Alice's project?"),)
    ).fetchall()
    assert rows == [("what s alice s project",)]
    # A query without word characters is an empty phrase: no rows, no error.
    assert conn.execute("SELECT * FROM t WHERE t MATCH ?", (phrase_query("?!"),)).fetchall() == []


def test_nul_characters_do_not_break_the_phrase() -> None:
    assert phrase_query("a\x00b") == '"a b"'
    assert token_terms("hello\x00world") == ["hello", "world"]
    conn = sqlite3.connect(":memory:")
    conn.execute("CREATE VIRTUAL TABLE t USING fts5(content, tokenize='unicode61')")
    conn.execute("INSERT INTO t VALUES ('hello world')")
    for query in ("hello\x00world", "\x00", "hello\x00"):
        rows = conn.execute("SELECT * FROM t WHERE t MATCH ?", (phrase_query(query),)).fetchall()
        assert rows == ([] if query == "\x00" else [("hello world",)])
