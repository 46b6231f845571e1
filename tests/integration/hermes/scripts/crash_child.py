"""Sync one turn through Hermes' MemoryManager, report once sync_turn has returned, then wait to
be killed. Hermes runs sync_turn on its mem-sync worker; flush_pending waits for it."""

import sys
import time

from agent.memory_manager import MemoryManager
from plugins.memory import load_memory_provider

marker = sys.argv[1]
provider = load_memory_provider("zkr")
manager = MemoryManager()
manager.add_provider(provider)
manager.initialize_all(
    session_id=f"crash-{marker}",
    platform="cli",
    agent_context="primary",
    agent_identity="default",
    agent_workspace="hermes",
)
manager.sync_all(f"remember {marker}", "ok", session_id=f"crash-{marker}")
assert manager.flush_pending(timeout=30)
print("SYNCED", flush=True)
time.sleep(120)
