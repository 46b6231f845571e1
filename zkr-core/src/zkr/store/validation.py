"""Checks shared by every operation: blank text, scope, fresh ids (contract conventions).

"Blank" follows the reference implementation (Rust ``str::trim``): a text is blank when nothing is
left after stripping Unicode ``White_Space`` characters. Python's ``str.strip()``/``str.isspace()``
also strip U+001C..U+001F (information separators), which Rust keeps, so the set is spelled out
here.
"""

from __future__ import annotations

from os import urandom

from zkr.errors import InvalidRequest

__all__ = ["WHITE_SPACE", "is_blank", "new_id", "require_scope", "require_text"]

#: The Unicode ``White_Space`` property: exactly what Rust's ``char::is_whitespace`` accepts.
WHITE_SPACE = (
    "\u0009\u000a\u000b\u000c\u000d\u0020\u0085\u00a0\u1680"
    "\u2000\u2001\u2002\u2003\u2004\u2005\u2006\u2007\u2008\u2009\u200a"
    "\u2028\u2029\u202f\u205f\u3000"
)


def is_blank(text: str) -> bool:
    """True when *text* is empty after trimming Unicode White_Space at both ends."""
    return not text.strip(WHITE_SPACE)


def require_text(text: str, name: str) -> None:
    """Refuse a blank text with ``"<name> must not be empty"``.

    :raises InvalidRequest: the text is blank.
    """
    if is_blank(text):
        raise InvalidRequest(f"{name} must not be empty")


def require_scope(tenant_id: str, person_id: str) -> None:
    """The scope check every operation starts with (tenant first, then person).

    :raises InvalidRequest: ``tenant_id must not be empty`` / ``person_id must not be empty``.
    """
    require_text(tenant_id, "tenant_id")
    require_text(person_id, "person_id")


def new_id() -> str:
    """A fresh record id: 32 lowercase hex characters, 128 random bits.

    Same shape as SQLite's ``lower(hex(randomblob(16)))``, which the reference uses.
    """
    # secrets.token_hex(16) is exactly this; importing secrets (hmac, hashlib with OpenSSL,
    # random) cost every one-shot write a quarter of ``python -c pass`` (issue 27.4).
    return urandom(16).hex()
