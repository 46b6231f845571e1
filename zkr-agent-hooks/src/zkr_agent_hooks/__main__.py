"""``zkr-agent-hooks``: the command Claude Code and Codex run at their lifecycle events.

    zkr-agent-hooks run --host claude-code|codex   one hook event on stdin (what the hosts run)
    zkr-agent-hooks plugin-dir                     the bundled Claude Code plugin's folder
    zkr-agent-hooks install-codex [--codex-home D] add the hooks to Codex's hooks.json
    zkr-agent-hooks mcp                            zkr-mcp over stdio, in the hooks' scope

The scope is ``ZKR_DB`` / ``ZKR_TENANT`` / ``ZKR_PERSON`` (see :mod:`zkr_agent_hooks.scope`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import BinaryIO, cast

__all__ = ["MAX_INPUT_BYTES", "main", "plugin_dir"]

#: A hook input larger than this is not read (a prompt is at most a few hundred kilobytes).
MAX_INPUT_BYTES = 8 * 1024 * 1024


def plugin_dir() -> Path:
    return Path(__file__).resolve().parent / "claude_plugin"


def _run(host: str, stdin: BinaryIO) -> int:
    # Every failure is absorbed: see zkr_agent_hooks.run for why the exit status is always 0.
    try:
        from zkr_agent_hooks.events import HookInputError, Host, parse
        from zkr_agent_hooks.run import ABSORBED, handle
        from zkr_agent_hooks.scope import scope_from

        data = stdin.read(MAX_INPUT_BYTES + 1)
        if len(data) > MAX_INPUT_BYTES:
            raise HookInputError(f"hook input over {MAX_INPUT_BYTES} bytes")
        output = handle(parse(data), cast(Host, host), scope_from())
    except ABSORBED as exc:
        print(f"zkr-agent-hooks: memory skipped: {exc}", file=sys.stderr)
        return 0
    except Exception as exc:
        print(f"zkr-agent-hooks: memory skipped: {type(exc).__name__}: {exc}", file=sys.stderr)
        return 0
    if output is not None:
        sys.stdout.write(json.dumps(output, ensure_ascii=False) + "\n")
    return 0


def _mcp() -> int:
    from zkr_agent_hooks.scope import scope_from
    from zkr_mcp.__main__ import main as mcp_main

    scope = scope_from()
    Path(scope.db).expanduser().parent.mkdir(parents=True, exist_ok=True)
    args = ["--db", os.path.expanduser(scope.db), "--tenant", scope.tenant_id]
    return mcp_main([*args, "--person", scope.person_id])


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="zkr-agent-hooks",
        description="Automatic zkr memory for Claude Code and Codex (recall and capture hooks).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    run = commands.add_parser("run", help="handle one hook event read from stdin")
    run.add_argument("--host", choices=("claude-code", "codex"), required=True)
    commands.add_parser("plugin-dir", help="print the bundled Claude Code plugin's folder")
    codex = commands.add_parser("install-codex", help="add the hooks to Codex's hooks.json")
    codex.add_argument(
        "--codex-home", type=Path, help="Codex's folder (default: $CODEX_HOME, else ~/.codex)"
    )
    commands.add_parser("mcp", help="run zkr-mcp over stdio in the hooks' scope")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "run":
        return _run(args.host, sys.stdin.buffer)
    if args.command == "plugin-dir":
        print(plugin_dir())
        return 0
    if args.command == "install-codex":
        from zkr_agent_hooks.codex import install

        home = args.codex_home or Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")
        try:
            path = install(home)
        except (ValueError, OSError) as exc:
            print(f"zkr-agent-hooks: {exc}", file=sys.stderr)
            return 1
        print(f"wrote {path}; enable hooks with `[features] codex_hooks = true` in config.toml")
        return 0
    return _mcp()


if __name__ == "__main__":
    sys.exit(main())
