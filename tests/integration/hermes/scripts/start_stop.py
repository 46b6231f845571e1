"""Start the provider through Hermes (loader + MemoryManager), let it recover, shut down."""

import json
import sys

from agent.memory_manager import MemoryManager
from plugins.memory import load_memory_provider

user_id = sys.argv[1] if len(sys.argv) > 1 else ""
provider = load_memory_provider("zkr")
manager = MemoryManager()
manager.add_provider(provider)
kwargs = {
    "platform": "cli",
    "agent_context": "primary",
    "agent_identity": "default",
    "agent_workspace": "hermes",
}
if user_id:
    kwargs.update(platform="telegram", user_id=user_id)
manager.initialize_all(session_id="restart", **kwargs)
flushed = provider._flush(10)
manager.shutdown_all()
print(json.dumps({"flushed": flushed}))
