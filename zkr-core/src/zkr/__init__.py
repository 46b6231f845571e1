"""zkr: evidence-backed temporal memory for personal agents.

The public API is what this module exports: :class:`MemoryDb`, the request, response and record
models, the errors and :data:`hookimpl` (for plugins). The subpackages show the architecture —
:mod:`zkr.store`, :mod:`zkr.writes`, :mod:`zkr.retrieval`, :mod:`zkr.embeddings`, :mod:`zkr.feed`,
:mod:`zkr.plugins` — and the operation table :mod:`zkr.operations` ties them together. Modules and
names with a leading underscore are private.
"""

from __future__ import annotations

import importlib

from zkr.version import __version__

# Not ``typing.TYPE_CHECKING``: importing typing is a fifth of ``zkr --help`` (start-up,
# issue 14); mypy reads any constant of this name as true.
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zkr.db import MemoryDb

    # Star imports, so that each name is listed once here (in ``__all__``) and once beside its
    # definition; ``__all__`` below picks the public ones.
    from zkr.errors import *  # noqa: F403
    from zkr.models import *  # noqa: F403
    from zkr.plugins.hookspecs import hookimpl
    from zkr.store.schema import SCHEMA_VERSION

__all__ = [
    "SCHEMA_VERSION",
    "ApplyRequest",
    "ApplyResult",
    "AsOf",
    "Capture",
    "CapturesRequest",
    "ClaimEvidenceRecord",
    "ClaimHistory",
    "ClaimInput",
    "ClaimKind",
    "ClaimRecord",
    "ClaimStatus",
    "ClaimVersion",
    "ClaimsRequest",
    "ConflictError",
    "CorrectRequest",
    "CorrectResult",
    "CorrectionRecord",
    "DailyReviewRecord",
    "DeleteRequest",
    "DeleteResult",
    "DeletionRecord",
    "DuplicatePluginIdError",
    "EmbedRequest",
    "EmbedResult",
    "EmbeddingError",
    "EmbeddingInput",
    "ErasureRecord",
    "EvidenceBody",
    "EvidenceRecord",
    "EvidenceRelation",
    "ExportCommit",
    "ExportError",
    "ExportPage",
    "ExportRequest",
    "ForgetRequest",
    "ForgetResult",
    "GetRequest",
    "HistoryCorrection",
    "HistoryEvent",
    "HistoryEvidence",
    "HistoryRequest",
    "IntegrityError",
    "InvalidRequest",
    "LimitExceeded",
    "LinkRequest",
    "ListedCapture",
    "ListedClaim",
    "LiveClaim",
    "LocatorInput",
    "LocatorRequest",
    "MemoriesPage",
    "MemoriesRequest",
    "MemoryDb",
    "MemoryKind",
    "MemoryListItem",
    "MemoryRef",
    "MigrationError",
    "NotFound",
    "OkResult",
    "ProfileEntry",
    "ProfileRecord",
    "ProfileRequest",
    "ProfileStability",
    "ProfilesRequest",
    "ProjectionInput",
    "ProjectionIssue",
    "ProjectionState",
    "ProjectionsRequest",
    "QueryEmbedding",
    "Ranking",
    "RebuildRequest",
    "RebuildResult",
    "RememberRequest",
    "RememberResult",
    "RequestParseError",
    "RetrievalItem",
    "RetrievalPack",
    "ReviewItem",
    "ReviewRequest",
    "ReviewResult",
    "ReviewsRequest",
    "SchemaVersionError",
    "ScopedRequest",
    "ScopesPage",
    "ScopesRequest",
    "SearchRequest",
    "SequenceRequest",
    "SequenceResult",
    "SettingError",
    "SourceBody",
    "SourceKind",
    "SourceRecord",
    "TargetKind",
    "TargetRef",
    "TimeRange",
    "UnknownPluginError",
    "VectorDistance",
    "VectorNormalization",
    "ZkrError",
    "__version__",
    "hookimpl",
]


#: Where the names of ``__all__`` live. They are imported on first use (PEP 562), so that
#: ``import zkr.version`` — which ``zkr --version`` and ``zkr --help`` need — loads no pydantic.
_HOMES = ("zkr.db", "zkr.errors", "zkr.models", "zkr.store.schema", "zkr.plugins.hookspecs")


def __getattr__(name: str) -> Any:
    if name in __all__:
        for home in _HOMES:
            module = importlib.import_module(home)
            if hasattr(module, name):
                value = getattr(module, name)
                globals()[name] = value  # later lookups skip this function
                return value
    raise AttributeError(f"module 'zkr' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted({*globals(), *__all__})
