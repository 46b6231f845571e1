"""One tree of errors for everything zkr refuses.

Every class carries a stable ``code`` (for hosts and logs); the message is the contract's exact
string (``reference-contract.md`` §2.5), which is what the CLI prints as ``{"error": message}``.
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

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


class RequestParseError(ZkrError):
    """The request is not one well-formed JSON object of the command's shape."""

    code = "parse_error"


class InvalidRequest(ZkrError):
    """The request is well-formed but breaks a rule of the contract."""

    code = "invalid"


class NotFound(ZkrError, LookupError):
    """The record is missing, not live, or lives in another scope (these look the same)."""

    code = "not_found"

    def __init__(self, message: str = "record not found") -> None:
        super().__init__(message)


class ConflictError(InvalidRequest):
    """A replayed request (ingestion key, link) differs from what was stored under the same key."""

    code = "conflict"


class LimitExceeded(InvalidRequest):
    """A request, record or page is over one of the contract's byte budgets."""

    code = "limit_exceeded"


class EmbeddingError(InvalidRequest):
    """A vector, lane or projection input was refused."""

    code = "embedding_error"


class ExportError(InvalidRequest):
    """An export cursor or an exported page is not acceptable."""

    code = "export_error"


class IntegrityError(ZkrError):
    """A schema trigger refused a row (scope mismatch, invalid half-open interval, ...)."""

    code = "integrity_error"


class SchemaVersionError(ZkrError):
    """The database was written by a newer zkr than this one."""

    code = "schema_newer"


class ForeignDatabaseError(ZkrError):
    """The file is another application's SQLite database; zkr leaves it untouched."""

    code = "foreign_database"


class MigrationError(ZkrError):
    """A legacy database cannot be migrated without breaking an invariant; nothing was changed."""

    code = "migration_error"


class SettingError(ZkrError):
    """An environment variable of zkr's settings (``ZKR_RANKING``, ...) holds a value it does not
    accept; the message names the variable and the values it takes."""

    code = "invalid_setting"


class UnknownPluginError(ZkrError, LookupError):
    """No installed plugin provides that embedder, extractor or host."""

    code = "unknown_plugin"


class DuplicatePluginIdError(ZkrError):
    """Two plugins registered the same id; the message names both."""

    code = "duplicate_id"


class DatabaseBusy(ZkrError):
    """Another writer held the database longer than every retry waited; nothing was changed."""

    code = "busy"

    def __init__(self, message: str = "database is busy, try again") -> None:
        super().__init__(message)


class StorageError(ZkrError):
    """The database itself failed (SQLite or a replica's server); the message names no data."""

    code = "database_error"


class UnknownToolError(ZkrError, LookupError):
    """A host was asked for a tool that no operation of the table offers."""

    code = "unknown_tool"
