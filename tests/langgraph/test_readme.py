"""The README's example runs as written (in a fresh directory), so the documentation stays true."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "zkr-langgraph" / "README.md"


def test_the_readme_example_runs_and_its_history_holds_both_versions(tmp_path: Path) -> None:
    (example,) = re.findall(r"```python\n(.*?)\n```", README.read_text(encoding="utf-8"), re.S)
    probe = (
        example
        + "\nimport json\nfrom zkr import MemoryDb\n"
        + "with MemoryDb('memory.db') as db:\n"
        + "    chain = db.run('history', {'tenant_id': 'acme', 'person_id': 'ana',"
        + " 'claim_id': item.citation.claim_id})\n"
        + "print(json.dumps([v.claim.value for v in chain.versions]))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    printed = done.stdout.strip().splitlines()
    assert printed[0].startswith("{'lives_in': 'Porto'} Citation(claim_id=")
    assert json.loads(printed[-1]) == ['{"lives_in":"Lisbon"}', '{"lives_in":"Porto"}']
