"""Issue 4, acceptance 2 with a real model: the ``zkr-embed-minilm`` distribution (all-MiniLM-L6-v2,
ONNX) installed into a fresh venv from the repository and PyPI, run through the ``zkr`` command.

It is listed by ``zkr plugins``, ``zkr rebuild`` fills the lane, a hybrid search finds a memory by
meaning (no word shared with the query), and the plugin's own suite (zkr's ``EmbedderContract``)
passes. Needs uv and the package index (or uv's cache).
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
PLUGIN = ROOT / "zkr-embed-minilm"
MODEL, VERSION = "sentence-transformers/all-MiniLM-L6-v2", "onnx-w8-8199be6f"
SCOPE = {"tenant_id": "t", "person_id": "p"}

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def venv(tmp_path_factory: pytest.TempPathFactory) -> Path:
    uv = shutil.which("uv")
    if uv is None:
        pytest.skip("uv is not installed")
    venv = tmp_path_factory.mktemp("minilm-venv") / "venv"
    subprocess.run([uv, "venv", "-q", "--python", sys.executable, str(venv)], check=True)
    subprocess.run(
        [uv, "pip", "install", "-q", "--python", str(venv / "bin" / "python"), "pytest>=8",
         "-e", str(ROOT / "zkr-core"), "-e", str(ROOT / "zkr-cli"), "-e", str(PLUGIN)],
        check=True,
    )  # fmt: skip
    return venv


def environment() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    env["ZKR_MINILM_THREADS"] = "1"  # 2 shared cores: don't spin
    return env


def call(venv: Path, db: Path, command: str, request: dict[str, Any] | None = None) -> Any:
    done = subprocess.run(
        [str(venv / "bin" / "zkr"), "--db", str(db), command],
        input=json.dumps(request).encode() if request is not None else b"",
        capture_output=True,
        env=environment(),
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


def test_minilm_plugin_finds_memories_by_meaning(venv: Path, tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    assert "minilm" in {p["name"] for p in call(venv, db, "plugins")}
    capture = {**SCOPE, "kind": "conversation", "captured_at": 10, "recorded_at": 10}
    memories = {
        text: call(venv, db, "remember", {**capture, "text": text})
        for text in (
            "Adopted a puppy named Biscuit yesterday",
            "Paid the electricity bill on Monday",
            "Booked a flight to Lisbon for the holiday",
            "Sam works at Acme as an engineer",
        )
    }
    report = call(venv, db, "rebuild", {**SCOPE, "model": MODEL, "version": VERSION})
    assert (report["embedded"], report["complete"]) == (8, True)
    lane = {**SCOPE, "model": MODEL, "version": VERSION, "limit": 100}
    assert call(venv, db, "projections", lane) == []

    query = "which dog do I own"
    assert call(venv, db, "search", {**SCOPE, "query": query})["items"] == []
    pack = call(
        venv, db, "search",
        {**SCOPE, "query": query, "query_embedding": {"model": MODEL, "version": VERSION}},
    )  # fmt: skip
    puppy = memories["Adopted a puppy named Biscuit yesterday"]
    assert pack["items"][0]["memory"]["id"] in (puppy["source_id"], puppy["evidence_id"])
    assert pack["items"][0]["relevance_basis_points"] == 10000


def test_minilm_plugin_passes_its_own_contract_suite(venv: Path) -> None:
    done = subprocess.run(
        [str(venv / "bin" / "python"), "-m", "pytest", "-q", "-p", "no:cacheprovider",
         str(ROOT / "tests" / "embed_minilm")],
        cwd=ROOT, capture_output=True, env=environment(), check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout.decode()[-3000:]
