"""The items the store answers: LangGraph's, plus the citation zkr gives every memory.

The value is exactly what was put; the citation lives beside it (``item.citation``, and under
``"citation"`` in ``item.dict()``), never inside it, so a value read back equals the value stored.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from langgraph.store.base import Item, SearchItem

__all__ = ["Citation", "ZkrItem", "ZkrSearchItem", "moment"]


@dataclass(frozen=True)
class Citation:
    """What an item rests on in zkr: its current claim and the live evidence that claim cites.

    ``zkr history`` on ``claim_id`` shows every version of the item; ``zkr get`` on an evidence id
    shows the capture it quotes.
    """

    claim_id: str
    evidence_ids: tuple[str, ...]

    def dict(self) -> dict[str, Any]:
        return {"claim_id": self.claim_id, "evidence_ids": list(self.evidence_ids)}

    @classmethod
    def of(cls, citation: Citation | Mapping[str, Any]) -> Citation:
        """A citation, or the citation a :meth:`dict` describes."""
        if isinstance(citation, Citation):
            return citation
        return cls(str(citation["claim_id"]), tuple(str(e) for e in citation["evidence_ids"]))


def moment(seconds: int) -> datetime:
    """zkr's times (whole seconds since the epoch) as LangGraph's (aware UTC datetimes)."""
    return datetime.fromtimestamp(seconds, tz=UTC)


class ZkrItem(Item):
    """An :class:`~langgraph.store.base.Item` with its zkr citation."""

    __slots__ = ("citation",)

    def __init__(
        self,
        *,
        value: dict[str, Any],
        key: str,
        namespace: tuple[str, ...],
        created_at: datetime,
        updated_at: datetime,
        citation: Citation | Mapping[str, Any],
    ) -> None:
        super().__init__(
            value=value,
            key=key,
            namespace=namespace,
            created_at=created_at,
            updated_at=updated_at,
        )
        # A mapping: the item's dict(), as LangGraph's checkpoint serializer rebuilds items.
        self.citation = Citation.of(citation)

    def dict(self) -> dict[str, Any]:
        result: dict[str, Any] = super().dict()
        result["citation"] = self.citation.dict()
        return result


class ZkrSearchItem(SearchItem):
    """A :class:`~langgraph.store.base.SearchItem` with its zkr citation."""

    __slots__ = ("citation",)

    def __init__(
        self,
        namespace: tuple[str, ...],
        key: str,
        value: dict[str, Any],
        created_at: datetime,
        updated_at: datetime,
        score: float | None = None,
        *,
        citation: Citation | Mapping[str, Any],
    ) -> None:
        super().__init__(namespace, key, value, created_at, updated_at, score)
        # A mapping: the item's dict(), as LangGraph's checkpoint serializer rebuilds items.
        self.citation = Citation.of(citation)

    def dict(self) -> dict[str, Any]:
        result: dict[str, Any] = super().dict()
        result["citation"] = self.citation.dict()
        return result
