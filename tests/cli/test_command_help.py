"""Per-command help and the generated reference of ``docs/cli.md`` (issue 12), both from the table.

``zkr COMMAND --help`` prints the summary, every request field with its type, default and
description, and one example request that the command accepts; it opens no database. The reference
part of ``docs/cli.md`` is the same material as Markdown, and the committed file must equal what
``python -m zkr_cli.docs`` generates.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.cli.conftest import Outcome
from zkr.operations import OPERATIONS
from zkr_cli import docs
from zkr_cli.reference import EPOCH_NOTE, example_request, request_fields

Run = Callable[..., Outcome]
REPOSITORY = Path(__file__).resolve().parents[2]
CLI_DOC = REPOSITORY / "docs" / "cli.md"


def _help(outcome: Outcome) -> str:
    assert outcome.returncode == 0, outcome.stderr
    assert outcome.stderr == b""
    return outcome.stdout.decode("utf-8")


@pytest.mark.parametrize("name", list(OPERATIONS))
def test_every_command_has_help_with_its_fields_and_an_example(
    zkr_inprocess: Run, tmp_path: Path, home: Path, name: str
) -> None:
    operation = OPERATIONS[name]
    path = tmp_path / "none" / "memory.db"
    text = _help(zkr_inprocess("--db", str(path), name, "--help"))
    assert text.startswith(f"zkr --db PATH {name}: {operation.summary}\n")
    assert EPOCH_NOTE in text
    for row in request_fields(operation.request):
        line = next(line for line in text.splitlines() if line.strip().startswith(row.path + " "))
        assert row.type in line
        assert ("required" in line) if row.required else (f"default {row.default}" in line)
        assert row.description.split()[0] in text
    example = re.search(r"printf '%s' '(.*)' \| zkr --db memory\.db " + name + "$", text, re.M)
    assert example is not None
    # The example is a request the command's model accepts.
    operation.request.model_validate(json.loads(example.group(1)))
    assert not path.parent.exists() and not (home / ".zkr").exists()
    assert _help(zkr_inprocess(name, "-h")) == text


def test_command_help_from_the_real_command_creates_no_database(run: Run, tmp_path: Path) -> None:
    path = tmp_path / "memory.db"
    text = _help(run("--db", str(path), "search", "--help"))
    assert "as_of.valid_at" in text and "seconds since the Unix epoch" in text
    assert not path.exists()


def test_examples_run_where_they_need_no_stored_ids(run: Run, db_path: Path) -> None:
    # remember and search need nothing stored first: their examples work as printed.
    for name in ("remember", "search"):
        body = json.dumps(example_request(OPERATIONS[name].request)).encode()
        run("--db", str(db_path), name, stdin=body).ok()


def test_the_committed_reference_is_the_generated_one() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    assert docs.render(text) == text, "docs/cli.md is stale: run python -m zkr_cli.docs"
    for name in OPERATIONS:
        assert f"### `{name}`" in text


def test_the_help_index_is_the_table() -> None:
    # `zkr --help` reads this generated index instead of importing the table.
    assert docs.SUMMARIES_PATH.read_text(encoding="utf-8") == docs.summaries(), (
        "zkr_cli/_summaries.py is stale: run python -m zkr_cli.docs"
    )
    from zkr_cli._summaries import SUMMARIES

    assert [name for name, _ in SUMMARIES] == list(OPERATIONS)


def test_the_generator_check_mode_reports_a_stale_file(tmp_path: Path) -> None:
    stale = tmp_path / "cli.md"
    stale.write_text(f"# x\n\n{docs.BEGIN}\nold\n{docs.END}\n", encoding="utf-8")
    # (the index beside it is current, so only the document is reported and rewritten)
    assert docs.main(["--check", str(stale)]) == 1
    assert "old" in stale.read_text(encoding="utf-8")
    assert docs.main([str(stale)]) == 0
    assert docs.main(["--check", str(stale)]) == 0
    with pytest.raises(ValueError, match="markers"):
        docs.render("no markers here")


_LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def test_links_in_the_cli_doc_resolve_inside_the_repository() -> None:
    text = CLI_DOC.read_text(encoding="utf-8")
    targets = _LINK.findall(text)
    assert targets, "the CLI doc links to the table and models it is generated from"
    for target in targets:
        assert "://" not in target, target
        resolved = (CLI_DOC.parent / target.split("#", 1)[0]).resolve()
        assert resolved.is_relative_to(REPOSITORY), target
        assert resolved.exists(), target
    # Also plain-text paths may not send a reader out of the repository.
    assert "../shared" not in text
