"""The importers that ship with zkr-core, registered through ``zkr_register_importers`` like any
third-party importer: ``chatgpt``, ``claude``, ``mem0`` and ``notes``."""

from __future__ import annotations

from collections.abc import Callable

from zkr.plugins.default_plugins.importers.chatgpt import ChatGptImporter
from zkr.plugins.default_plugins.importers.claude import ClaudeImporter
from zkr.plugins.default_plugins.importers.mem0 import Mem0Importer
from zkr.plugins.default_plugins.importers.notes import NotesImporter
from zkr.plugins.hookspecs import hookimpl
from zkr.plugins.importers import Importer

__all__ = [
    "ChatGptImporter",
    "ClaudeImporter",
    "Mem0Importer",
    "NotesImporter",
    "zkr_register_importers",
]


@hookimpl
def zkr_register_importers(register: Callable[[Importer], None]) -> None:
    for importer in (ChatGptImporter(), ClaudeImporter(), Mem0Importer(), NotesImporter()):
        register(importer)
