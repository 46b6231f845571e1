"""zkr-web: a local page where a person sees, audits and corrects what their agent remembers.

``create_app(WebConfig(...))`` is the ASGI application; ``zkr-web`` (or ``zkr web``) serves it.
The web stack is imported on first use, so zkr's plugin loader (which imports
``zkr_web.zkr_plugin``) does not pay for it on every command.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from zkr_web.app import WebConfig, create_app

__all__ = ["WebConfig", "create_app"]


def __getattr__(name: str) -> Any:
    if name in __all__:
        from zkr_web import app

        return getattr(app, name)
    raise AttributeError(f"module 'zkr_web' has no attribute {name!r}")
