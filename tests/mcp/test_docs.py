"""The documentation says what the server does: the generated tool table, the README's entry."""

from __future__ import annotations

from pathlib import Path

from zkr_mcp.docs import BEGIN, END, tool_table

ROOT = Path(__file__).resolve().parents[2]


def test_the_docs_tool_table_is_the_generated_one() -> None:
    page = (ROOT / "docs/zkr-mcp.md").read_text(encoding="utf-8")
    start, end = page.index(BEGIN), page.index(END) + len(END)
    message = "run python -m zkr_mcp.docs --write docs/zkr-mcp.md"
    assert page[start:end] == tool_table(), message


def test_the_generated_table_lists_every_listed_tool() -> None:
    table = tool_table()
    from zkr_mcp.tools import mcp_tools

    for name in mcp_tools():
        assert f"| `{name}` |" in table


def test_the_root_readme_lists_zkr_mcp() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "| [`zkr-mcp`](zkr-mcp/README.md) |" in readme


def test_check_mode_fails_on_a_stale_page_and_changes_nothing(tmp_path: Path) -> None:
    from zkr_mcp.docs import main

    page = tmp_path / "zkr-mcp.md"
    current = (Path(__file__).resolve().parents[2] / "docs" / "zkr-mcp.md").read_text("utf-8")
    page.write_text(current, encoding="utf-8")
    assert main(["--check", str(page)]) == 0
    stale = current.replace("| `zkr_search` |", "| `zkr_old_search` |")
    assert stale != current
    page.write_text(stale, encoding="utf-8")
    assert main(["--check", str(page)]) == 1
    assert page.read_text(encoding="utf-8") == stale
    assert main(["--write", str(page)]) == 0
    assert page.read_text(encoding="utf-8") == current
