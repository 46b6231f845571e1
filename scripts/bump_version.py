"""Bump every distribution's version at once: ``python scripts/bump_version.py NEW [--root DIR]``.

The distributions are released in lockstep, so one version is written in a few kinds of places:
zkr-core's ``zkr/version.py`` (which every distribution's hatch build reads), the workspace
``pyproject.toml``, each distribution's exact pins of its siblings (``zkr-core==X``), the plugin
manifests of OpenClaw and Claude Code, and the READMEs' `` `zkr X` `` (what ``zkr --version``
prints). Each kind is one pattern below; a mention of an older release in prose ("before zkr
0.3.0 ...") is left alone. Run ``uv lock`` afterwards so the lock records the new versions.
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
VERSION_FILE = Path("zkr-core/src/zkr/version.py")
_VERSION_SHAPE = re.compile(r"^\d+\.\d+\.\d+(?:(?:a|b|rc)\d+)?$")


def current_version(root: Path) -> str:
    match = re.search(r'__version__ = "([^"]+)"', (root / VERSION_FILE).read_text("utf-8"))
    if match is None:
        raise SystemExit(f"error: no __version__ in {VERSION_FILE}")
    return match.group(1)


def _patterns(old: str) -> list[tuple[str, re.Pattern[str]]]:
    """(glob, pattern): the pattern's group ``v`` is the version literal to replace."""
    v = f"(?P<v>{re.escape(old)})"
    return [
        (str(VERSION_FILE), re.compile(rf'__version__ = "{v}"')),
        ("pyproject.toml", re.compile(rf'^version = "{v}"', re.MULTILINE)),
        ("*/pyproject.toml", re.compile(rf'"zkr-[a-z0-9-]+=={v}[",\]]')),
        ("*/src/*/plugin/*.json", re.compile(rf'"version": "{v}"')),
        ("*/src/*/claude_plugin/.claude-plugin/plugin.json", re.compile(rf'"version": "{v}"')),
        ("zkr-mcp/server.json", re.compile(rf'"version": "{v}"')),
        ("*.md", re.compile(rf"`zkr {v}`")),
        ("*/*.md", re.compile(rf"`zkr {v}`")),
    ]


def literals(root: Path, version: str) -> Iterator[tuple[Path, int]]:
    """Every version literal of *version* under *root*: (file, offset)."""
    for pattern_glob, pattern in _patterns(version):
        for path in sorted(root.glob(pattern_glob)):
            if "node_modules" in path.parts or ".venv" in path.parts:
                continue
            for match in pattern.finditer(path.read_text("utf-8")):
                yield path, match.start("v")


def bump(root: Path, new: str) -> list[Path]:
    """Rewrite every literal of the current version as *new*; the files changed."""
    if not _VERSION_SHAPE.match(new):
        raise SystemExit(f"error: {new!r} is not a version like 1.2.3 or 1.2.3rc1")
    old = current_version(root)
    if new == old:
        raise SystemExit(f"error: the version is already {old}")
    offsets: dict[Path, list[int]] = {}
    for path, offset in literals(root, old):
        offsets.setdefault(path, []).append(offset)
    for path, starts in offsets.items():
        text = path.read_text("utf-8")
        for start in sorted(set(starts), reverse=True):
            text = text[:start] + new + text[start + len(old) :]
        path.write_text(text, "utf-8")
    return sorted(offsets)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("version", help="the new version, e.g. 0.4.0")
    parser.add_argument("--root", type=Path, default=ROOT, help="the checkout (default: this one)")
    parser.add_argument("--no-lock", action="store_true", help="do not run `uv lock` afterwards")
    args = parser.parse_args(argv)
    old = current_version(args.root)
    changed = bump(args.root, args.version)
    for path in changed:
        print(f"{path.relative_to(args.root)}: {old} -> {args.version}")
    if not args.no_lock:
        subprocess.run(["uv", "lock", "-q"], cwd=args.root, check=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
