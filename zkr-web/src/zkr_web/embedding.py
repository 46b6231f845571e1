"""The page's embedder: hybrid search, and vectors for what is written, without a page waiting.

With ``--embedder MODEL/VERSION`` every search embeds its query with that installed embedder
(``query_embedding`` without a vector: zkr embeds it) and runs hybrid, and zkr's host-kit
:class:`zkr.background_embedding.BackgroundEmbedder` (the one zkr-mcp uses) embeds what other
writers stored and every change made through the page.
"""

from __future__ import annotations

from zkr.background_embedding import (
    BackgroundEmbedder,
    EmbedderSettingError,
    check_embedder,
    parse_embedder,
)

__all__ = ["BackgroundEmbedder", "EmbedderSettingError", "check_embedder", "parse_embedder"]
