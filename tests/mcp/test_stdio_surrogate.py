"""A stdio tool call holding a lone surrogate is answered, not left waiting (issue 26).

The SDK's stdio transport could not decode such a line and dropped it: the client waited forever
for that id (over HTTP the same request got a clear 400). Now the id is answered with a JSON-RPC
error carrying the contract's message, nothing is written, and the server keeps answering.
"""

from __future__ import annotations

import json
import subprocess
import threading
from pathlib import Path
from typing import Any

from tests.mcp.conftest import (
    initialize_request,
    settings_for,
    table_rows,
    tool_call_line,
    zkr_mcp_command,
)
from zkr.db import MemoryDb
from zkr_mcp.tools import mcp_tools

TOOL = {entry.operation.name: name for name, entry in mcp_tools().items()}


def test_every_lone_surrogate_call_gets_an_answer_with_its_id(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "memory.db")
    MemoryDb(settings.db).close()
    before = table_rows(settings.db)
    remember, search = TOOL["remember"], TOOL["search"]
    lines = [
        json.dumps(initialize_request("raw")),
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        tool_call_line(2, search, '{"query":"\\ud800"}'),
        tool_call_line("three", remember, '{"kind":"conversation","text":"a\\udfffb"}'),
        tool_call_line(4, remember, '{"kind":"conversation","text":"ok \\uDBFF"}'),
        tool_call_line(5, search, '{"query":"still here"}'),
    ]
    process = subprocess.Popen(
        [zkr_mcp_command(), "--db", settings.db, "--tenant", "t", "--person", "p"],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert process.stdin is not None and process.stdout is not None
    process.stdin.write("".join(line + "\n" for line in lines).encode())
    process.stdin.flush()
    answers: dict[Any, dict[str, Any]] = {}
    watchdog = threading.Timer(60, process.kill)  # before: ids 2, 3 and 4 never came back
    watchdog.start()
    try:
        for raw in process.stdout:
            message = json.loads(raw)
            answers[message.get("id")] = message
            if {2, "three", 4, 5} <= answers.keys():
                break
    finally:
        watchdog.cancel()
        process.stdin.close()
        process.wait(30)
    assert {2, "three", 4, 5} <= answers.keys(), sorted(map(str, answers))
    for ident in (2, "three", 4):
        error = answers[ident]["error"]
        assert error == {"code": -32602, "message": "lone leading surrogate in hex escape"}
    assert answers[5]["result"]["isError"] is False
    assert table_rows(settings.db) == before
