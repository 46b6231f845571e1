"""Smoke test of an environment where every zkr distribution was installed from built wheels
(``nox -s wheels`` runs it with that environment's Python): each console script answers ``--help``,
``zkr mcp`` and ``zkr web`` are there, and ``zkr`` remembers and finds a memory."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from importlib.metadata import distributions
from pathlib import Path

BIN = Path(sys.executable).parent


def run(*argv: str, stdin: str | None = None) -> str:
    done = subprocess.run(
        [str(BIN / argv[0]), *argv[1:]], input=stdin, capture_output=True, text=True, timeout=300
    )
    if done.returncode != 0:
        raise SystemExit(f"smoke: {' '.join(argv)} exited {done.returncode}: {done.stderr[-500:]}")
    return done.stdout


def main() -> int:
    installed = {
        d.metadata["Name"]: d for d in distributions() if d.metadata["Name"].startswith("zkr-")
    }
    scripts = sorted(
        ep.name
        for d in installed.values()
        for ep in d.entry_points
        if ep.group == "console_scripts"
    )
    for script in scripts:
        run(script, "--help")
    run("zkr", "mcp", "--help")
    run("zkr", "web", "--help")
    version = run("zkr", "--version").strip()
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "memory.db")
        scope = {"tenant_id": "smoke", "person_id": "me"}
        remembered = {**scope, "kind": "conversation", "text": "I keep bees on the roof.",
                      "captured_at": 1, "recorded_at": 1}  # fmt: skip
        run("zkr", "--db", db, "remember", stdin=json.dumps(remembered))
        pack = json.loads(
            run("zkr", "--db", db, "search", stdin=json.dumps({**scope, "query": "bees"}))
        )
        if not pack["items"]:
            raise SystemExit("smoke: the remembered memory was not found")
    print(
        f"smoke: {len(installed)} distributions, {version}, {len(scripts)} console scripts answer"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
