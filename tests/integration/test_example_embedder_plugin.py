"""Issue 4, acceptance 2: a third-party embedder plugin, installed from its own distribution.

A fresh virtual environment gets zkr-core, zkr-cli and ``tests/plugins/zkr-example-embedder`` (a
tiny distribution with a ``zkr`` entry point). Then, through the real ``zkr`` command: the plugin
appears in ``zkr plugins``, ``zkr rebuild`` fills the lane's projections, and a hybrid search that
names the embedder's model without a vector finds a memory none of whose words is in the query.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "tests" / "plugins" / "zkr-example-embedder"
MODEL, VERSION = "example/concepts", "1"
SCOPE = {"tenant_id": "t", "person_id": "p"}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def zkr(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    venv = tmp_path_factory.mktemp("plugin-venv") / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(python),
         "-e", str(ROOT / "zkr-core"), "-e", str(ROOT / "zkr-cli"), "-e", str(PLUGIN)],
        check=True,
    )  # fmt: skip
    return venv / "bin" / "zkr"


def call(zkr: Path, db: Path, command: str, request: dict[str, Any] | None = None) -> Any:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    done = subprocess.run(
        [str(zkr), "--db", str(db), command],
        input=json.dumps(request).encode() if request is not None else b"",
        capture_output=True,
        env=env,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


def test_installed_embedder_plugin_end_to_end(zkr: Path, tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    listed = {p["name"]: p for p in call(zkr, db, "plugins")}
    assert listed["example-embedder"]["hooks"] == ["zkr_register_embedders"]
    assert listed["example-embedder"]["version"] == "0.1.0"

    memories = {}
    for text in (
        "Adopted a puppy named Biscuit yesterday",
        "Paid the electricity bill on Monday",
        "Booked a flight to Lisbon for the holiday",
    ):
        memories[text] = call(
            zkr, db, "remember",
            {**SCOPE, "kind": "conversation", "text": text, "captured_at": 10, "recorded_at": 10},
        )  # fmt: skip
    lane = {**SCOPE, "model": MODEL, "version": VERSION, "limit": 100}
    assert [issue["state"] for issue in call(zkr, db, "projections", lane)] == ["missing"] * 6

    report = call(zkr, db, "rebuild", {**SCOPE, "model": MODEL, "version": VERSION})
    assert report | {"batches": 0} == {
        "model": MODEL, "version": VERSION, "embedded": 6, "skipped": 0, "batches": 0,
        "complete": True,
    }  # fmt: skip
    assert call(zkr, db, "projections", lane) == []
    assert call(zkr, db, "rebuild", {**SCOPE, "model": MODEL, "version": VERSION})["embedded"] == 0

    query = "which dog do I own"
    assert call(zkr, db, "search", {**SCOPE, "query": query})["items"] == []  # no shared word
    pack = call(
        zkr, db, "search",
        {**SCOPE, "query": query, "query_embedding": {"model": MODEL, "version": VERSION}},
    )  # fmt: skip
    puppy = memories["Adopted a puppy named Biscuit yesterday"]
    top = pack["items"][0]
    assert top["memory"] == {"kind": "source", "id": puppy["source_id"]}
    assert top["relevance_basis_points"] == 10000
    assert top["evidence_ids"] == [puppy["evidence_id"]]
    assert not set(query.lower().split()) & set(top["excerpt"].lower().split())
