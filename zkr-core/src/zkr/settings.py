"""What a whole process may choose through its environment, each defined once.

One row per setting, in datasette's ``Setting`` style: its name, the environment variable that
sets it for a process, its built-in default, the values it accepts and a help line. Every surface
(the library, the CLI and ``serve``, Hermes, OpenClaw, MCP, zkr-web, the PostgreSQL replica) reads
a setting from here, so its default is written in exactly one place.

Today the table holds the search ranking: a ``search`` request that names no ``ranking`` gets
:func:`default_ranking` (``$ZKR_RANKING``, else ``recall``) when it is validated. A request that
names one keeps it. This module imports neither pydantic nor the models: the one-shot fast path
(:mod:`zkr.fastpath`) reads it at start-up.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass

from zkr.enums import Ranking
from zkr.errors import SettingError

__all__ = ["RANKING", "SETTINGS", "Setting", "default_ranking", "setting_for_factory"]


@dataclass(frozen=True)
class Setting:
    """One setting: *env* chooses it for a process; left unset (or empty) it is *default*."""

    name: str
    env: str
    default: str
    choices: tuple[str, ...]
    help: str

    def value(self, environ: Mapping[str, str] | None = None) -> str:
        """The value in force: ``$env`` when set and not empty, else the default.

        :raises SettingError: ``$env`` is set to a value the setting does not accept.
        """
        raw = (os.environ if environ is None else environ).get(self.env, "")
        if raw == "":
            return self.default
        if raw not in self.choices:
            # json.dumps quotes the value and keeps the message on one line whatever it holds.
            allowed = " or ".join(json.dumps(choice) for choice in self.choices)
            raise SettingError(f"{self.env} must be {allowed}, not {json.dumps(raw)}")
        return raw


#: The ranking of a search that does not name one.
RANKING = Setting(
    name="ranking",
    env="ZKR_RANKING",
    default=Ranking.recall.value,
    choices=tuple(ranking.value for ranking in Ranking),
    help="How a search ranks when its request names no ranking: recall (built to find the "
    "memory) or contract (zkr 0.2.3's order, byte for byte).",
)

#: Every setting, by name.
SETTINGS: Mapping[str, Setting] = {setting.name: setting for setting in (RANKING,)}


def default_ranking() -> Ranking:
    """The ranking of a search whose request names none: ``$ZKR_RANKING``, else ``recall``.

    :raises SettingError: ``$ZKR_RANKING`` is neither ``recall`` nor ``contract``.
    """
    return Ranking(RANKING.value())


#: Request fields whose default is a setting: the field's ``default_factory`` -> its setting.
#: The generated artefacts (the fast path's shapes, the reference, tool schemas) read the
#: built-in default and the variable from here instead of calling the factory, so what they
#: show does not depend on the environment they were generated in.
_FACTORIES: Mapping[Callable[[], object], Setting] = {default_ranking: RANKING}


def setting_for_factory(factory: object) -> Setting | None:
    """The setting a request field's ``default_factory`` reads, or ``None``."""
    for known, setting in _FACTORIES.items():
        if factory is known:
            return setting
    return None
