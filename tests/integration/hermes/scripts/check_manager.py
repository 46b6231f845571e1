"""Hermes' own loader finds the installed provider and its MemoryManager drives every hook.

Run with HERMES_HOME set (shim installed, ``memory: provider: zkr``). Prints one JSON line that
the test checks against the database.
"""

import json
import os
import sqlite3
import sys
from pathlib import Path

home = Path(os.environ["HERMES_HOME"])

import agent  # noqa: E402
from agent.memory_manager import MemoryManager  # noqa: E402
from agent.memory_provider import MemoryProvider  # noqa: E402
from plugins.memory import (  # noqa: E402
    _get_active_memory_provider,
    discover_memory_providers,
    find_provider_dir,
    list_memory_provider_names,
    load_memory_provider,
)

out = {}
out["names"] = list_memory_provider_names()
out["dir"] = str(find_provider_dir("zkr"))
out["discovered"] = {n: [d, a] for n, d, a in discover_memory_providers()}.get("zkr")
out["active"] = _get_active_memory_provider()
provider = load_memory_provider("zkr")
out["is_memory_provider"] = isinstance(provider, MemoryProvider)
out["class"] = f"{type(provider).__module__}.{type(provider).__name__}"
out["backup_paths_before_init"] = provider.backup_paths()

manager = MemoryManager()
manager.add_provider(provider)
manager.initialize_all(
    session_id="sess-1",
    platform="cli",
    agent_context="primary",
    agent_identity="default",
    agent_workspace="hermes",
)
out["system_prompt"] = manager.build_system_prompt()
out["tools"] = sorted(manager.get_all_tool_names())


def tool(name, **args):
    raw = manager.handle_tool_call(name, args)
    assert isinstance(raw, str), raw
    return json.loads(raw)


ops = {}
ops["store"] = tool(
    "zkr_store",
    text="Sam works at Acme",
    claim={"subject": "Sam", "predicate": "employer", "value": "Acme", "kind": "fact"},
)
ops["search"] = tool("zkr_search", query="Acme")
ops["correct"] = tool(
    "zkr_correct", claim_id=ops["store"]["claim_id"], text="Sam now works at Beta", value="Beta"
)
ops["reflect"] = tool(
    "zkr_reflect",
    day="2026-05-01",
    summary="Sam changed jobs",
    evidence_ids=[ops["correct"]["evidence_id"]],
)
ops["extra"] = tool("zkr_store", text="A note to delete")
ops["delete"] = tool("zkr_delete", source_id=ops["extra"]["source_id"])
ops["search_after_delete"] = tool("zkr_search", query="note to delete")
# Recall ranking (the provider's default): a stemmed word finds the memory it was stored as.
ops["nurse"] = tool("zkr_store", text="My sister works as a nurse")
ops["nurses"] = tool("zkr_search", query="nurses")
ops["unknown"] = tool("zkr_nope")
ops["bad"] = tool("zkr_delete", source_id="missing")
out["ops"] = ops

manager.on_turn_start(1, "I live in Lisbon")
out["prefetch_empty"] = manager.prefetch_all("I live in Lisbon")
manager.sync_all(
    "I live in Lisbon",
    "Noted, Lisbon.",
    session_id="sess-1",
    messages=[
        {"role": "user", "content": "I live in Lisbon"},
        {"role": "assistant", "content": "Noted, Lisbon."},
    ],
)
manager.queue_prefetch_all("I live in Lisbon", session_id="sess-1")
out["flushed"] = manager.flush_pending(timeout=10) and provider._flush(10)
out["suggest"] = tool("zkr_suggest", turns=1)

# Recall runs while another writer holds the database's write lock (WAL readers do not wait).
lock = sqlite3.connect(home / "zkr.db", isolation_level=None)
lock.execute("BEGIN IMMEDIATE")
out["prefetch_while_locked"] = manager.prefetch_all("Where do I live? Lisbon")
lock.execute("ROLLBACK")
lock.close()

manager.on_memory_write(
    "add",
    "user",
    "Prefers metric units",
    metadata={"write_origin": "assistant_tool", "session_id": "sess-1"},
)
manager.on_memory_write(
    "replace", "user", "Prefers imperial units", metadata={"old_text": "metric units"}
)
out["pre_compress"] = manager.on_pre_compress([{"role": "user", "content": "I live in Lisbon"}])
manager.on_session_switch("sess-2", parent_session_id="sess-1", reset=True)
manager.on_session_end([{"role": "user", "content": "bye"}])
manager.shutdown_all()
out["drain"] = manager.shutdown_drain_state

# Nothing of Hermes was clobbered by loading the provider (the original shipped a test module
# in its plugin folder that replaced `agent` and `tools`).
out["agent_is_package"] = hasattr(agent, "__path__")
from hermes_cli.plugins import PluginManager  # noqa: E402

plugin_manager = PluginManager()
plugin_manager.discover_and_load()
out["plugin_manager"] = [p for p in plugin_manager.list_plugins() if p.get("name") == "zkr"]
from hermes_cli.backup import _collect_memory_provider_external_paths  # noqa: E402

out["backup_external"] = [str(p) for p in _collect_memory_provider_external_paths()]
out["shim_files"] = sorted(p.name for p in Path(out["dir"]).iterdir() if p.name != "__pycache__")
print(json.dumps(out), file=sys.stdout)
