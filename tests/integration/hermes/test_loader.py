"""Acceptance 1 (loader and MemoryManager) and 5 (hosts/hermes.md §6) against real Hermes 0.19.0."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.integration.hermes.conftest import make_home, needs_hermes, rows, run_script
from zkr.tools import tool_specs

pytestmark = needs_hermes

TOOLS = sorted({spec.name for spec in tool_specs()} | {"zkr_suggest"})


@pytest.fixture(scope="module")
def checked(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Any]:
    """One run of scripts/check_manager.py: the home it used and what it reported."""
    home = make_home(tmp_path_factory.mktemp("manager"))
    return home, run_script("check_manager.py", home)


def test_hermes_loader_and_memory_manager_drive_the_provider(checked: tuple[Path, Any]) -> None:
    hermes_home, out = checked
    db = hermes_home / "zkr.db"

    # Discovery, selection and loading by Hermes' own code.
    assert "zkr" in out["names"]
    assert out["dir"] == str(hermes_home / "plugins" / "zkr")
    assert out["discovered"][1] is True
    assert out["active"] == "zkr"
    assert out["is_memory_provider"] is True
    assert out["class"] == "zkr_hermes.provider.ZkrMemoryProvider"
    assert "# zkr Memory" in out["system_prompt"]
    assert out["tools"] == TOOLS

    # Each operation, checked in the database.
    ops = out["ops"]
    store, correct = ops["store"], ops["correct"]
    assert ops["search"]["items"][0]["memory"] == {"kind": "claim", "id": store["claim_id"]}
    assert rows(db, "SELECT status FROM claims WHERE id = ?", (store["claim_id"],)) == [
        ("superseded",)
    ]
    assert rows(db, "SELECT value, status FROM claims WHERE id = ?", (correct["claim_id"],)) == [
        ("Beta", "accepted")
    ]
    assert rows(db, "SELECT summary, evidence_ids FROM daily_reviews") == [
        ("Sam changed jobs", f'["{correct["evidence_id"]}"]')
    ]
    assert rows(
        db, "SELECT deleted_at IS NOT NULL FROM sources WHERE id = ?", (ops["extra"]["source_id"],)
    ) == [(1,)]
    assert ops["search_after_delete"]["items"] == []
    # Recall ranking by default: "nurses" finds the capture that says "nurse" first (contract:
    # nothing); a neighbour lent the word may follow it, never precede it.
    assert ops["nurses"]["items"][0]["evidence_ids"] == [ops["nurse"]["evidence_id"]]
    assert all(
        row == ("hermes", "default") for row in rows(db, "SELECT tenant_id, person_id FROM sources")
    )
    assert ops["unknown"] == {"error": "No memory provider handles tool 'zkr_nope'"}
    assert ops["bad"] == {"error": "zkr operation failed", "detail": "record not found"}

    # The synced turn, recall (even while a writer holds the lock) and suggestions.
    assert out["flushed"] is True
    (turn_evidence,) = rows(
        db,
        "SELECT origin_evidence_id FROM sources WHERE content = ?",
        ("User: I live in Lisbon\nAssistant: Noted, Lisbon.",),
    )[0]
    assert out["prefetch_empty"] == ""
    assert "[zkr cited memory]" in out["prefetch_while_locked"]
    assert turn_evidence in out["prefetch_while_locked"]
    assert [
        (s["claim"]["predicate"], s["claim"]["value"], s["evidence_id"])
        for s in out["suggest"]["suggestions"]
    ] == [("home", "Lisbon", turn_evidence)]
    assert turn_evidence in out["pre_compress"]

    # The built-in memory tool's writes, mirrored and corrected.
    assert rows(
        db,
        "SELECT value, status FROM claims WHERE predicate = 'noted' ORDER BY recorded_from, status",
    ) == [
        ("Prefers metric units", "superseded"),
        ("Prefers imperial units", "accepted"),
    ]
    assert out["drain"].get("abandoned_writes", 0) == 0
    assert rows(hermes_home / "zkr.db.queue", "SELECT count(*) FROM pending_turns") == [(0,)]


def test_defects_of_the_original_provider_are_absent(checked: tuple[Path, Any]) -> None:
    """hosts/hermes.md §6, each numbered item that can be observed through Hermes."""
    _, out = checked
    # 1. Only the shim is in the plugin folder, and loading it clobbers none of Hermes' modules.
    assert out["shim_files"] == ["__init__.py", "plugin.yaml"]
    assert out["agent_is_package"] is True
    # 2. The provider is a real subclass of Hermes' ABC, loaded by Hermes' own loader.
    assert out["is_memory_provider"] is True
    # 3. backup_paths works before initialize and is never relative; Hermes' backup agrees.
    assert out["backup_paths_before_init"] == []
    assert out["backup_external"] == []
    # 4/5. agent_context "primary" writes; CLI scope is (hermes, default) — checked above.
    # 6. Recall does not wait on a writer (see prefetch_while_locked above).
    assert out["prefetch_while_locked"]
    # 9. on_session_switch / on_session_end / on_memory_write are implemented and ran.
    assert out["pre_compress"]
    # 10. plugin.yaml says kind: exclusive; Hermes' general plugin manager records, never imports.
    (entry,) = out["plugin_manager"]
    assert entry["kind"] == "exclusive"
    assert entry["enabled"] is False
    assert entry["error"].startswith("exclusive plugin")


def test_backup_paths_outside_hermes_home(hermes_home: Path, tmp_path: Path) -> None:
    external = tmp_path / "elsewhere" / "zkr.db"
    out = run_script("check_manager.py", hermes_home, ZKR_DB=str(external))
    assert out["backup_paths_before_init"] == [
        str(external),
        f"{external}-wal",
        f"{external}.queue",
    ]
    assert rows(external, "SELECT count(*) FROM sources")[0][0] > 0


def test_the_warm_recall_answers_hermes_next_turn(hermes_home: Path) -> None:
    """§4 / item 6: Hermes calls queue_prefetch(<the ended turn>) then prefetch(<the next message>);
    the queued work must serve that next turn (here its own search hangs), not an exact repeat."""
    out = run_script("warm_recall.py", hermes_home)
    assert out["drained"] is True
    assert out["searched"] == ["When are her lessons?"]  # the next turn did search its message
    assert out["answered_while_search_hung"] is True
    assert out["block"].splitlines() == [
        "[zkr cited memory]",
        f"- Ana plays the cello every Sunday [evidence: {out['evidence_id']}]",
    ]
