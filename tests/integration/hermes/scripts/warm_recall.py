"""Hermes' own between-turn sequence through its MemoryManager: after a turn, sync_all and
queue_prefetch_all(<that turn's message>) on its mem-sync worker; before the next turn,
prefetch_all(<a different message>) on its per-turn thread. The next turn's own search is made to
hang, so only the warm recall left by queue_prefetch can answer it."""

import json
import threading
import time

from agent.memory_manager import MemoryManager
from plugins.memory import load_memory_provider

from zkr_hermes import provider as provider_module

provider = load_memory_provider("zkr")
manager = MemoryManager()
manager.add_provider(provider)
manager.initialize_all(
    session_id="warm",
    platform="cli",
    agent_context="primary",
    agent_identity="default",
    agent_workspace="hermes",
)
stored = json.loads(
    manager.handle_tool_call("zkr_store", {"text": "Ana plays the cello every Sunday"})
)

# Turn 1, then what run_agent does once it completed.
manager.on_turn_start(1, "Does Ana play the cello?")
manager.prefetch_all("Does Ana play the cello?")
manager.sync_all("Does Ana play the cello?", "Yes, she does.", session_id="warm")
manager.queue_prefetch_all("Does Ana play the cello?", session_id="warm")
drained = manager.flush_pending(timeout=10)
queued = provider._searches.running()
if queued is not None:
    queued.done.wait(10)

release = threading.Event()
searched = []
real_run = provider_module.operations.run


def hanging(db, name, payload):
    if name == "search":
        searched.append(payload["query"])
        if payload["query"] == "When are her lessons?":
            release.wait(30)
    return real_run(db, name, payload)


provider_module.operations.run = hanging
# Turn 2.
manager.on_turn_start(2, "When are her lessons?")
started = time.monotonic()
block = manager.prefetch_all("When are her lessons?")
elapsed = time.monotonic() - started
hung = not release.is_set()
release.set()
manager.shutdown_all()
print(
    json.dumps(
        {
            "drained": drained,
            "block": block,
            "evidence_id": stored["evidence_id"],
            "searched": searched,
            "answered_while_search_hung": hung,
            "prefetch_seconds": elapsed,
        }
    )
)
