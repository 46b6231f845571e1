"""The search ranking's default (issue 24): recall, defined once (``zkr.settings``), and
``ZKR_RANKING=contract`` for a process that wants zkr 0.2.3's order.

Reproduction 1 of issue 24 is the yardstick: the claim ``me plans "fly to Berlin"`` is found by
``Berlin`` by default (lexical only), and the contract ranking does not find it.
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import SettingError, ZkrError
from zkr.operations import run
from zkr.settings import RANKING, SETTINGS, default_ranking

SCOPE = {"tenant_id": "demo", "person_id": "me"}
REPOSITORY = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _no_process_ranking(monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever the shell running the tests says, each test starts without ``ZKR_RANKING``."""
    monkeypatch.delenv("ZKR_RANKING", raising=False)


def remember_berlin(db: MemoryDb) -> str:
    """A capture whose words do not hold the claim's value; the claim's do."""
    result = run(
        db,
        "remember",
        {
            **SCOPE,
            "kind": "conversation",
            "text": "Note for later.",
            "captured_at": 1,
            "recorded_at": 1,
            "claim": {
                "subject": "me",
                "predicate": "plans",
                "value": "fly to Berlin",
                "kind": "task",
                "valid_from": 1,
            },
        },
    )
    return str(result["claim_id"])


def found(pack: m.RetrievalPack | dict[str, Any]) -> list[tuple[str, str]]:
    """The pack's items as (kind, id), from the model or its JSON (``operations.run``)."""
    data = pack if isinstance(pack, dict) else pack.model_dump(mode="json")
    return [(item["memory"]["kind"], item["memory"]["id"]) for item in data["items"]]


def test_a_request_without_ranking_ranks_for_recall() -> None:
    assert m.SearchRequest.model_validate({**SCOPE, "query": "x"}).ranking is m.Ranking.recall
    assert m.SearchRequest(**SCOPE, query="x").ranking is m.Ranking.recall
    assert default_ranking() is m.Ranking.recall


@pytest.mark.parametrize(("value", "expected"), [("contract", "contract"), ("recall", "recall")])
def test_zkr_ranking_chooses_for_the_process(
    monkeypatch: pytest.MonkeyPatch, value: str, expected: str
) -> None:
    monkeypatch.setenv("ZKR_RANKING", value)
    assert m.SearchRequest(**SCOPE, query="x").ranking == expected


def test_an_empty_zkr_ranking_is_unset(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZKR_RANKING", "")
    assert m.SearchRequest(**SCOPE, query="x").ranking is m.Ranking.recall


def test_a_request_that_names_a_ranking_keeps_it(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ZKR_RANKING", "contract")
    request = {**SCOPE, "query": "x", "ranking": "recall"}
    assert m.SearchRequest.model_validate(request).ranking is m.Ranking.recall
    # Named in the request, the setting is not read at all: an invalid one does not matter.
    monkeypatch.setenv("ZKR_RANKING", "best")
    assert m.SearchRequest.model_validate(request).ranking is m.Ranking.recall


@pytest.mark.parametrize("value", ["best", "Recall", " contract", "contract\nrecall"])
def test_an_invalid_zkr_ranking_is_one_clear_line(
    monkeypatch: pytest.MonkeyPatch, db: MemoryDb, value: str
) -> None:
    monkeypatch.setenv("ZKR_RANKING", value)
    with pytest.raises(SettingError) as raised:
        run(db, "search", {**SCOPE, "query": "x"})
    message = str(raised.value)
    assert "\n" not in message
    assert message.startswith('ZKR_RANKING must be "contract" or "recall", not "')
    assert isinstance(raised.value, ZkrError) and raised.value.code == "invalid_setting"


def test_the_berlin_claim_is_found_by_default_and_not_by_the_contract(db: MemoryDb) -> None:
    claim_id = remember_berlin(db)
    request = {**SCOPE, "query": "Berlin"}
    assert found(db.search(m.SearchRequest.model_validate(request))) == [("claim", claim_id)]
    assert found(run(db, "search", request)) == [("claim", claim_id)]
    contract = run(db, "search", {**request, "ranking": "contract"})
    assert found(contract) == [] and contract["gaps"] == ["no cited memory matched"]


def test_zkr_ranking_contract_gives_the_contract_answer(
    monkeypatch: pytest.MonkeyPatch, db: MemoryDb
) -> None:
    remember_berlin(db)
    monkeypatch.setenv("ZKR_RANKING", "contract")
    assert found(run(db, "search", {**SCOPE, "query": "Berlin"})) == []


def test_the_setting_table_describes_the_ranking() -> None:
    assert SETTINGS["ranking"] is RANKING
    assert (RANKING.env, RANKING.default) == ("ZKR_RANKING", "recall")
    assert set(RANKING.choices) == {ranking.value for ranking in m.Ranking}


def _code_strings(path: Path) -> list[tuple[int, str]]:
    """The string constants of *path* that are code, not docstrings."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    docstrings = {
        id(node.body[0].value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
        and node.body
        and isinstance(node.body[0], ast.Expr)
        and isinstance(node.body[0].value, ast.Constant)
    }
    return [
        (node.lineno, node.value)
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant)
        and isinstance(node.value, str)
        and id(node) not in docstrings
    ]


def test_the_ranking_default_is_defined_once() -> None:
    """Issue 31, acceptance 1: no host, store or surface writes the default (or reads
    ``ZKR_RANKING``) itself; the rankings' names are spelt only by their enum and the setting."""
    # A generated module (its docstring says so; a drift test keeps it equal to its source, e.g.
    # zkr_cli/_summaries.py copies the settings table's help lines) is not a second definition.
    sources = [
        path
        for path in sorted(REPOSITORY.glob("zkr-*/src/**/*.py"))
        if not path.read_text(encoding="utf-8").startswith('"""Generated by')
    ]
    assert any(path.name == "settings.py" for path in sources)  # the walk saw zkr-core
    spelt = {
        f"{path.relative_to(REPOSITORY)}:{line}: {value!r}"
        for path in sources
        for line, value in _code_strings(path)
        if value in ("recall", "contract", "ZKR_RANKING")
    }
    assert spelt == {
        "zkr-core/src/zkr/enums.py:" + str(line) + f": {value!r}"
        for line, value in _code_strings(REPOSITORY / "zkr-core/src/zkr/enums.py")
        if value in ("recall", "contract")
    } | {
        "zkr-core/src/zkr/settings.py:" + str(line) + ": 'ZKR_RANKING'"
        for line, value in _code_strings(REPOSITORY / "zkr-core/src/zkr/settings.py")
        if value == "ZKR_RANKING"
    }
    # And no module but the setting's names Ranking.recall/Ranking.contract as a value (a
    # comparison such as ``request.ranking == Ranking.recall`` is not a default).
    chosen = []
    for path in sources:
        tree = ast.parse(path.read_text(encoding="utf-8"))
        compared = {
            id(operand)
            for node in ast.walk(tree)
            if isinstance(node, ast.Compare)
            for operand in (node.left, *node.comparators)
        }
        chosen += [
            f"{path.relative_to(REPOSITORY)}:{node.lineno}"
            for node in ast.walk(tree)
            if isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == "Ranking"
            and node.attr in ("recall", "contract")
            and id(node) not in compared
        ]
    assert chosen == [f"zkr-core/src/zkr/settings.py:{_line_of('Ranking.recall.value')}"]


def _line_of(text: str) -> int:
    lines = (REPOSITORY / "zkr-core/src/zkr/settings.py").read_text(encoding="utf-8").splitlines()
    return next(number for number, line in enumerate(lines, 1) if text in line)
