"""Embeddings: the projections to embed, stored vectors (float32 BLOBs), dense lanes and
``rebuild`` with an installed embedder."""

from __future__ import annotations

from zkr.embeddings.projections import embed, projections
from zkr.embeddings.rebuild import rebuild

__all__ = ["embed", "projections", "rebuild"]
