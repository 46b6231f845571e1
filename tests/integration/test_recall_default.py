"""Every surface ranks for recall when a request names no ranking (issue 24, acceptance 1).

Reproduction 1 of issue 24 on each surface: remember a capture "Note for later." with the claim
``me plans "fly to Berlin"``, then search ``Berlin`` without naming a ranking, lexical only. The
contract ranking cannot find it (it ranks a claim by its capture's words); recall, the default,
finds the claim. The surfaces: the library, the one-shot CLI (its start-up fast path), ``serve``,
the MCP tool (the SDK's real client), the Hermes provider's tool, the OpenClaw bridge's
``memory_search`` and ``zkr_search`` (through ``zkr openclaw-tool``, as the plugin runs it) and
zkr-web's search page. The PostgreSQL replica's ``serve`` is in tests/postgres/test_cli_serve.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from zkr import models as m
from zkr.db import MemoryDb

TENANT, PERSON = "demo", "me"
QUERY = "Berlin"


@pytest.fixture(autouse=True)
def _default_ranking(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``ZKR_RANKING`` from the shell: the test is about zkr's own default."""
    monkeypatch.delenv("ZKR_RANKING", raising=False)


def seed(path: Path, tenant: str = TENANT, person: str = PERSON) -> str:
    """The reproduction's memory; the claim's id."""
    with MemoryDb(path) as db:
        result = db.remember(
            m.RememberRequest.model_validate(
                {
                    "tenant_id": tenant,
                    "person_id": person,
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
    assert result.claim_id is not None
    return result.claim_id


def claims(pack: dict[str, Any]) -> list[str]:
    return [item["memory"]["id"] for item in pack["items"] if item["memory"]["kind"] == "claim"]


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    return {**env, "ZKR_LOAD_PLUGINS": "", **extra}


def _zkr(db: Path, *argv: str, stdin: str, **env: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "zkr_cli", "--db", str(db), *argv],
        input=stdin.encode("utf-8"),
        capture_output=True,
        env=_env(**env),
        timeout=60,
        check=False,
    )


@pytest.fixture
def db_path(tmp_path: Path) -> Path:
    return tmp_path / "memory.db"


def test_library(db_path: Path) -> None:
    claim_id = seed(db_path)
    with MemoryDb(db_path) as db:
        pack = db.search(m.SearchRequest(tenant_id=TENANT, person_id=PERSON, query=QUERY))
        assert pack.model_dump(mode="json")["items"][0]["memory"]["id"] == claim_id
        contract = db.search(
            m.SearchRequest(tenant_id=TENANT, person_id=PERSON, query=QUERY, ranking="contract")
        )
        assert contract.items == []


def test_cli_one_shot(db_path: Path) -> None:
    claim_id = seed(db_path)
    request = json.dumps({"tenant_id": TENANT, "person_id": PERSON, "query": QUERY})
    done = _zkr(db_path, "search", stdin=request)
    assert done.returncode == 0, done.stderr
    assert claims(json.loads(done.stdout)) == [claim_id]
    contract = _zkr(db_path, "search", stdin=request, ZKR_RANKING="contract")
    assert json.loads(contract.stdout)["items"] == []
    bad = _zkr(db_path, "search", stdin=request, ZKR_RANKING="best")
    assert bad.returncode == 1 and bad.stdout == b""
    assert json.loads(bad.stderr) == {
        "error": 'ZKR_RANKING must be "contract" or "recall", not "best"'
    }


def test_serve(db_path: Path) -> None:
    claim_id = seed(db_path)
    request = {"tenant_id": TENANT, "person_id": PERSON, "query": QUERY}
    lines = [
        {"command": "search", "request": request},
        {"command": "search", "request": {**request, "ranking": "contract"}},
    ]
    done = _zkr(db_path, "serve", stdin="".join(json.dumps(line) + "\n" for line in lines))
    assert done.returncode == 0, done.stderr
    default, contract = (json.loads(line) for line in done.stdout.decode().splitlines())
    assert claims(default) == [claim_id]
    assert contract["items"] == []


def test_mcp_tool(db_path: Path) -> None:
    pytest.importorskip("zkr_mcp")
    from tests.mcp.conftest import settings_for, sync_client

    claim_id = seed(db_path)
    with sync_client(settings_for(db_path, TENANT, PERSON)) as (_, client):
        result = client.call("zkr_search", {"query": QUERY})
        assert not result.is_error
        assert result.structured_content is not None
        assert claims(result.structured_content) == [claim_id]
        contract = client.call("zkr_search", {"query": QUERY, "ranking": "contract"})
        assert contract.structured_content is not None
        assert contract.structured_content["items"] == []


def test_hermes_tool(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("zkr_hermes")
    from tests.hermes.conftest import CLI_KWARGS
    from zkr_hermes.provider import ZkrMemoryProvider

    home = tmp_path / "hermes_home"
    home.mkdir()
    monkeypatch.setenv("HERMES_HOME", str(home))
    for name in ("ZKR_DB", "ZKR_TENANT_ID", "ZKR_PERSON_ID"):
        monkeypatch.delenv(name, raising=False)
    provider = ZkrMemoryProvider()
    provider.initialize("session-1", **{**CLI_KWARGS, "hermes_home": str(home)})
    try:
        scope = provider.scope
        assert scope is not None
        claim_id = seed(home / "zkr.db", scope.tenant_id, scope.person_id)
        pack = json.loads(provider.handle_tool_call("zkr_search", {"query": QUERY}))
        assert claims(pack) == [claim_id]
        contract = provider.handle_tool_call("zkr_search", {"query": QUERY, "ranking": "contract"})
        assert json.loads(contract)["items"] == []
    finally:
        provider.shutdown()


@pytest.mark.parametrize("tool", ["memory_search", "zkr_search"])
def test_openclaw_tools(db_path: Path, tool: str) -> None:
    pytest.importorskip("zkr_openclaw_bridge")
    claim_id = seed(db_path)
    call = {"tenant_id": TENANT, "person_id": PERSON, "tool": tool, "args": {"query": QUERY}}
    plugins = "zkr-openclaw-bridge"  # the commands come from its zkr_register_commands
    done = _zkr(db_path, "openclaw-tool", stdin=json.dumps(call), ZKR_LOAD_PLUGINS=plugins)
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)
    assert "details" in answer, answer
    assert claim_id in json.dumps(answer["details"])
    # The process's setting reaches the bridge through the plugin's ZKR_* environment.
    contract = _zkr(
        db_path,
        "openclaw-tool",
        stdin=json.dumps(call),
        ZKR_LOAD_PLUGINS=plugins,
        ZKR_RANKING="contract",
    )
    assert contract.returncode == 0, contract.stderr
    assert claim_id not in json.dumps(json.loads(contract.stdout)["details"])


@pytest.fixture
def web_server(tmp_path: Path) -> Iterator[Any]:
    pytest.importorskip("zkr_web")
    from tests.web.conftest import NOW, TOKEN, WebServer, start_server
    from zkr_web.app import WebConfig, create_app
    from zkr_web.security import session_path

    path = tmp_path / "web.db"
    config = WebConfig(
        db_path=str(path), tenant_id=TENANT, person_id=PERSON, token=TOKEN, clock=lambda: NOW
    )
    server, thread, base = start_server(create_app(config))
    db = MemoryDb(path)
    try:
        yield WebServer(base=base + session_path(TOKEN), token=TOKEN, db=db)
    finally:
        server.should_exit = True
        thread.join(timeout=20)
        db.close()


def test_web_search(web_server: Any) -> None:
    from zkr_web.security import session_path

    claim_id = seed(Path(web_server.db.path))
    web_server.login()
    body = web_server.request(f"/search?q={QUERY}").body
    # Every page lives under the session's secret path (zkr_web.security).
    assert f'{session_path(web_server.token)}/claim/{claim_id}"' in body
