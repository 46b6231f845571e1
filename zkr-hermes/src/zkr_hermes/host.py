"""Hermes as a zkr host: what ``zkr_register_hosts`` registers."""

from __future__ import annotations

from typing import ClassVar

from zkr.plugins.hosts import HostAdapter, HostHealth

__all__ = ["HermesHost"]


class HermesHost(HostAdapter):
    """Hermes Agent 0.19.0: a ``MemoryProvider`` loaded from ``$HERMES_HOME/plugins/zkr``."""

    name: ClassVar[str] = "hermes"
    install: ClassVar[str] = (
        "Install zkr-hermes into Hermes' Python environment, run `zkr-hermes install` (it writes "
        "$HERMES_HOME/plugins/zkr), then set `memory: provider: zkr` in Hermes' config.yaml."
    )

    def health(self) -> HostHealth:
        """The shim is installed and current, and Hermes' base class is importable here."""
        try:
            from zkr_hermes._compat import hermes_available
            from zkr_hermes.config import default_hermes_home
            from zkr_hermes.install import PLUGIN_NAME, shim_files

            folder = default_hermes_home() / "plugins" / PLUGIN_NAME
            if not (folder / "__init__.py").is_file():
                return HostHealth(ok=False, detail=f"shim not installed in {folder}")
            stale = [
                name
                for name, content in shim_files().items()
                if not (folder / name).is_file()
                or (folder / name).read_text(encoding="utf-8") != content
            ]
            if stale:
                return HostHealth(
                    ok=False, detail=f"shim out of date ({', '.join(stale)}): rerun install"
                )
            extra = sorted(
                p.name for p in folder.iterdir() if p.name not in {*shim_files(), "__pycache__"}
            )
            if extra:
                return HostHealth(
                    ok=False, detail=f"unexpected files Hermes would import: {', '.join(extra)}"
                )
            if not hermes_available:
                return HostHealth(
                    ok=False,
                    detail=f"shim in {folder}, but hermes-agent is not importable from this Python",
                )
        except Exception as exc:  # a health check never raises
            return HostHealth(ok=False, detail=f"check failed ({type(exc).__name__})")
        return HostHealth(ok=True, detail=f"shim in {folder}")
