"""The README's first command, run verbatim on a fresh folder, prints a cited search result."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _quickstart_command() -> str:
    lines = (ROOT / "README.md").read_text().splitlines()
    start = lines.index("## Quick start")
    return next(line for line in lines[start:] if line.startswith("python3 -m venv"))


def test_readme_quickstart_remembers_and_finds_the_example(tmp_path: Path) -> None:
    for dist in ("zkr-core", "zkr-cli"):
        (tmp_path / dist).symlink_to(ROOT / dist, target_is_directory=True)
    done = subprocess.run(
        ["bash", "-c", _quickstart_command()],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    remembered, pack = (json.loads(line) for line in done.stdout.splitlines())
    assert pack["gaps"] == []
    assert pack["items"] == [
        {
            "evidence_ids": [remembered["evidence_id"]],
            "excerpt": "me prefers short plans",
            "memory": {"id": remembered["claim_id"], "kind": "claim"},
            "relevance_basis_points": 10000,
        }
    ]
