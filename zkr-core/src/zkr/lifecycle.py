"""The lifecycle operations of the contract (§4.1-§4.5), one module per operation family.

``MemoryDb`` imports its methods from here; the implementations live in :mod:`zkr.capture`
(remember, locator), :mod:`zkr.correction` (correct), :mod:`zkr.linking` (link) and
:mod:`zkr.deletion` (delete).
"""

from __future__ import annotations

from zkr.capture import locator, remember
from zkr.correction import correct
from zkr.deletion import delete
from zkr.linking import link

__all__ = ["correct", "delete", "link", "locator", "remember"]
