"""The command line every generator of a committed file shares.

A generator (``python -m zkr._generate_methods``, ``python -m zkr.fastpath.generate``, the hosts'
tool lists and docs) renders text from the operation table; this module prints it, writes it, or
checks that the committed copy is current. ``nox -s generate`` runs each with ``--write``, and
with ``--check`` in CI, where a stale file fails the build and changes nothing.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path

__all__ = ["generator_main", "refresh"]


def refresh(wanted: Mapping[Path, str], *, check: bool, command: str) -> int:
    """Write every file of *wanted* whose text differs; with *check*, write nothing and name
    each stale file on stderr with the *command* that rewrites it.

    :returns: 1 when *check* found a stale file, else 0 (the exit status).
    """
    stale = [
        path
        for path, text in wanted.items()
        if not path.exists() or path.read_text(encoding="utf-8") != text
    ]
    if check:
        for path in stale:
            sys.stderr.write(f"{path} is stale: run {command}\n")
        return 1 if stale else 0
    for path in stale:
        path.write_text(wanted[path], encoding="utf-8")
    return 0


def generator_main(
    path: Path, render: Callable[[], str], *, module: str, argv: Sequence[str] | None = None
) -> int:
    """``python -m MODULE [--write | --check]``: print what *render* gives, write it to *path*,
    or exit 1 when *path* differs from it.

    :param module: the generator's module, named in ``--help`` and in the stale-file message.
    """
    parser = argparse.ArgumentParser(prog=f"python -m {module}")
    parser.add_argument("--write", action="store_true", help=f"write {path.name}")
    parser.add_argument("--check", action="store_true", help="exit 1 when it is stale")
    args = parser.parse_args(argv)
    text = render()
    if args.write or args.check:
        return refresh({path: text}, check=args.check, command=f"python -m {module} --write")
    sys.stdout.write(text)
    return 0
