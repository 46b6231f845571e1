"""Where the provider keeps its memory and whose memory it is.

Settings come, strongest first, from the environment (``ZKR_DB``, ``ZKR_TENANT``, ``ZKR_PERSON``,
``ZKR_RANKING``: zkr's shared settings, :mod:`zkr.settings`; the old ``ZKR_TENANT_ID`` and
``ZKR_PERSON_ID`` are still read, with a warning), then ``$HERMES_HOME/zkr.json`` (written by
``hermes memory setup zkr`` through ``save_config``), then what Hermes passes to ``initialize``.
Everything here is cheap and offline: ``backup_paths`` and the setup wizard call it on a provider
that was never initialized.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from zkr.settings import DB, PERSON, RANKING, TENANT

__all__ = [
    "CONFIG_FILE",
    "CONFIG_KEYS",
    "ORIGIN_GATEWAY",
    "ORIGIN_PINNED",
    "ProviderConfig",
    "Scope",
    "ScopePolicy",
    "default_hermes_home",
    "load_config",
    "resolve_scope",
    "save_config",
]

log = logging.getLogger("zkr_hermes")

#: The provider's own settings file, next to Hermes' config.yaml.
CONFIG_FILE = "zkr.json"
#: Keys ``save_config`` keeps; anything else a caller sends is ignored.
CONFIG_KEYS = (
    "db_path",
    "tenant_id",
    "person_id",
    "prefetch_limit",
    "prefetch_timeout",
    "ranking",
)

DEFAULT_DB_NAME = "zkr.db"
DEFAULT_TENANT = "hermes"
DEFAULT_PERSON = "default"
DEFAULT_PREFETCH_LIMIT = 5
#: Seconds a prefetch may spend searching; Hermes itself gives up after 8 s.
DEFAULT_PREFETCH_TIMEOUT = 2.0
MAX_PREFETCH_TIMEOUT = 5.0


def default_hermes_home() -> Path:
    """Hermes' home as Hermes resolves it (profiles included), else $HERMES_HOME or ~/.hermes."""
    try:
        from hermes_constants import get_hermes_home  # type: ignore[import-not-found]

        return Path(get_hermes_home())
    except Exception:
        env = os.environ.get("HERMES_HOME")
        return Path(env) if env else Path.home() / ".hermes"


def _read_file(hermes_home: Path) -> dict[str, Any]:
    path = hermes_home / CONFIG_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        log.warning("zkr: ignoring unreadable %s (%s)", path, type(exc).__name__)
        return {}
    return data if isinstance(data, dict) else {}


def _text(value: Any) -> str:
    return value.strip() if isinstance(value, str) else ""


def _expand(raw: str, hermes_home: Path) -> Path:
    text = raw.replace("${HERMES_HOME}", str(hermes_home)).replace("$HERMES_HOME", str(hermes_home))
    path = Path(text).expanduser()
    # A relative path means "inside Hermes' home", never "wherever the current directory is".
    return path if path.is_absolute() else hermes_home / path


@dataclass(frozen=True)
class ProviderConfig:
    """Resolved settings (before Hermes' per-session identity is known)."""

    hermes_home: Path
    db_path: Path
    tenant_id: str  # "" = not pinned: default from Hermes
    person_id: str  # "" = not pinned: default from Hermes
    prefetch_limit: int
    prefetch_timeout: float
    #: The person's choice of search ranking (``"ranking"`` in zkr.json), or ``None``: zkr's
    #: own setting (``$ZKR_RANKING``, else recall; :data:`zkr.settings.RANKING`) decides.
    ranking: str | None = None

    @property
    def queue_path(self) -> Path:
        """The write-behind queue belongs to its database: ``<db>.queue``."""
        return self.db_path.with_name(self.db_path.name + ".queue")

    def backup_paths(self) -> list[str]:
        """Files ``hermes backup`` would miss: only those outside Hermes' home."""
        try:
            self.db_path.resolve().relative_to(self.hermes_home.resolve())
        except ValueError:
            db = str(self.db_path.resolve())
            return [db, db + "-wal", str(self.queue_path.resolve())]
        return []


def load_config(hermes_home: str | os.PathLike[str] | None = None) -> ProviderConfig:
    """Settings for *hermes_home* (default: Hermes' current home). Never raises on bad input."""
    home = Path(hermes_home).expanduser() if hermes_home else default_hermes_home()
    data = _read_file(home)
    db_raw = _text(os.environ.get(DB.env)) or _text(data.get("db_path")) or DEFAULT_DB_NAME
    try:
        limit = int(data.get("prefetch_limit", DEFAULT_PREFETCH_LIMIT))
    except (TypeError, ValueError):
        limit = DEFAULT_PREFETCH_LIMIT
    try:
        timeout = float(data.get("prefetch_timeout", DEFAULT_PREFETCH_TIMEOUT))
    except (TypeError, ValueError):
        timeout = DEFAULT_PREFETCH_TIMEOUT
    if not timeout > 0:  # also catches NaN
        timeout = DEFAULT_PREFETCH_TIMEOUT
    ranking: str | None = _text(data.get("ranking"))
    if ranking not in RANKING.choices or os.environ.get(RANKING.env):
        # The environment outranks zkr.json here as for every setting; zkr reads $ZKR_RANKING
        # itself (and says so clearly when it is not a ranking).
        ranking = None
    return ProviderConfig(
        hermes_home=home,
        db_path=_expand(db_raw, home),
        tenant_id=_text(TENANT.value()) or _text(data.get("tenant_id")),
        person_id=_text(PERSON.value()) or _text(data.get("person_id")),
        prefetch_limit=max(1, min(limit, 20)),
        prefetch_timeout=min(timeout, MAX_PREFETCH_TIMEOUT),
        ranking=ranking,
    )


def save_config(values: dict[str, Any], hermes_home: str | os.PathLike[str]) -> Path:
    """Merge the known *values* into ``$HERMES_HOME/zkr.json`` (atomic replace, mode 0600)."""
    home = Path(hermes_home).expanduser()
    home.mkdir(parents=True, exist_ok=True)
    data = _read_file(home)
    for key in CONFIG_KEYS:
        if key in values:
            value = values[key]
            if value is None or (isinstance(value, str) and not value.strip()):
                data.pop(key, None)
            else:
                data[key] = value.strip() if isinstance(value, str) else value
    target = home / CONFIG_FILE
    fd, tmp = tempfile.mkstemp(prefix=".zkr.", suffix=".json", dir=home)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=2, sort_keys=True)
            handle.write("\n")
            handle.flush()
            os.fsync(handle.fileno())
        os.chmod(tmp, 0o600)
        os.replace(tmp, target)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    return target


@dataclass(frozen=True)
class Scope:
    """The (tenant, person) every read and write of a provider instance is confined to."""

    tenant_id: str
    person_id: str


#: Who wrote a queued row: a provider whose person is fixed (configuration, or the agent identity of
#: a CLI session) or a gateway session whose person is the chat user Hermes named.
ORIGIN_PINNED = "pinned"
ORIGIN_GATEWAY = "gateway"


@dataclass(frozen=True)
class ScopePolicy:
    """The scope of one provider, and whether its person is fixed for the whole process.

    The person is *pinned* when it comes from configuration (``ZKR_PERSON``, ``person_id`` in
    ``zkr.json``) or from the agent identity Hermes passes to a CLI session: that process serves
    exactly one person. It is not pinned when it is a gateway's ``user_id``: one gateway process
    serves many chat users, each through its own provider. ``zkr_hermes.worker.judge_row`` decides
    from this which queued rows a worker applies, leaves pending or quarantines.
    """

    scope: Scope
    person_pinned: bool

    @property
    def origin(self) -> str:
        """The tag this provider's queued rows carry."""
        return ORIGIN_PINNED if self.person_pinned else ORIGIN_GATEWAY


def resolve_scope(config: ProviderConfig, kwargs: dict[str, Any]) -> ScopePolicy:
    """Scope from config, else from what Hermes passed to ``initialize``.

    Hermes 0.19.0 passes ``user_id`` (and ``user_id_alt``) only in gateway sessions; the CLI passes
    ``agent_identity`` (the profile name). ``agent_workspace`` is the constant ``"hermes"``.
    """
    tenant = config.tenant_id or _text(kwargs.get("agent_workspace")) or DEFAULT_TENANT
    if config.person_id:
        return ScopePolicy(Scope(tenant, config.person_id), person_pinned=True)
    for key in ("user_id", "user_id_alt"):
        person = _text(str(kwargs[key]) if kwargs.get(key) is not None else "")
        if person:
            return ScopePolicy(Scope(tenant, person), person_pinned=False)
    identity = kwargs.get("agent_identity")
    person = _text(str(identity) if identity is not None else "") or DEFAULT_PERSON
    return ScopePolicy(Scope(tenant, person), person_pinned=True)
