"""zkr-core stays small: no module above 500 lines, no function above cyclomatic complexity 15.

    python scripts/check_size.py            # nox -s lint runs it; exit status 1 on a problem

Lines are a file's lines (``wc -l``); complexity is radon's cyclomatic complexity of each function,
method and nested function. A module over a limit is one idea too many, a function over it a
decision table written as branches: split it along its seam (docs/architecture.md, "Module size").

:data:`PENDING` holds what is over a limit today and being split: each run prints it, and fails
when one of them grows, when a module or function not listed goes over, or when a listed one is
back within the limits (strike its line then, so the list only shrinks).
"""

from __future__ import annotations

import sys
from collections.abc import Iterator, Mapping
from pathlib import Path

from radon.complexity import cc_visit
from radon.visitors import Class, Function

ROOT = Path(__file__).resolve().parents[1]
SOURCE = ROOT / "zkr-core" / "src"
MAX_LINES = 500
MAX_COMPLEXITY = 15

#: ``path`` (a module's lines) or ``path:function`` (its complexity), relative to zkr-core/src,
#: with today's figure; see the module docstring.
PENDING: dict[str, int] = {}


def _functions(blocks: list[Function | Class], prefix: str = "") -> Iterator[tuple[str, int]]:
    for block in blocks:
        if isinstance(block, Class):
            yield from _functions(list(block.methods), f"{prefix}{block.name}.")
            yield from _functions(list(block.inner_classes), f"{prefix}{block.name}.")
        else:
            yield f"{prefix}{block.name}", block.complexity
            yield from _functions(list(block.closures), f"{prefix}{block.name}.")


def measure(source: Path = SOURCE) -> dict[str, int]:
    """Every module's lines and every function's complexity under *source*, keyed as PENDING."""
    found: dict[str, int] = {}
    for path in sorted(source.rglob("*.py")):
        name = path.relative_to(source).as_posix()
        text = path.read_text(encoding="utf-8")
        found[name] = len(text.splitlines())
        for function, complexity in _functions(cc_visit(text)):
            found[f"{name}:{function}"] = max(complexity, found.get(f"{name}:{function}", 0))
    return found


def _limit(key: str) -> int:
    return MAX_COMPLEXITY if ":" in key else MAX_LINES


def problems(found: Mapping[str, int], pending: Mapping[str, int] = PENDING) -> list[str]:
    """What the check fails on, one line each (empty: all is well)."""
    lines = []
    for key, value in sorted(found.items()):
        what = "complexity" if ":" in key else "lines"
        if value <= _limit(key):
            continue
        if key not in pending:
            lines.append(f"{key}: {value} {what} (at most {_limit(key)})")
        elif value > pending[key]:
            lines.append(f"{key}: {value} {what}, grew from {pending[key]} (at most {_limit(key)})")
    for key in sorted(pending):
        if found.get(key, 0) <= _limit(key):
            lines.append(f"{key}: within the limits now: strike it from PENDING")
    return lines


def main() -> int:
    found = measure()
    for key, value in sorted(PENDING.items()):
        now = found.get(key)
        print(f"pending: {key} {now if now is not None else 'gone'} (was {value})")
    failures = problems(found)
    for line in failures:
        print(f"error: {line}", file=sys.stderr)
    return 1 if failures else 0


if __name__ == "__main__":
    raise SystemExit(main())
