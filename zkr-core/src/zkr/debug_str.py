"""A string as Rust's ``format!("{:?}", value)`` renders it: the contract's ``unknown command``.

Its own small module because the CLI names an unknown command before it loads anything else
(start-up, issue 14) and both serve loops name one the same way.
"""

from __future__ import annotations

__all__ = ["rust_debug_str"]

# Rust's ``char::is_printable`` is false for these general categories (space excepted): the
# ``Debug`` rendering of a string escapes them as ``\u{hex}``.
_UNPRINTABLE_CATEGORIES = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp", "Zs"})
# Grapheme-extending marks are escaped too (Python has no Grapheme_Extend property; Mn/Me is it
# up to a handful of spacing marks).
_GRAPHEME_EXTEND_CATEGORIES = frozenset({"Mn", "Me"})
_SIMPLE_ESCAPES = {"\0": "\\0", "\t": "\\t", "\r": "\\r", "\n": "\\n", '"': '\\"', "\\": "\\\\"}


def rust_debug_str(value: str) -> str:
    """*value* as Rust's ``format!("{:?}", value)`` renders it (the contract's unknown command)."""
    import unicodedata

    parts = ['"']
    for char in value:
        if char in _SIMPLE_ESCAPES:
            parts.append(_SIMPLE_ESCAPES[char])
        elif char == " " or (" " < char < "\x7f"):
            parts.append(char)
        elif unicodedata.category(char) in _UNPRINTABLE_CATEGORIES | _GRAPHEME_EXTEND_CATEGORIES:
            parts.append(f"\\u{{{ord(char):x}}}")
        else:
            parts.append(char)
    parts.append('"')
    return "".join(parts)
