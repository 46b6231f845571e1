"""One tree of errors for everything zkr refuses.

Every class carries a stable ``code`` (for hosts and logs), named in its header; the message is the
contract's exact string (``reference-contract.md`` §2.5), which is what the CLI prints as
``{"error": message}``.
"""

from __future__ import annotations

__all__ = [
    "ConflictError",
    "DatabaseBusy",
    "DuplicatePluginIdError",
    "EmbeddingError",
    "ExportError",
    "ForeignDatabaseError",
    "IntegrityError",
    "InvalidRequest",
    "LimitExceeded",
    "MigrationError",
    "NotFound",
    "RequestParseError",
    "SchemaVersionError",
    "SettingError",
    "StorageError",
    "UnknownPluginError",
    "UnknownToolError",
    "ZkrError",
]


class ZkrError(Exception):
    """Base of every error zkr raises on purpose; its message is safe to show."""

    code = "zkr_error"

    def __init_subclass__(cls, *, code: str | None = None, **kwargs: object) -> None:
        # ``class NotFound(ZkrError, code="not_found")``: each class's header names its stable code,
        # so the tree reads as the table of codes; a class that names none shares its parent's.
        super().__init_subclass__(**kwargs)
        if code is not None:
            cls.code = code

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class RequestParseError(ZkrError, code="parse_error"):
    """The request is not one well-formed JSON object of the command's shape."""


class InvalidRequest(ZkrError, code="invalid"):
    """The request is well-formed but breaks a rule of the contract."""


class NotFound(ZkrError, LookupError, code="not_found"):
    """The record is missing, not live, or lives in another scope (these look the same)."""

    def __init__(self, message: str = "record not found") -> None:
        super().__init__(message)


class ConflictError(InvalidRequest, code="conflict"):
    """A replayed request (ingestion key, link) differs from what was stored under the same key."""


class LimitExceeded(InvalidRequest, code="limit_exceeded"):
    """A request, record or page is over one of the contract's byte budgets."""


class EmbeddingError(InvalidRequest, code="embedding_error"):
    """A vector, lane or projection input was refused."""


class ExportError(InvalidRequest, code="export_error"):
    """An export cursor or an exported page is not acceptable."""


class IntegrityError(ZkrError, code="integrity_error"):
    """A schema trigger refused a row (scope mismatch, invalid half-open interval, ...)."""


class SchemaVersionError(ZkrError, code="schema_newer"):
    """The database was written by a newer zkr than this one."""


class ForeignDatabaseError(ZkrError, code="foreign_database"):
    """The file is another application's SQLite database; zkr leaves it untouched."""


class MigrationError(ZkrError, code="migration_error"):
    """A legacy database cannot be migrated without breaking an invariant; nothing was changed."""


class SettingError(ZkrError, code="invalid_setting"):
    """An environment variable of zkr's settings (``ZKR_RANKING``, ...) holds a value it does not
    accept; the message names the variable and the values it takes."""


class UnknownPluginError(ZkrError, LookupError, code="unknown_plugin"):
    """No installed plugin provides that embedder, extractor or host."""


class DuplicatePluginIdError(ZkrError, code="duplicate_id"):
    """Two plugins registered the same id; the message names both."""


class DatabaseBusy(ZkrError, code="busy"):
    """Another writer held the database longer than every retry waited; nothing was changed."""

    def __init__(self, message: str = "database is busy, try again") -> None:
        super().__init__(message)


class StorageError(ZkrError, code="database_error"):
    """The database itself failed (SQLite or a replica's server); the message names no data."""


class UnknownToolError(ZkrError, LookupError, code="unknown_tool"):
    """A host was asked for a tool that no operation of the table offers."""
