"""The provider's search ranking: zkr's default (recall) unless the person chose one in zkr.json;
``ZKR_RANKING`` (read by zkr itself) outranks zkr.json, as the environment does for every
setting."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from zkr import models as m
from zkr.db import MemoryDb
from zkr_hermes.config import load_config, save_config
from zkr_hermes.provider import ZkrMemoryProvider

Make = Callable[..., ZkrMemoryProvider]


@pytest.fixture(autouse=True)
def _no_process_ranking(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ZKR_RANKING", raising=False)


def _berlin(provider: ZkrMemoryProvider, db_path: Path) -> str:
    scope = provider.scope
    assert scope is not None
    with MemoryDb(db_path) as db:
        made = db.remember(
            m.RememberRequest.model_validate(
                {
                    "tenant_id": scope.tenant_id,
                    "person_id": scope.person_id,
                    "kind": "conversation",
                    "text": "Note for later.",
                    "captured_at": 100,
                    "recorded_at": 100,
                    "claim": {
                        "subject": "me",
                        "predicate": "plans",
                        "value": "fly to Berlin",
                        "kind": "task",
                        "valid_from": 100,
                    },
                }
            )
        )
    assert made.claim_id is not None
    return made.claim_id


def _search(provider: ZkrMemoryProvider, **args: Any) -> list[str]:
    pack = json.loads(provider.handle_tool_call("zkr_search", {"query": "Berlin", **args}))
    return [item["memory"]["id"] for item in pack["items"]]


def test_without_configuration_zkr_decides(hermes_home: Path) -> None:
    assert load_config(hermes_home).ranking is None
    assert ZkrMemoryProvider().get_config_schema()[-1] == {
        "key": "ranking",
        "description": "Search ranking: recall (finds more) or contract (zkr 0.2.3's)",
        "default": "recall",
    }


def test_zkr_json_chooses_and_the_environment_outranks_it(
    hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    save_config({"ranking": "contract"}, hermes_home)
    assert load_config(hermes_home).ranking == "contract"
    monkeypatch.setenv("ZKR_RANKING", "recall")
    assert load_config(hermes_home).ranking is None  # zkr reads $ZKR_RANKING itself
    save_config({"ranking": "best"}, hermes_home)
    monkeypatch.delenv("ZKR_RANKING")
    assert load_config(hermes_home).ranking is None  # not a ranking: zkr's default


def test_the_tool_ranks_for_recall_unless_configured(
    make_provider: Make, hermes_home: Path, db_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    provider = make_provider()
    claim_id = _berlin(provider, db_path)
    assert _search(provider) == [claim_id]
    assert _search(provider, ranking="contract") == []  # the model may choose
    save_config({"ranking": "contract"}, hermes_home)
    configured = make_provider("session-2")
    assert _search(configured) == []
    assert _search(configured, ranking="recall") == [claim_id]
    monkeypatch.setenv("ZKR_RANKING", "recall")
    assert _search(make_provider("session-3")) == [claim_id]
