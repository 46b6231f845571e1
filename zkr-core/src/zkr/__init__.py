"""zkr: evidence-backed temporal memory for personal agents.

Import what you need from here; submodules prefixed with ``_`` are private.
"""

from __future__ import annotations

from zkr.db import MemoryDb
from zkr.errors import (
    ConflictError,
    DuplicatePluginIdError,
    EmbeddingError,
    ExportError,
    IntegrityError,
    InvalidRequest,
    LimitExceeded,
    MigrationError,
    NotFound,
    RequestParseError,
    SchemaVersionError,
    UnknownPluginError,
    ZkrError,
)
from zkr.schema import SCHEMA_VERSION

__version__ = "0.3.0"

__all__ = [
    "SCHEMA_VERSION",
    "ConflictError",
    "DuplicatePluginIdError",
    "EmbeddingError",
    "ExportError",
    "IntegrityError",
    "InvalidRequest",
    "LimitExceeded",
    "MemoryDb",
    "MigrationError",
    "NotFound",
    "RequestParseError",
    "SchemaVersionError",
    "UnknownPluginError",
    "ZkrError",
    "__version__",
]
