"""The shipped plugin imports nothing but Node built-ins (``node:``) and its own files.

OpenClaw supplies a ``load.paths`` plugin with ``openclaw/plugin-sdk/*`` only, and never runs npm
install for it: a bare runtime import (``typebox``, even ``openclaw/...``) breaks the plugin on a
user's machine while every check that has a ``node_modules`` above the plugin still passes. The
SDK types are used through JSDoc ``import("...")`` types, which live in comments and are allowed.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from zkr_openclaw_bridge.install import plugin_dir

# Where a regex literal may start (after these, `/` cannot be division).
_REGEX_BEFORE = set("(,=:[!&|?{};+-*%<>~^") | {""}
_SPECIFIER = r"""\s*(["'])([^"'\n]*)\1"""
# Static `import ... from "x"` / `import "x"`, `export ... from "x"`, dynamic `import("x")`.
_STATIC = [
    re.compile(r"\bimport\s*(?:[\w$*{}\s,]+?\s*from)?" + _SPECIFIER),
    re.compile(r"\bexport\s[^;]*?\bfrom" + _SPECIFIER),
    re.compile(r"\bimport\s*\(" + _SPECIFIER + r"\s*\)"),
]
_DYNAMIC = re.compile(r"\bimport\s*\(")
_REQUIRE = re.compile(r"\b(?:require|createRequire)\s*\(")


def _skip_quoted(source: str, i: int, quote: str) -> int:
    """Index just past the string or regex literal whose opening ``quote`` is at ``i``."""
    in_class = False  # inside a regex character class, `/` does not end the literal
    i += 1
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if quote == "/" and c in "[]":
            in_class = c == "["
        elif c == quote and not in_class:
            return i + 1
        elif c == "\n" and quote != "/":
            break  # an unterminated string: let the rest be scanned as code
        i += 1
    return i


def _skip_template(source: str, i: int) -> tuple[int, bool]:
    """From inside a template literal at ``i``: the index past its end or past a ``${``, and
    whether it stopped at a ``${``."""
    while i < len(source):
        c = source[i]
        if c == "\\":
            i += 2
            continue
        if c == "`":
            return i + 1, False
        if source.startswith("${", i):
            return i + 2, True
        i += 1
    return i, False


def strip_comments(source: str) -> str:
    """``source`` without its comments; strings, templates and regex literals kept intact."""
    out: list[str] = []
    braces: list[str] = []  # open `{` and `${` of the code being scanned
    last = ""  # the last significant character of code: after `)` or a name, `/` divides
    i = 0
    while i < len(source):
        c, pair = source[i], source[i : i + 2]
        if pair == "//":
            end = source.find("\n", i)
            i = len(source) if end < 0 else end
            continue
        if pair == "/*":
            end = source.find("*/", i + 2)
            i = len(source) if end < 0 else end + 2
            out.append(" ")
            continue
        start = i
        if c in "\"'" or (c == "/" and last in _REGEX_BEFORE):
            i = _skip_quoted(source, i, c)
        elif c == "`" or (c == "}" and braces and braces[-1] == "${"):
            if c == "}":
                braces.pop()
            i, interpolation = _skip_template(source, i + 1)
            if interpolation:
                braces.append("${")
        else:
            if c == "{":
                braces.append("{")
            elif c == "}" and braces:
                braces.pop()
            out.append(c)
            if not c.isspace():
                last = c
            i += 1
            continue
        out.append(source[start:i])
        last = source[i - 1] if source[i - 1] == "{" else "a"
    return "".join(out)


def runtime_imports(source: str) -> list[str]:
    """Every module ``source`` loads at run time (``"<dynamic>"`` for a computed specifier)."""
    code = strip_comments(source)
    found = [m.group(2) for pattern in _STATIC for m in pattern.finditer(code)]
    literal = len(_STATIC[-1].findall(code))
    found += ["<dynamic>"] * (len(_DYNAMIC.findall(code)) - literal)
    found += ["<require>"] * len(_REQUIRE.findall(code))
    return found


def _allowed(specifier: str) -> bool:
    return specifier.startswith(("node:", "./", "../"))


PLUGIN_SCRIPTS = sorted(plugin_dir().glob("*.js"))


def test_the_plugin_has_scripts() -> None:
    assert {path.name for path in PLUGIN_SCRIPTS} >= {"index.js", "runner.js"}


@pytest.mark.parametrize("script", PLUGIN_SCRIPTS, ids=lambda path: path.name)
def test_plugin_imports_only_node_builtins_and_its_own_files(script: Path) -> None:
    source = script.read_text(encoding="utf-8")
    imports = runtime_imports(source)
    assert imports, "the scanner found no import at all"
    assert [name for name in imports if not _allowed(name)] == []


@pytest.mark.parametrize(
    ("source", "imports"),
    [
        ('import { Type } from "typebox";', ["typebox"]),
        ("import 'openclaw/plugin-sdk/plugin-entry'", ["openclaw/plugin-sdk/plugin-entry"]),
        ('import * as fs from "fs";\nimport { x } from "./x.js";', ["fs", "./x.js"]),
        ('export { a } from "typebox";', ["typebox"]),
        ('const m = await import("typebox");', ["typebox"]),
        ("const m = await import(name);", ["<dynamic>"]),
        ('const { Type } = require("typebox");', ["<require>"]),
        # JSDoc types and comments are not imports; strings and regexes do not open comments.
        ('/** @type {import("openclaw/plugin-sdk").X} */\n// import "typebox"\n', []),
        ('const p = "zkr://claim"; import "typebox";', ["typebox"]),
        ("const r = /\\/\\/[/]/u; import 'typebox';", ["typebox"]),
        ('const t = `a ${`b ${"}"}`} //`; import "typebox";', ["typebox"]),
        ('const q = a / b; /* x */ import "./ok.js";', ["./ok.js"]),
    ],
)
def test_the_scanner_sees_what_node_would_load(source: str, imports: list[str]) -> None:
    assert runtime_imports(source) == imports
