"""``--embedder``: new memories are embedded in the background and search is hybrid; without it,
search is lexical. The embedder is the example plugin of this repository (a real, deterministic
concept embedder), registered the way an installed plugin is."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.conftest import settings_for, sync_client
from zkr_mcp.tools import mcp_tools

TOOL = {entry.operation.name: name for name, entry in mcp_tools().items()}
PLUGIN = Path(__file__).parents[1] / "plugins/zkr-example-embedder/src/zkr_example_embedder"
LANE = ("example/concepts", "1")


@pytest.fixture
def concept_embedder(registered_plugin: Callable[..., Any]) -> None:
    spec = importlib.util.spec_from_file_location("zkr_example_embedder", PLUGIN / "__init__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    registered_plugin(module, name="zkr-example-embedder")


def _cited(result: Any) -> set[str]:
    assert not result.is_error, result.content
    return {item["memory"]["id"] for item in result.structured_content["items"]}


@pytest.mark.usefixtures("concept_embedder")
def test_background_embedding_makes_search_hybrid(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    with sync_client(settings_for(db, embedder=LANE)) as (app, client):
        assert app.embedder is not None
        dog = client.call(TOOL["remember"], {"kind": "conversation", "text": "Biscuit the dog"})
        client.call(TOOL["remember"], {"kind": "conversation", "text": "I paid the rent"})
        assert app.embedder.idle.wait(60), "the background embedder did not finish"
        scope = {"tenant_id": "tenant-a", "person_id": "person-a"}
        lane = {"model": LANE[0], "version": LANE[1]}
        assert app.db.run("projections", {**scope, **lane}) == []
        # No word in common with the memory: only the dense lane can find it.
        hybrid = _cited(client.call(TOOL["search"], {"query": "puppy", "limit": 1}))
        assert dog.structured_content is not None
        assert hybrid & set(dog.structured_content.values())
        # A later write is embedded too, without any tool asking.
        client.call(TOOL["remember"], {"kind": "conversation", "text": "my kitten"})
        assert app.embedder.idle.wait(60)
        assert app.db.run("projections", {**scope, **lane}) == []
    with sync_client(settings_for(db)) as (_, lexical):
        assert _cited(lexical.call(TOOL["search"], {"query": "puppy"})) == set()
