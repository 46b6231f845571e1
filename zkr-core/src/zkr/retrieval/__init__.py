"""Retrieval: ``search`` and ``get`` — lexical candidates (FTS5 BM25), dense ranks, fusion and the
materialisation of cited items. Modules with a leading underscore are this package's internals."""

from __future__ import annotations

from zkr.retrieval._search import get, search

__all__ = ["get", "search"]
