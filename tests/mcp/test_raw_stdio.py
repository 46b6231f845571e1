"""What the SDK's client cannot send: raw JSON-RPC lines with lone surrogate escapes, NaN and
Infinity, a line that is not JSON, arguments that are not an object. Nothing is written, nothing
succeeds, and the server keeps answering.

(Observed with mcp 2.3.0: the SDK's stdio transport drops a line it cannot decode — not JSON, or
a lone surrogate escape — without answering it. zkr's own check answers NaN and Infinity with the
contract's message.)
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


def test_raw_hostile_lines_write_nothing_and_the_server_keeps_answering(tmp_path: Path) -> None:
    settings = settings_for(tmp_path / "memory.db")
    MemoryDb(settings.db).close()
    before = table_rows(settings.db)
    initialize = initialize_request("raw")
    remember, search = TOOL["remember"], TOOL["search"]
    lines = [
        json.dumps(initialize),
        '{"jsonrpc":"2.0","method":"notifications/initialized"}',
        tool_call_line(2, search, '{"query":"\\ud800"}'),
        tool_call_line(3, remember, '{"kind":"conversation","text":"a\\udfffb"}'),
        tool_call_line(4, remember, '{"kind":"conversation","text":"x","captured_at":NaN}'),
        tool_call_line(5, search, '{"query":"x","limit":1e400}'),
        "this line is not JSON",
        tool_call_line(6, search, '"not an object"'),
        tool_call_line(7, search, '{"query":"still here"}'),
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
    watchdog = threading.Timer(120, process.kill)  # a hung server fails the test, not CI
    watchdog.start()
    # Requests are served concurrently: read until the last one is answered (stdout closes if
    # the server dies, which ends the loop and fails below).
    for raw in process.stdout:
        message = json.loads(raw)
        answers[message.get("id")] = message
        if 7 in answers:
            break
    process.stdin.close()
    assert process.wait(60) == 0
    watchdog.cancel()
    for ident in (2, 3, 4, 5, 6):
        answer = answers.get(ident)
        if answer is not None:  # answered: as a refusal, never a success
            assert "error" in answer or answer["result"]["isError"], answer
    expected = "invalid number `{}` (NaN and Infinity are not JSON)"
    assert answers[4]["result"]["content"][0]["text"] == expected.format("NaN")
    assert answers[5]["result"]["content"][0]["text"] == expected.format("Infinity")
    assert answers[7]["result"]["isError"] is False
    assert answers[7]["result"]["structuredContent"]["items"] == []
    assert table_rows(settings.db) == before
