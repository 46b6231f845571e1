"""Regenerate the reference part of ``docs/cli.md`` from the operation table.

``python -m zkr_cli.docs [PATH]`` rewrites what lies between the two marker lines of PATH (default
``docs/cli.md``); ``--check`` changes nothing and exits 1 when the file is stale. The text between
the markers is :func:`zkr_cli.reference.markdown_reference` of every operation, in table order.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from pathlib import Path

__all__ = ["BEGIN", "END", "generated_reference", "main", "render"]

BEGIN = "<!-- BEGIN GENERATED REFERENCE: python -m zkr_cli.docs; do not edit by hand -->"
END = "<!-- END GENERATED REFERENCE -->"


def generated_reference() -> str:
    """The reference of every operation of the table, as Markdown."""
    from zkr.operations import OPERATIONS
    from zkr_cli.reference import markdown_reference

    return markdown_reference(OPERATIONS.values())


def render(document: str) -> str:
    """*document* with its generated part replaced by the current reference.

    :raises ValueError: the markers are missing or out of order.
    """
    start, end = document.find(BEGIN), document.find(END)
    if start < 0 or end < start:
        raise ValueError(f"the document lacks the markers {BEGIN!r} ... {END!r}")
    head = document[: start + len(BEGIN)]
    return f"{head}\n\n{generated_reference()}\n{document[end:]}"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    check = "--check" in args
    paths = [arg for arg in args if arg != "--check"]
    path = Path(paths[0] if paths else "docs/cli.md")
    current = path.read_text(encoding="utf-8")
    wanted = render(current)
    if wanted == current:
        return 0
    if check:
        sys.stderr.write(f"{path} is stale: run python -m zkr_cli.docs {path}\n")
        return 1
    path.write_text(wanted, encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
