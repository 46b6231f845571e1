"""Construction, configuration, scope, recall and Hermes' session hooks."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.hermes.conftest import CLI_KWARGS, rows
from zkr_hermes import _compat, recall
from zkr_hermes import provider as provider_module
from zkr_hermes.config import load_config
from zkr_hermes.provider import ZkrMemoryProvider

Make = Callable[..., ZkrMemoryProvider]


def zkr_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("zkr-")]


def test_construction_is_cheap_and_side_effect_free(hermes_home: Path) -> None:
    before = zkr_threads()
    provider = ZkrMemoryProvider()
    assert provider.name == "zkr"
    assert provider.is_available() is True
    assert provider.system_prompt_block().splitlines()[0] == "# zkr Memory"
    provider.get_tool_schemas()
    provider.backup_paths()
    provider.shutdown()  # harmless without initialize
    assert zkr_threads() == before
    assert list(hermes_home.iterdir()) == []


def test_every_abstract_member_of_the_hermes_abc_is_implemented() -> None:
    base = _compat.MemoryProviderBase
    assert issubclass(ZkrMemoryProvider, base)
    abstract = getattr(base, "__abstractmethods__", frozenset())
    assert {"name", "is_available", "initialize", "get_tool_schemas"} <= set(abstract)
    assert not getattr(ZkrMemoryProvider, "__abstractmethods__", frozenset())


@pytest.mark.parametrize(
    ("kwargs", "scope"),
    [
        (CLI_KWARGS, ("hermes", "default")),
        ({**CLI_KWARGS, "agent_identity": "coder"}, ("hermes", "coder")),
        (
            {**CLI_KWARGS, "platform": "telegram", "user_id": "12345", "user_id_alt": "ana"},
            ("hermes", "12345"),
        ),
        ({**CLI_KWARGS, "user_id": "", "user_id_alt": "ana"}, ("hermes", "ana")),
        ({"platform": "cli"}, ("hermes", "default")),
        ({**CLI_KWARGS, "agent_workspace": "team"}, ("team", "default")),
    ],
)
def test_scope_defaults_from_what_hermes_passes(
    make_provider: Make, kwargs: dict[str, Any], scope: tuple[str, str]
) -> None:
    provider = make_provider(**kwargs)
    assert provider.scope is not None
    assert (provider.scope.tenant_id, provider.scope.person_id) == scope


def test_configured_scope_wins_and_environment_wins_over_file(
    make_provider: Make, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    ZkrMemoryProvider().save_config({"tenant_id": "family", "person_id": "ana"}, str(hermes_home))
    provider = make_provider(user_id="12345")
    assert provider.scope is not None
    assert (provider.scope.tenant_id, provider.scope.person_id) == ("family", "ana")
    monkeypatch.setenv("ZKR_PERSON", "bob")
    other = make_provider(user_id="12345")
    assert other.scope is not None
    assert (other.scope.tenant_id, other.scope.person_id) == ("family", "bob")


def test_save_config_keeps_known_keys_privately(hermes_home: Path) -> None:
    provider = ZkrMemoryProvider()
    keys = {field["key"] for field in provider.get_config_schema()}
    assert keys == {
        "db_path",
        "tenant_id",
        "person_id",
        "prefetch_limit",
        "prefetch_timeout",
        "ranking",
    }
    provider.save_config(
        {"db_path": "memory/zkr.db", "prefetch_limit": "3", "api_key": "nope"}, str(hermes_home)
    )
    path = hermes_home / "zkr.json"
    assert json.loads(path.read_text()) == {"db_path": "memory/zkr.db", "prefetch_limit": "3"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    provider.save_config({"prefetch_limit": ""}, str(hermes_home))  # blank clears a key
    assert json.loads(path.read_text()) == {"db_path": "memory/zkr.db"}
    config = load_config(hermes_home)
    assert config.db_path == hermes_home / "memory" / "zkr.db"
    assert config.queue_path == hermes_home / "memory" / "zkr.db.queue"


def test_configured_database_is_used(make_provider: Make, hermes_home: Path) -> None:
    ZkrMemoryProvider().save_config({"db_path": "$HERMES_HOME/data/mem.db"}, str(hermes_home))
    provider = make_provider()
    provider.handle_tool_call("zkr_store", {"text": "stored in the configured file"})
    assert rows(hermes_home / "data" / "mem.db", "SELECT count(*) FROM sources") == [(1,)]


def test_backup_paths_before_initialize(
    hermes_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§6 item 3: never relative, empty while the database lives in HERMES_HOME."""
    assert ZkrMemoryProvider().backup_paths() == []
    monkeypatch.setenv("ZKR_DB", "relative.db")  # relative = inside HERMES_HOME, not the cwd
    assert ZkrMemoryProvider().backup_paths() == []
    outside = tmp_path / "elsewhere" / "zkr.db"
    monkeypatch.setenv("ZKR_DB", str(outside))
    paths = ZkrMemoryProvider().backup_paths()
    assert paths == [
        str(outside.resolve()),
        str(outside.resolve()) + "-wal",
        str(outside.resolve()) + ".queue",
    ]
    assert all(os.path.isabs(p) for p in paths)


def test_prefetch_cites_evidence(make_provider: Make) -> None:
    provider = make_provider()
    stored = json.loads(provider.handle_tool_call("zkr_store", {"text": "Ana likes\nrooibos tea"}))
    block = provider.prefetch("rooibos")
    assert block.splitlines() == [
        "[zkr cited memory]",
        f"- Ana likes rooibos tea [evidence: {stored['evidence_id']}]",
    ]
    assert provider.prefetch("   ") == ""
    assert provider.prefetch("nothing matches this") == ""
    assert ZkrMemoryProvider().prefetch("rooibos") == ""  # not initialized


def test_prefetch_is_bounded_and_never_piles_up(
    make_provider: Make, hermes_home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """§6 item 6: a stuck search costs the turn prefetch_timeout, not Hermes' 8 s."""
    ZkrMemoryProvider().save_config({"prefetch_timeout": "0.2"}, str(hermes_home))
    provider = make_provider()
    release = threading.Event()
    calls: list[str] = []

    def stuck(db: Any, name: str, payload: Any) -> Any:
        calls.append(name)
        release.wait(30)
        return {"query": payload["query"], "items": [], "gaps": []}

    monkeypatch.setattr(provider_module.operations, "run", stuck)
    try:
        assert provider.prefetch("anything") == ""
        assert not release.is_set()  # returned while the search was still stuck
        assert provider.prefetch("again") == ""
        assert calls == ["search"]  # the second turn did not start another stuck search
    finally:
        release.set()


class SlowSearches:
    """Makes the searches of chosen queries hang until released (the rest run normally)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.release = threading.Event()
        self.slow: set[str] = set()
        self.queries: list[str] = []
        real_run = provider_module.operations.run

        def run(db: Any, name: str, payload: Any) -> Any:
            if name == "search":
                self.queries.append(payload["query"])
                if payload["query"] in self.slow:
                    self.release.wait(30)
            return real_run(db, name, payload)

        monkeypatch.setattr(provider_module.operations, "run", run)


@pytest.fixture
def searches(monkeypatch: pytest.MonkeyPatch) -> Iterator[SlowSearches]:
    slow = SlowSearches(monkeypatch)
    yield slow
    slow.release.set()


def end_turn(provider: ZkrMemoryProvider, user: str, assistant: str) -> None:
    """What Hermes 0.19.0 runs on its mem-sync worker after a turn: sync_turn, queue_prefetch."""
    provider.sync_turn(user, assistant)
    provider.queue_prefetch(user)
    running = provider._searches.running()
    if running is not None:
        assert running.done.wait(10)


def test_the_warm_recall_answers_when_the_next_turns_search_is_slow(
    make_provider: Make, searches: SlowSearches
) -> None:
    """Hermes' real sequence: queue_prefetch(<the turn that ended>) then prefetch(<a different
    next message>). A slow fresh search costs the turn FAST_WAIT_SECONDS, not prefetch_timeout."""
    provider = make_provider()
    stored = json.loads(
        provider.handle_tool_call("zkr_store", {"text": "Ana plays the cello every Sunday"})
    )
    end_turn(provider, "Does Ana play the cello?", "Yes, she does.")
    searches.slow.add("When are her lessons?")
    block = provider.prefetch("When are her lessons?")
    assert not searches.release.is_set()  # answered while the fresh search was still running
    assert searches.queries == ["Does Ana play the cello?", "When are her lessons?"]
    assert block.splitlines() == [
        "[zkr cited memory]",
        f"- Ana plays the cello every Sunday [evidence: {stored['evidence_id']}]",
    ]  # and not the turn that just ended: the model still has it


def test_a_fast_fresh_search_comes_first_and_the_warm_recall_adds_to_it(
    make_provider: Make, searches: SlowSearches, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The contract ranking: the recall ranking would also find the stored turn itself through
    # its neighbour's words ("lessons"), which is not what this test is about.
    monkeypatch.setenv("ZKR_RANKING", "contract")
    provider = make_provider()
    provider.handle_tool_call("zkr_store", {"text": "Ana plays the cello"})
    provider.handle_tool_call("zkr_store", {"text": "Lessons are on Sunday mornings"})
    end_turn(provider, "Does Ana play the cello?", "Yes.")
    lines = provider.prefetch("When are lessons?").splitlines()
    assert [line.split(" [evidence")[0] for line in lines] == [
        "[zkr cited memory]",
        "- Lessons are on Sunday mornings",
        "- Ana plays the cello",
    ]
    # Used once: the turn after that (no new queue_prefetch) gets the fresh search alone.
    assert "cello" not in provider.prefetch("When are lessons?")


def test_a_write_since_the_warm_recall_makes_it_unused(
    make_provider: Make, hermes_home: Path, searches: SlowSearches
) -> None:
    ZkrMemoryProvider().save_config({"prefetch_timeout": "0.3"}, str(hermes_home))
    provider = make_provider()
    claim = json.loads(
        provider.handle_tool_call(
            "zkr_store",
            {
                "text": "Ana lives in Lisbon",
                "claim": {
                    "subject": "Ana",
                    "predicate": "home",
                    "value": "Ana lives in Lisbon",
                    "kind": "fact",
                },
            },
        )
    )
    end_turn(provider, "Where does Ana live? Lisbon?", "In Lisbon.")
    corrected = provider.handle_tool_call(
        "zkr_correct",
        {"claim_id": claim["claim_id"], "text": "Ana moved to Porto", "value": "Porto"},
    )
    assert "error" not in json.loads(corrected)
    searches.slow.add("And her sister?")
    assert provider.prefetch("And her sister?") == ""  # not the superseded "Lisbon"
    searches.release.set()
    end_turn(provider, "Where does Ana live? Lisbon?", "Porto now.")
    provider.handle_tool_call("zkr_store", {"text": "unrelated later note"})
    assert "Lisbon" not in provider.prefetch("sister")


def test_a_search_whose_body_returned_does_not_block_the_next_one() -> None:
    """The thread of a finished search may still be alive for a moment after ``done`` is set; the
    next search must start all the same (this race emptied a recall in CI)."""
    slot = recall.SearchSlot()
    linger = threading.Event()
    finished = slot.start("queued", lambda search: None)
    assert finished is not None and finished.done.wait(10)
    # Stand-in for "returned but not yet exited": a live thread, with done set.
    finished.thread = threading.Thread(target=linger.wait, args=(10,), daemon=True)
    finished.thread.start()
    try:
        assert slot.running() is None
        assert slot.start("fresh", lambda search: None) is not None
    finally:
        linger.set()


def test_prefetch_waits_for_a_queued_search_that_starts_after_its_check(
    make_provider: Make, searches: SlowSearches, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Hermes runs queue_prefetch on its own worker: the previous turn's queued search can start
    between prefetch's check for a running search and the start of the fresh one."""
    provider = make_provider()
    stored = json.loads(provider.handle_tool_call("zkr_store", {"text": "Ana plays the cello"}))
    searches.slow.add("Does Ana play the cello?")
    provider.queue_prefetch("Does Ana play the cello?")  # hangs until released
    slot = provider._searches
    real_running = slot.running
    checks: list[Any] = []

    def check_before_the_queued_search_started() -> recall.Search | None:
        checks.append(None)
        if len(checks) == 1:
            threading.Timer(0.05, searches.release.set).start()
            return None
        return real_running()

    monkeypatch.setattr(slot, "running", check_before_the_queued_search_started)
    block = provider.prefetch("cello")
    assert len(checks) == 2  # the start failed once, then it waited for the queued search
    assert f"- Ana plays the cello [evidence: {stored['evidence_id']}]" in block.splitlines()


def test_the_warm_recall_belongs_to_its_session_and_expires(
    make_provider: Make,
    hermes_home: Path,
    searches: SlowSearches,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ZkrMemoryProvider().save_config({"prefetch_timeout": "0.3"}, str(hermes_home))
    provider = make_provider()
    provider.handle_tool_call("zkr_store", {"text": "Ana plays the cello"})
    searches.slow.update({"Does Ana play the cello?", "next question"})
    provider.sync_turn("Does Ana play the cello?", "Yes.")
    provider.queue_prefetch("Does Ana play the cello?")
    queued = provider._searches.running()
    assert queued is not None and queued.kind == "queued"
    # /new while the queued search still runs: what it finds belongs to the old session.
    provider.on_session_switch("session-2", parent_session_id="session-1")
    assert provider._session_id == "session-2"
    searches.release.set()
    assert queued.done.wait(10)
    searches.release.clear()
    assert provider.prefetch("next question") == ""
    searches.release.set()
    searches.slow.discard("Does Ana play the cello?")
    searches.release.clear()
    end_turn(provider, "Does Ana play the cello?", "Yes.")
    later = recall.monotonic() + recall.WARM_RECALL_SECONDS + 1
    monkeypatch.setattr(recall, "monotonic", lambda: later)
    assert provider.prefetch("next question") == ""
    searches.release.set()


def test_memory_tool_writes_are_mirrored_as_cited_memories(
    make_provider: Make, db_path: Path
) -> None:
    provider = make_provider()
    metadata = {"write_origin": "assistant_tool", "session_id": "session-1", "platform": "cli"}
    provider.on_memory_write("add", "user", "Prefers metric units", metadata=metadata)
    provider.on_memory_write("add", "memory", "Repo uses uv", metadata=metadata)
    assert provider._flush(10)
    claims = rows(db_path, "SELECT subject, predicate, value, status FROM claims ORDER BY subject")
    assert claims == [
        ("agent", "noted", "Repo uses uv", "accepted"),
        ("user", "noted", "Prefers metric units", "accepted"),
    ]
    assert rows(db_path, "SELECT DISTINCT kind FROM sources") == [('"integration"',)]
    provider.on_memory_write(
        "replace", "user", "Prefers imperial units", metadata={**metadata, "old_text": "metric"}
    )
    assert rows(
        db_path,
        "SELECT value, status FROM claims WHERE subject = 'user' ORDER BY recorded_from, status",
    ) == [
        ("Prefers metric units", "superseded"),
        ("Prefers imperial units", "accepted"),
    ]
    hit = json.loads(provider.handle_tool_call("zkr_search", {"query": "imperial"}))["items"]
    assert hit and hit[0]["evidence_ids"]
    provider.on_memory_write("remove", "user", "", metadata={**metadata, "old_text": "imperial"})
    assert rows(db_path, "SELECT status FROM claims WHERE value = 'Prefers imperial units'") == [
        ("retracted",)
    ]
    assert json.loads(provider.handle_tool_call("zkr_search", {"query": "imperial"}))["items"] == []


def test_replace_of_an_unknown_note_stores_it(make_provider: Make, db_path: Path) -> None:
    provider = make_provider()
    provider.on_memory_write(
        "replace", "memory", "Deploys on Fridays", metadata={"old_text": "never seen"}
    )
    assert provider._flush(10)
    assert rows(db_path, "SELECT value FROM claims") == [("Deploys on Fridays",)]


def test_session_end_flushes_and_pre_compress_cites_turns(
    make_provider: Make, db_path: Path
) -> None:
    provider = make_provider()
    assert provider.on_pre_compress([]) == ""
    provider.sync_turn("I was born in Porto", "Nice city.")
    provider.on_session_end([{"role": "user", "content": "I was born in Porto"}])
    assert rows(db_path, "SELECT count(*) FROM sources") == [(1,)]
    (evidence_id,) = rows(db_path, "SELECT id FROM evidence")[0]
    text = provider.on_pre_compress([{"role": "user", "content": "I was born in Porto"}])
    assert evidence_id in text and "zkr_search" in text
    provider.on_session_switch("session-2", reset=True)
    assert provider.on_pre_compress([]) == ""


def test_shutdown_is_idempotent_and_initialize_can_run_again(make_provider: Make) -> None:
    provider = make_provider()
    provider.shutdown()
    provider.shutdown()
    provider.initialize("session-3", **CLI_KWARGS, hermes_home=str(load_config().hermes_home))
    assert "source_id" in json.loads(
        provider.handle_tool_call("zkr_store", {"text": "after restart"})
    )
    provider.shutdown()


def test_failed_initialize_leaves_tools_answering(hermes_home: Path) -> None:
    """Hermes keeps a provider whose initialize raised: its tools must still return JSON."""
    (hermes_home / "zkr.db").write_text("this is not a database")
    provider = ZkrMemoryProvider()
    with pytest.raises(Exception):  # noqa: B017 - whatever sqlite says about a non-database
        provider.initialize("s", **CLI_KWARGS, hermes_home=str(hermes_home))
    assert json.loads(provider.handle_tool_call("zkr_search", {"query": "x"})) == {
        "error": "zkr memory is not available"
    }
    provider.sync_turn("hello", "hi")  # nothing to do, nothing raised
    assert provider.prefetch("hello") == ""
    provider.shutdown()
