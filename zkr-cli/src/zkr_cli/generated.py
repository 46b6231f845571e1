"""Committed files a generator writes: bring them up to date, or (``--check``) name the stale ones.

One definition for the generators of the zkr-cli family (``python -m zkr_cli.docs``,
``python -m zkr_openclaw_bridge.tool_list``); their drift tests and ``nox -s generate --check`` run
them with ``--check``.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from pathlib import Path

__all__ = ["refresh"]


def refresh(wanted: Mapping[Path, str], *, check: bool, command: str) -> int:
    """Write each file of *wanted* (path: its generated text) whose text differs, and answer 0.

    :param check: write nothing; name each stale file on stderr with the *command* that refreshes
        it, and answer 1 if any is stale.
    """
    stale = [path for path, text in wanted.items() if path.read_text(encoding="utf-8") != text]
    if check:
        for path in stale:
            sys.stderr.write(f"{path} is stale: run {command}\n")
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path], encoding="utf-8")
    return 0
