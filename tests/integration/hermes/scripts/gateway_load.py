"""Gateway sessions: several providers (one per chat, each with its user id) loaded by Hermes in
one process, storing through tools and syncing turns from their own threads at once, after a
start barrier (prints READY, waits for GO on stdin)."""

import json
import sys
import threading
import time

from agent.memory_manager import MemoryManager
from plugins.memory import load_memory_provider

users, each = int(sys.argv[1]), int(sys.argv[2])
managers = []
for i in range(users):
    manager = MemoryManager()
    manager.add_provider(load_memory_provider("zkr"))
    manager.initialize_all(
        session_id=f"chat-{i}",
        platform="telegram",
        agent_context="primary",
        agent_identity="default",
        agent_workspace="hermes",
        user_id=f"user-{i}",
        chat_id=f"chat-{i}",
    )
    managers.append(manager)
errors = []
# Start barrier: Hermes is imported and every session initialized; the test starts its zkr CLI
# writers and then says GO, so that both sides write at the same time.
print("READY", flush=True)
if sys.stdin.readline().strip() != "GO":
    raise SystemExit("no GO")


def chat(i):
    manager = managers[i]
    for n in range(each):
        result = json.loads(manager.handle_tool_call("zkr_store", {"text": f"user-{i} fact {n}"}))
        if "error" in result:
            errors.append(result)
        manager.sync_all(f"user-{i} turn {n}", "ok", session_id=f"chat-{i}")
        manager.prefetch_all(f"fact {n}")
        time.sleep(0.05)  # chat turns are not back to back: the CLI gets to write in between
    if not manager.flush_pending(timeout=60):
        errors.append({"error": f"chat {i} did not drain"})


threads = [threading.Thread(target=chat, args=(i,)) for i in range(users)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join()
for manager in managers:
    manager.shutdown_all()
print(json.dumps({"errors": errors}))
