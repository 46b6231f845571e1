"""Run every README's install and first-use blocks as a new user would, on a fresh machine.

    python scripts/readme_blocks.py --find-links DIR [--find-links DIR ...] [--only README]

A shell (or Python) block runs when the line before its fence is ``<!-- readme-test -->``; every
README of the repository (the root's and each distribution's) must hold one. A README's blocks
run in order in one throwaway copy of the checkout's tracked files (so ``./zkr-core`` installs as
it does from a clone), with ``bash -e -o pipefail``, stdin empty, a fresh virtualenv first on
``PATH``, an empty ``HOME`` and no ``ZKR_*`` variable. Package indexes are off for pip and uv;
the given folders (the built wheels and the locked dependencies, see ``nox -s wheels``) stand in
for them, so a block that says ``pip install zkr-mcp`` or ``uvx zkr-mcp`` gets what a release
would publish before any name is on PyPI. Prints how many blocks ran; exits 1 when one fails or
a README marks none.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
import venv
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MARKER = "<!-- readme-test -->"
_FENCE = re.compile(r"^```(sh|bash|shell|python)\s*$")
#: One block may install a few distributions from source; none may hang the run.
BLOCK_TIMEOUT_SECONDS = 900


@dataclass(frozen=True)
class Block:
    readme: Path
    line: int
    text: str
    language: str

    def command(self) -> list[str]:
        if self.language == "python":
            return ["python", "-c", self.text]
        return ["bash", "-e", "-o", "pipefail", "-c", self.text]


def readmes(root: Path) -> list[Path]:
    """The root README and every distribution's."""
    return [root / "README.md", *sorted(root.glob("zkr-*/README.md"))]


def marked_blocks(readme: Path) -> Iterator[Block]:
    """The shell blocks right after a :data:`MARKER` line, in order."""
    lines = readme.read_text("utf-8").splitlines()
    for index, line in enumerate(lines):
        fence = _FENCE.match(lines[index + 1]) if index + 1 < len(lines) else None
        if line.strip() != MARKER or fence is None:
            continue
        end = next(
            (j for j in range(index + 2, len(lines)) if lines[j].startswith("```")), len(lines)
        )
        language = "python" if fence.group(1) == "python" else "sh"
        yield Block(readme, index + 2, "\n".join(lines[index + 2 : end]) + "\n", language)


def _copy_checkout(root: Path, target: Path) -> None:
    listed = subprocess.run(
        ["git", "ls-files", "-z"], cwd=root, capture_output=True, check=True
    ).stdout.decode()
    for name in filter(None, listed.split("\0")):
        source = root / name
        if source.is_file():
            (target / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target / name)


def _environment(home: Path, bin_dir: Path, find_links: Sequence[Path]) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("ZKR_", "VIRTUAL_ENV"))}
    links = [str(path.resolve()) for path in find_links]
    env.update(
        HOME=str(home),
        PATH=f"{bin_dir}{os.pathsep}{env.get('PATH', '')}",
        VIRTUAL_ENV=str(bin_dir.parent),
        PIP_NO_INDEX="1",
        PIP_FIND_LINKS=" ".join(links),
        PIP_DISABLE_PIP_VERSION_CHECK="1",
        UV_NO_INDEX="1",
        UV_FIND_LINKS=",".join(links),
        UV_CACHE_DIR=str(home / ".cache" / "uv"),
        UV_PYTHON=sys.executable,
    )
    return env


def run_readme(readme: Path, blocks: Sequence[Block], find_links: Sequence[Path]) -> list[str]:
    """Run *blocks* of one README in a new copy of the checkout; the failures, described."""
    failures: list[str] = []
    with tempfile.TemporaryDirectory(prefix="zkr-readme-") as scratch:
        base = Path(scratch)
        work, home, fresh = base / "checkout", base / "home", base / "venv"
        home.mkdir()
        _copy_checkout(ROOT, work)
        venv.create(fresh, with_pip=True)
        env = _environment(home, fresh / "bin", find_links)
        # Every README, a distribution's too, speaks from the checkout's root ("./zkr-core").
        cwd = work
        for block in blocks:
            where = f"{readme.relative_to(ROOT)}:{block.line}"
            started = time.monotonic()
            try:
                done = subprocess.run(
                    block.command(),
                    cwd=cwd,
                    env=env,
                    stdin=subprocess.DEVNULL,
                    capture_output=True,
                    timeout=BLOCK_TIMEOUT_SECONDS,
                )
            except subprocess.TimeoutExpired:
                failures.append(f"{where}: still running after {BLOCK_TIMEOUT_SECONDS} s")
                continue
            took = time.monotonic() - started
            status = "ok" if done.returncode == 0 else f"FAILED (exit {done.returncode})"
            print(f"  {where}: {status} in {took:.0f} s", flush=True)
            if done.returncode != 0:
                tail = (done.stdout + done.stderr).decode("utf-8", "replace")[-2000:]
                failures.append(f"{where}: exit {done.returncode}\n{tail}")
    return failures


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--find-links", type=Path, action="append", required=True)
    parser.add_argument("--only", type=Path, action="append", default=[], help="one README")
    args = parser.parse_args(argv)
    chosen = [path.resolve() for path in args.only] or readmes(ROOT)
    total, failures, unmarked = 0, [], []
    for readme in chosen:
        blocks = list(marked_blocks(readme))
        if not blocks:
            unmarked.append(str(readme.relative_to(ROOT)))
            continue
        total += len(blocks)
        failures.extend(run_readme(readme, blocks, args.find_links))
    for failure in failures:
        print(f"FAILED {failure}", file=sys.stderr)
    for name in unmarked:
        print(f"FAILED {name}: no block marked {MARKER}", file=sys.stderr)
    print(f"README blocks: {total} run from {len(chosen) - len(unmarked)} READMEs, "
          f"{len(failures)} failed")  # fmt: skip
    return 1 if failures or unmarked or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
