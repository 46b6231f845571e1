"""What an embedder plugin provides: an object that turns texts into vectors of one lane.

An embedder names the lane it writes — ``model`` and ``version`` (its id) — and declares the lane's
configuration: ``dimension``, ``normalization`` (``none``/``l2``) and ``distance``
(``cosine``/``dot``/``euclidean``). zkr stores what it returns only through ``embed``'s validation,
so a wrong declaration is refused, never stored. ``zkr.testing.EmbedderContract`` checks one.

**Roles.** Many retrieval models embed a question and a stored passage differently (e5 wants
``query: `` and ``passage: `` prefixes). An embedder that declares ``roles = ("query", "passage")``
is called ``embed_batch(texts, role="query")`` for search queries and ``role="passage"`` for the
stored targets ``rebuild`` embeds; an embedder without roles is called ``embed_batch(texts)`` as
before (:func:`embed_texts` decides).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, ClassVar

from zkr.enums import VectorDistance, VectorNormalization

__all__ = [
    "DISTANCES",
    "NORMALIZATIONS",
    "ROLES",
    "Embedder",
    "check_embedder",
    "embed_texts",
    "embedder_id",
]

#: What an embedder may declare: the contract's vector enumerations (zkr.enums), spelled out.
NORMALIZATIONS = tuple(item.value for item in VectorNormalization)
DISTANCES = tuple(item.value for item in VectorDistance)
#: What a text is embedded as: a search query, or a stored passage (a target ``rebuild`` embeds).
ROLES = ("query", "passage")


class Embedder(ABC):
    """Base class of embedders (llm's ``EmbeddingModel`` shape).

    Subclasses set the class attributes and implement :meth:`embed_batch`. Load model weights
    lazily (on the first call), so that registering the plugin stays cheap.
    """

    model: ClassVar[str]
    version: ClassVar[str]
    dimension: ClassVar[int]
    normalization: ClassVar[str] = "l2"
    distance: ClassVar[str] = "cosine"
    #: How many texts ``zkr rebuild`` passes per call.
    batch_size: ClassVar[int] = 32
    #: The roles :meth:`embed_batch` takes as ``role=`` (a subset of :data:`ROLES`); empty: none.
    roles: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> Sequence[Sequence[float]] | Any:
        """One vector per text, in order: a list of float lists or a 2-D numpy array.

        An embedder with :attr:`roles` takes a keyword ``role`` too (one of its roles).
        """

    def embed(self, text: str) -> list[float]:
        """The vector of one text."""
        return [float(v) for v in next(iter(self.embed_batch([text])))]


def embedder_id(embedder: Any) -> str:
    """``model@version``: how an embedder is named in messages and in ``zkr plugins``."""
    return f"{embedder.model}@{embedder.version}"


def embed_texts(embedder: Any, texts: Sequence[str], role: str) -> Any:
    """``embedder.embed_batch(texts)``, with ``role=`` when the embedder declares that role."""
    if role in (getattr(embedder, "roles", None) or ()):
        return embedder.embed_batch(texts, role=role)
    return embedder.embed_batch(texts)


def check_embedder(embedder: Any) -> None:
    """Refuse an object that does not declare a usable lane.

    :raises TypeError: a missing or malformed attribute, or no ``embed_batch``.
    """
    for name in ("model", "version"):
        value = getattr(embedder, name, None)
        if not isinstance(value, str) or not value.strip():
            raise TypeError(f"embedder {embedder!r} needs a non-empty str {name}")
    dimension = getattr(embedder, "dimension", None)
    if not isinstance(dimension, int) or isinstance(dimension, bool) or dimension <= 0:
        raise TypeError(f"embedder {embedder_id(embedder)} needs a positive int dimension")
    if getattr(embedder, "normalization", None) not in NORMALIZATIONS:
        raise TypeError(f"embedder {embedder_id(embedder)} normalization must be none or l2")
    if getattr(embedder, "distance", None) not in DISTANCES:
        raise TypeError(
            f"embedder {embedder_id(embedder)} distance must be cosine, dot or euclidean"
        )
    roles = getattr(embedder, "roles", ())
    if not isinstance(roles, tuple) or any(role not in ROLES for role in roles):
        raise TypeError(
            f"embedder {embedder_id(embedder)} roles must be a tuple of 'query'/'passage'"
        )
    if not callable(getattr(embedder, "embed_batch", None)):
        raise TypeError(f"embedder {embedder_id(embedder)} has no embed_batch(texts)")
