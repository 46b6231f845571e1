"""Retrieval: ``search`` and ``get`` — lexical candidates (FTS5 BM25), dense ranks, fusion and the
materialisation of cited items. Modules with a leading underscore are this package's internals."""

from __future__ import annotations

__all__ = ["get", "search"]

# ``get`` and ``search`` are loaded when first asked for: every module of this package imports
# this file first, and a one-shot ``claims`` or ``sequence`` need not load the search path
# (start-up, issue 27.4). TYPE_CHECKING is typing's constant, without importing typing.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from zkr.retrieval._search import get, search
else:

    def __getattr__(name: str) -> object:
        if name in __all__:
            from zkr.retrieval import _search

            return getattr(_search, name)
        raise AttributeError(f"module 'zkr.retrieval' has no attribute {name!r}")
