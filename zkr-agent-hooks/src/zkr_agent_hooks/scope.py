"""Whose memory the hooks read and write: the database and the (tenant, person) scope.

zkr's shared settings (:mod:`zkr.settings`: ``ZKR_DB``, ``ZKR_TENANT``, ``ZKR_PERSON``), so the
hooks and the MCP server of one Claude Code or Codex install see one memory. Unlike zkr-mcp, the
scope has a default here: a hook cannot ask, and automatic memory should work after the install
line.
"""

from __future__ import annotations

import getpass
from collections.abc import Mapping
from dataclasses import dataclass

from zkr import settings

__all__ = ["DEFAULT_TENANT", "Scope", "scope_from"]

#: The tenant of a single person's own machine.
DEFAULT_TENANT = "local"


@dataclass(frozen=True)
class Scope:
    db: str
    tenant_id: str
    person_id: str

    def fields(self) -> dict[str, str]:
        """The request fields that place a request in this scope."""
        return {"tenant_id": self.tenant_id, "person_id": self.person_id}


def _default_person() -> str:
    try:
        return getpass.getuser() or "me"
    except (KeyError, OSError):  # no passwd entry (some containers)
        return "me"


def scope_from(environ: Mapping[str, str] | None = None) -> Scope:
    """``$ZKR_DB`` (else ``~/.zkr/memory.db``), ``$ZKR_TENANT`` (else ``local``), ``$ZKR_PERSON``
    (else the login name); blank values count as unset."""
    return Scope(
        db=settings.default_db(environ),
        tenant_id=settings.TENANT.value(environ) or DEFAULT_TENANT,
        person_id=settings.PERSON.value(environ) or _default_person(),
    )
