"""Acceptance 1, end to end: the real ``hermes chat -q`` CLI with a fake LLM on 127.0.0.1.

Turn 1 ("Remember that I like green tea.") makes the model call ``zkr_store``; turn 2, a new
``hermes chat`` process, gets the stored memory injected by prefetch. Each effect is read back
from the zkr database.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

from tests.integration.hermes.conftest import bin_path, hermes_env, needs_hermes, rows
from tests.integration.hermes.fake_llm import STORE_ARGS, FakeLlm

pytestmark = needs_hermes


def chat(home: Path, query: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [bin_path("hermes"), "chat", "-q", query],
        env=hermes_env(home),
        cwd=home.parent,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=180,
    )


def last_user_text(request: dict[str, object]) -> str:
    messages = request["messages"]
    assert isinstance(messages, list)
    user = [m for m in messages if m.get("role") == "user"][-1]
    content = user["content"]
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content)
    return str(content)


def test_hermes_chat_stores_recalls_and_persists_turns(hermes_home: Path) -> None:
    db = hermes_home / "zkr.db"
    with FakeLlm() as llm:
        (hermes_home / "config.yaml").write_text(
            "model:\n  provider: custom\n"
            f"  base_url: {llm.base_url}\n  default: fake-model\n  api_key: sk-fake\n"
            "memory:\n  provider: zkr\n"
        )
        first = chat(hermes_home, "Remember that I like green tea.")
        assert first.returncode == 0, first.stdout[-3000:] + first.stderr[-3000:]
        assert "Noted: you like green tea." in first.stdout
        turn_one = list(llm.chats)

        # The model saw the provider's tools and system prompt block.
        tools = {t["function"]["name"] for t in turn_one[0]["tools"]}
        assert {"zkr_store", "zkr_search", "zkr_suggest"} <= tools
        system = next(m["content"] for m in turn_one[0]["messages"] if m["role"] == "system")
        assert "# zkr Memory" in system

        # The model's tool call landed in zkr, as a typed claim.
        assert rows(
            db,
            "SELECT s.content, c.subject, c.predicate, c.value, c.kind FROM sources s "
            "JOIN claims c ON c.id = s.origin_claim_id",
        ) == [(STORE_ARGS["text"], "user", "likes", "green tea", "preference")]
        # The completed turn was persisted (write-behind queue, flushed at exit), in CLI scope.
        assert rows(
            db,
            "SELECT tenant_id, person_id, kind FROM sources "
            "WHERE ingestion_key LIKE 'hermes-turn:%'",
        ) == [("hermes", "default", '"conversation"')]
        (turn_text,) = rows(
            db, "SELECT content FROM sources WHERE ingestion_key LIKE 'hermes-turn:%'"
        )[0]
        assert (
            turn_text
            == "User: Remember that I like green tea.\nAssistant: Noted: you like green tea."
        )
        assert rows(hermes_home / "zkr.db.queue", "SELECT count(*) FROM pending_turns") == [(0,)]

        second = chat(hermes_home, "What tea do I like?")
        assert second.returncode == 0, second.stdout[-3000:] + second.stderr[-3000:]
        assert "You like green tea." in second.stdout
        turn_two = llm.chats[len(turn_one) :]

    # Prefetch injected cited memory into the next turn's request; its evidence ids are real.
    injected = last_user_text(turn_two[0])
    assert "<memory-context>" in injected and "[zkr cited memory]" in injected
    assert "green tea" in injected
    cited = re.findall(r"\[evidence: ([0-9a-f, ]+)\]", injected)
    evidence_ids = {e.strip() for group in cited for e in group.split(",")}
    assert evidence_ids
    live = {r[0] for r in rows(db, "SELECT id FROM evidence WHERE deleted_at IS NULL")}
    assert evidence_ids <= live
    # The second turn was persisted too.
    assert rows(db, "SELECT count(*) FROM sources WHERE ingestion_key LIKE 'hermes-turn:%'") == [
        (2,)
    ]
