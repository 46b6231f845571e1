"""The Hermes base class, imported lazily so that zkr-hermes works (and is tested) without Hermes.

Hermes 0.19.0 is not a dependency of zkr-hermes: its exact pins would fight users' resolvers, and it
installs generic top-level packages (``agent``, ``tools``, ...). Inside Hermes' interpreter the
real ``agent.memory_provider.MemoryProvider`` is used, so Hermes' loader sees a true subclass;
elsewhere a stand-in with the same members and defaults takes its place.
"""

from __future__ import annotations

import json
from abc import ABC, abstractmethod
from typing import Any

__all__ = ["MemoryProviderBase", "hermes_available", "tool_error"]


class _FallbackMemoryProvider(ABC):
    """The members of Hermes 0.19.0's ``MemoryProvider`` ABC, with its defaults."""

    @property
    @abstractmethod
    def name(self) -> str: ...

    @abstractmethod
    def is_available(self) -> bool: ...

    @abstractmethod
    def initialize(self, session_id: str, **kwargs: Any) -> None: ...

    @abstractmethod
    def get_tool_schemas(self) -> list[dict[str, Any]]: ...

    def system_prompt_block(self) -> str:
        return ""

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        return ""

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        return None

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        return None

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        raise NotImplementedError

    def shutdown(self) -> None:
        return None

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        return None

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        return None

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        return None

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        return ""

    def on_delegation(
        self, task: str, result: str, *, child_session_id: str = "", **kwargs: Any
    ) -> None:
        return None

    def get_config_schema(self) -> list[dict[str, Any]]:
        return []

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        return None

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        return None

    def backup_paths(self) -> list[str]:
        return []


def _load_base() -> tuple[type, bool]:
    try:
        from agent.memory_provider import MemoryProvider  # type: ignore[import-not-found]
    except ImportError:
        return _FallbackMemoryProvider, False
    return MemoryProvider, True


MemoryProviderBase, hermes_available = _load_base()


def tool_error(message: str, **extra: Any) -> str:
    """``{"error": message, ...}`` as JSON: the shape of Hermes' ``tools.registry.tool_error``.

    Written here rather than imported so that a tool result never depends on Hermes' ``tools``
    package being importable.
    """
    return json.dumps({"error": str(message), **extra}, ensure_ascii=False)
