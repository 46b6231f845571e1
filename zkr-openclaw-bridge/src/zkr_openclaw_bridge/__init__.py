"""zkr as the memory slot of OpenClaw 2026.7.1-2.

The OpenClaw plugin itself is JavaScript shipped as package data (``plugin/``); it runs the ``zkr``
command, which this package extends with ``openclaw-tool`` / ``openclaw-serve``. Turning zkr's cited
items into OpenClaw's memory shapes happens here only: :mod:`zkr_openclaw_bridge.mapping` (pure
shapes) and :mod:`zkr_openclaw_bridge.tools` (tool calls against a database).
:mod:`zkr_openclaw_bridge.install` copies the plugin where OpenClaw loads it.

Kept empty on purpose: zkr imports this package for every non-contract command.
"""

from __future__ import annotations

from zkr.version import __version__

__all__ = ["__version__"]
