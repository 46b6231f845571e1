"""Embeddings: the projections to embed, stored vectors (float32 BLOBs), dense lanes and
``rebuild`` with an installed embedder."""
