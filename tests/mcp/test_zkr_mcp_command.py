"""``zkr mcp`` (zkr-cli's command line, through the zkr_register_commands hook) is zkr-mcp with
zkr's ``--db``: the SDK's own client lists and calls its tools over stdio."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import anyio
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from zkr_mcp.tools import mcp_tools

ZKR = str(Path(sys.executable).parent / "zkr")


def test_zkr_mcp_serves_zkrs_database_to_the_sdk_client(tmp_path: Path) -> None:
    db = tmp_path / "memory.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    params = StdioServerParameters(
        command=ZKR, args=["--db", str(db), "mcp", "--tenant", "t", "--person", "p"], env=env
    )

    async def run() -> None:
        async with Client(params) as client:
            listed = await client.list_tools()
            assert {tool.name for tool in listed.tools} == set(mcp_tools())
            stored = await client.call_tool(
                "zkr_store", {"text": "I keep bees on the roof.", "captured_at": 5}
            )
            assert not stored.is_error, stored.content

    anyio.run(run)
    assert db.exists()  # zkr's --db, not zkr-mcp's default


def test_zkr_mcp_help_is_zkr_mcps_and_a_bad_flag_is_its_one_line_error(tmp_path: Path) -> None:
    helped = subprocess.run([ZKR, "mcp", "--help"], capture_output=True, check=False, timeout=60)
    assert helped.returncode == 0 and b"--token-file" in helped.stdout
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    refused = subprocess.run(
        [ZKR, "--db", "x.db", "mcp"],
        capture_output=True,
        check=False,
        timeout=60,
        cwd=tmp_path,  # not the checkout: the refusal must not be what keeps a file out of it
        env=env,
    )
    assert refused.returncode == 2
    assert refused.stderr.decode().strip().startswith("zkr-mcp: --tenant (or ZKR_TENANT)")
