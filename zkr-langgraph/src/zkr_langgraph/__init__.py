"""zkr-langgraph: a LangGraph ``BaseStore`` whose items are cited, bitemporal zkr memories.

``ZkrStore(db, tenant_id=...)`` serves one tenant; a namespace's first label is the person, the
rest names the collection (see :mod:`zkr_langgraph.mapping`). A put over a key is a correction
(``zkr history`` shows every version), a delete a tombstone (or, with ``on_delete="forget"``, an
erasure); search is zkr's recall pack, every item carrying its :class:`Citation`.
"""

from __future__ import annotations

from zkr.version import __version__
from zkr_langgraph.items import Citation, ZkrItem, ZkrSearchItem
from zkr_langgraph.store import ZkrStore

__all__ = ["Citation", "ZkrItem", "ZkrSearchItem", "ZkrStore", "__version__"]
