"""``ZKR_RANKING=contract`` reproduces every reference search byte for byte through the CLI.

Issue 24, acceptance 1: the default ranking is recall, and a process that sets
``ZKR_RANKING=contract`` gets zkr 0.2.3's order. Each search the reference fixtures recorded
(``../shared/fixtures/*.expected.json``, requests that name no ranking) runs as a real one-shot
``zkr --db COPY search`` with that variable in its environment, and prints exactly the reference's
line. The same requests through ``zkr serve`` without the variable rank for recall: some answers
differ, which shows the variable is what makes the difference. Skips when the fixtures are absent.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from tests.cli.conftest import Outcome
from tests.conftest import missing_shared, shared_dir
from zkr.jsonio import canonical_dumps

FIXTURES = shared_dir() / "fixtures"


def _searches() -> list[tuple[str, list[tuple[dict[str, Any], Any]]]]:
    """(fixture database name, [(request, response)]) for each expected file."""
    found = []
    files = sorted(FIXTURES.glob("*.expected.json")) if FIXTURES.is_dir() else []
    for expected_file in files:
        expected = json.loads(expected_file.read_text(encoding="utf-8"))
        searches = [
            (exchange["request"], exchange["response"])
            for scope in expected["scopes"]
            for exchange in scope["searches"]
        ]
        found.append((expected["fixture"], searches))
    return found


@pytest.fixture(scope="module")
def searches() -> list[tuple[str, list[tuple[dict[str, Any], Any]]]]:
    found = _searches()
    if not found:
        missing_shared("the reference fixtures")
    return found


def _copy(tmp_path: Path, name: str) -> Path:
    copy = tmp_path / name
    shutil.copyfile(FIXTURES / name, copy)
    return copy


def test_zkr_ranking_contract_reproduces_every_reference_search(
    searches: list[tuple[str, list[tuple[dict[str, Any], Any]]]],
    run: Callable[..., Outcome],
    tmp_path: Path,
) -> None:
    count = 0
    for name, exchanges in searches:
        db = _copy(tmp_path, name)
        for request, response in exchanges:
            assert "ranking" not in request  # zkr 0.2.3 had one ranking
            done = run("--db", str(db), "search", stdin=request, env={"ZKR_RANKING": "contract"})
            assert done.returncode == 0, done.stderr
            assert done.stdout.decode("utf-8") == canonical_dumps(response) + "\n", request
            count += 1
    assert count >= 40  # both fixtures' searches ran (26 + 16 today)


def test_without_the_variable_the_same_searches_rank_for_recall(
    searches: list[tuple[str, list[tuple[dict[str, Any], Any]]]],
    cli_env: dict[str, str],
    tmp_path: Path,
) -> None:
    assert "ZKR_RANKING" not in cli_env
    differing = 0
    for name, exchanges in searches:
        db = _copy(tmp_path, name)
        # Each request as recorded (no ranking), then naming recall: one serve process.
        requests = [request for request, _ in exchanges]
        requests += [{**request, "ranking": "recall"} for request, _ in exchanges]
        lines = "".join(
            json.dumps({"command": "search", "request": request}) + "\n" for request in requests
        )
        done = subprocess.run(
            [sys.executable, "-m", "zkr_cli", "--db", str(db), "serve"],
            input=lines.encode("utf-8"),
            capture_output=True,
            env=cli_env,
            timeout=120,
            check=True,
        )
        answers = done.stdout.decode("utf-8").splitlines()
        assert len(answers) == 2 * len(exchanges)
        default, recall = answers[: len(exchanges)], answers[len(exchanges) :]
        assert default == recall  # the default is recall
        for answer, (_, response) in zip(default, exchanges, strict=True):
            assert "error" not in json.loads(answer)
            differing += answer != canonical_dumps(response)
    assert differing > 0
