"""The ``zkr`` command line: one JSON request on stdin, one JSON line on stdout.

This package is deliberately light to import: the contract commands (``zkr --db PATH search``) never
import click, numpy or any plugin. ``main`` lives in :mod:`zkr_cli.__main__`; the click group of the
additional and plugin commands is built by :func:`zkr_cli.cli.build_cli`.
"""

from __future__ import annotations

#: Lockstep with every zkr distribution; ``zkr --version`` prints it without importing anything.
from zkr.version import __version__

__all__ = ["__version__"]
