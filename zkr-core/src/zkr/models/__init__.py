"""Every request, response and export record of the contract, defined once (pydantic v2).

These models check *shape* only: JSON types, integer ranges, enum spellings, unknown fields. The
contract's semantic rules (blank text, interval order, limits) run inside the operations, in the
order the contract gives, so that the first broken rule is the one reported.

The CLI, ``serve``, the Hermes provider and the OpenClaw bridge all validate through these classes.
Every model and field carries a description: help, ``docs/cli.md`` and every host's tool schema are
generated from them, never described a second time. Every timestamp is an integer count of seconds
since the Unix epoch (1970-01-01T00:00:00Z).

The models are grouped by role in this package's modules (``requests``, ``responses``,
``export``, ``lookups``, ``person_view``; shared types and bases in ``_base``) and every one is
imported from here: ``from zkr.models import SearchRequest``, ``from zkr import models as m``.
"""

from __future__ import annotations

# Each module names its own models in its ``__all__``; this package re-exports them all (the
# pattern of asyncio's ``__init__``), so a model is listed once, beside its definition.
from zkr import enums
from zkr.enums import *  # noqa: F403
from zkr.models import export, lookups, person_view, requests, responses
from zkr.models._base import Limit, MemoryRef, ScopedRequest, TargetRef, TimeRange, Timestamp
from zkr.models.export import *  # noqa: F403
from zkr.models.lookups import *  # noqa: F403
from zkr.models.person_view import *  # noqa: F403
from zkr.models.requests import *  # noqa: F403
from zkr.models.responses import *  # noqa: F403

__all__ = ["Limit", "MemoryRef", "ScopedRequest", "TargetRef", "TimeRange", "Timestamp"]
__all__ += enums.__all__
__all__ += export.__all__
__all__ += lookups.__all__
__all__ += person_view.__all__
__all__ += requests.__all__
__all__ += responses.__all__
