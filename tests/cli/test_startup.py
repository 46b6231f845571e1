"""What a contract command may import: a lexical ``search`` loads neither numpy, nor click, nor
the plugin machinery (issue 2 acceptance 6; speed itself is measured by ``nox -s bench``)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import remember_payload

_PROBE = """
import json, sys
from zkr_cli.__main__ import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    json.dump({"code": code, "modules": sorted(sys.modules)}, out)
"""

FORBIDDEN = ("numpy", "click", "zkr.plugins._manager", "zkr_cli.cli", "zkr_cli.serve")


def _modules_after(
    tmp_path: Path, cli_env: dict[str, str], argv: list[str], stdin: bytes
) -> tuple[int, set[str]]:
    report = tmp_path / "modules.json"
    subprocess.run(
        [sys.executable, "-c", _PROBE, str(report), *argv],
        input=stdin,
        capture_output=True,
        env=cli_env,
        check=True,
        timeout=60,
    )
    data = json.loads(report.read_text())
    return data["code"], set(data["modules"])


@pytest.mark.parametrize(
    ("command", "request_body"),
    [
        ("search", {"tenant_id": "a", "person_id": "sam", "query": "Acme"}),
        ("remember", remember_payload("Beta")),
        ("get", {"tenant_id": "a", "person_id": "sam", "target": {"kind": "claim", "id": "x"}}),
    ],
)
def test_contract_commands_import_no_numpy_click_or_plugins(
    tmp_path: Path, cli_env: dict[str, str], command: str, request_body: object
) -> None:
    db = tmp_path / "memory.db"
    code, _ = _modules_after(
        tmp_path, cli_env, ["--db", str(db), "remember"], json.dumps(remember_payload()).encode()
    )
    assert code == 0
    code, modules = _modules_after(
        tmp_path, cli_env, ["--db", str(db), command], json.dumps(request_body).encode()
    )
    assert command == "get" or code == 0
    for name in FORBIDDEN:
        assert name not in modules, f"{command} imported {name}"


def test_help_and_version_import_no_click(tmp_path: Path, cli_env: dict[str, str]) -> None:
    for argv in (["--help"], ["--version"], ["--db", str(tmp_path / "x.db"), "help"]):
        code, modules = _modules_after(tmp_path, cli_env, argv, b"")
        assert code == 0
        assert "click" not in modules and "numpy" not in modules
    _, modules = _modules_after(tmp_path, cli_env, ["--version"], b"")
    assert "pydantic" not in modules  # --version answers before importing zkr at all


def test_help_loads_neither_pydantic_nor_the_operation_table(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    # The general help lists the table from its generated index (zkr_cli._summaries, kept equal
    # to the table by tests/cli/test_command_help.py): it must not cost as much as a search.
    for argv in (["--help"], ["--db", str(tmp_path / "x.db"), "help"]):
        code, modules = _modules_after(tmp_path, cli_env, argv, b"")
        assert code == 0
        assert "pydantic" not in modules and "zkr.operations" not in modules, argv
        # (zkr itself may load: its names are lazy, and zkr.version is all --help needs)
        assert "zkr.models" not in modules and "zkr.db" not in modules, argv


_PLUGIN_PROBE = """
import sys
from zkr_cli.__main__ import main
code = main(sys.argv[1:])
loader = sys.modules.get("pydantic.plugin._loader")
# None: pydantic never scanned the installed distributions for its plugins.
scanned = getattr(loader, "_plugins", None) is not None
print(code, "scanned" if scanned else "not-scanned", "importlib.metadata" in sys.modules)
"""


@pytest.mark.parametrize(("preset", "expected"), [(None, "not-scanned"), ("", "scanned")])
def test_one_shot_commands_skip_the_pydantic_plugin_scan(
    tmp_path: Path, cli_env: dict[str, str], preset: str | None, expected: str
) -> None:
    env = dict(cli_env)
    env.pop("PYDANTIC_DISABLE_PLUGINS", None)
    if preset is not None:  # an explicit (empty) setting is respected: plugins are looked for
        env["PYDANTIC_DISABLE_PLUGINS"] = preset
    # A request that pydantic validates: one the fast path declines (a valid request of any
    # operation never imports pydantic at all: tests/cli/test_fast_path_cli.py).
    body = json.dumps({"tenant_id": "a"}).encode()
    done = subprocess.run(
        [sys.executable, "-c", _PLUGIN_PROBE, "--db", str(tmp_path / "m.db"), "sequence"],
        input=body,
        capture_output=True,
        env=env,
        check=True,
        timeout=60,
    )
    code, scanned, metadata = done.stdout.decode().splitlines()[-1].split()
    assert (code, scanned) == ("1", expected)  # missing field `person_id`
    # Without the scan, the loader's import of importlib.metadata is skipped too.
    assert metadata == ("True" if expected == "scanned" else "False")


# What a one-shot command with a valid request must not import (issue 27.4): each of these was
# a measurable share of its start-up (pydantic and numpy most; typing, dataclasses with inspect,
# secrets with hashlib and random, threading a few per cent of ``python -c pass`` each).
HEAVY = ("pydantic", "numpy", "typing", "dataclasses", "inspect", "secrets", "threading", "click")
# rebuild runs a plugin. (embed and apply joined the light ones with issue 27.4's last part:
# the vector and the export page are described; embed stores its vector without numpy.)
NOT_LIGHT = {"rebuild"}


def _one_shot_requests(db: Path) -> dict[str, Any]:
    """A valid request per operation of the fast path but NOT_LIGHT, on a seeded *db*."""
    import hashlib

    from zkr.db import MemoryDb

    scope = {"tenant_id": "t", "person_id": "p"}
    at = 1_767_225_700

    def capture(memory: MemoryDb, text: str, **more: object) -> Any:
        request = {**scope, "kind": "conversation", "text": text, "captured_at": at,
                   "recorded_at": at, **more}  # fmt: skip
        return memory.run("remember", request)

    with MemoryDb(db) as memory:
        work = capture(memory, "Sam works at Acme", claim={
            "subject": "Sam", "predicate": "employer", "value": "Acme", "kind": "fact",
            "valid_from": at}, locator={"device_id": "d", "provider": "p", "stream_id": "s",
                                        "segment_id": "g", "start_ms": 1, "end_ms": 2})  # fmt: skip
        tea = capture(memory, "Sam likes tea")
        city = capture(memory, "Sam lives in Porto", claim={
            "subject": "Sam", "predicate": "city", "value": "Porto", "kind": "profile_fact",
            "valid_from": at})  # fmt: skip
        digest = hashlib.sha256(b"Sam lives in Porto").hexdigest()
        vector = {"vector": [0.6, 0.8], "model": "m", "version": "1", "normalization": "l2",
                  "distance": "cosine", "input_hash": f"sha256:{digest}"}  # fmt: skip
        target = {"kind": "source", "id": city.source_id}
        memory.run("embed", {**scope, "target": target, "embedding": vector})
    with MemoryDb(db.with_name("peer.db")) as peer:  # a peer's page to apply
        peer_scope = {"tenant_id": "peer", "person_id": "p"}
        peer.run("remember", {**peer_scope, "kind": "conversation", "text": "A peer note",
                              "captured_at": at, "recorded_at": at,
                              # a claim: its valid_time has the "from" alias
                              "claim": {"subject": "Sam", "predicate": "city", "value": "Lisbon",
                                        "kind": "fact", "valid_from": at}})  # fmt: skip
        page = peer.run("export", {**peer_scope, "export_format": 1})
    tea_hash = "sha256:" + hashlib.sha256(b"Sam likes tea").hexdigest()
    later = at + 100
    return {
        "embed": {**scope, "target": {"kind": "source", "id": tea.source_id},
                  "embedding": {**vector, "input_hash": tea_hash}},
        "apply": {**peer_scope, "upstream": "peer", "after_commit": 0, "after_event_index": -1,
                  "page": page.model_dump(mode="json", by_alias=True)},
        "search": {**scope, "query": "Acme", "ranking": "recall"},
        "get": {**scope, "target": {"kind": "claim", "id": work.claim_id}},
        "locator": {**scope, "evidence_id": work.evidence_id},
        "remember": {**scope, "kind": "conversation", "text": "one more", "captured_at": later,
                     "recorded_at": later},
        "correct": {**scope, "claim_id": work.claim_id, "text": "Sam works at Globex now",
                    "value": "Globex", "valid_at": later, "recorded_at": later},
        "link": {**scope, "claim_id": work.claim_id, "evidence_id": tea.evidence_id,
                 "relation": "supports", "confidence_basis_points": 8000},
        "delete": {**scope, "source_id": tea.source_id, "deleted_at": later},
        "forget": {**scope, "source_id": tea.source_id, "erased_at": later},
        "profile": {**scope, "stability": "stable", "claim_id": city.claim_id,
                    "recorded_at": later},
        "profiles": scope,
        "review": {**scope, "day": "2026-01-01", "summary": "a day",
                   "evidence_ids": [work.evidence_id], "recorded_at": later},
        "reviews": scope,
        "projections": {**scope, "model": "m", "version": "1"},
        "export": {**scope, "export_format": 1},
        "memories": {**scope, "limit": 5},
        "history": {**scope, "claim_id": work.claim_id},
        "sequence": scope,
        "claims": {**scope, "subject": "Sam"},
        "captures": scope,
        "scopes": {"tenant_id": "t"},
    }  # fmt: skip


def test_every_light_one_shot_command_imports_nothing_heavy(
    tmp_path: Path, cli_env: dict[str, str]
) -> None:
    from zkr.fastpath.check import load_shapes

    seeded = tmp_path / "seeded.db"
    requests = _one_shot_requests(seeded)
    assert set(requests) == set(load_shapes()["operations"]) - NOT_LIGHT  # a new one is listed
    for command, request in sorted(requests.items()):
        db = tmp_path / f"{command}.db"
        shutil.copyfile(seeded, db)
        code, modules = _modules_after(
            tmp_path, cli_env, ["--db", str(db), command], json.dumps(request).encode()
        )
        assert code == 0, command
        assert [name for name in HEAVY if name in modules] == [], command
