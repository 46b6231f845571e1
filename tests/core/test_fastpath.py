"""The one-shot fast path's checker (issue 14): it accepts a request only when pydantic accepts it,
with exactly pydantic's values, and its description of the models is generated, never stale.

The requests are the fuzz corpus's (tests/integration/test_fuzz.py: drawn from the request model,
then mutated with hostile numbers, ``-0``, lone surrogates, duplicate keys, deep nesting, dropped
and unknown fields), parsed by the same lenient parser the CLI uses.
"""

from __future__ import annotations

import enum
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import AliasPath, BaseModel, ConfigDict, Field, field_validator

from tests.integration.test_fuzz import SCOPE, encode, requests_for, seed
from zkr import models as m
from zkr.db import MemoryDb
from zkr.errors import RequestParseError
from zkr.fastpath import check, generate
from zkr.fastpath.check import accept, fast_operation, load_shapes
from zkr.feed.pages import parse_record
from zkr.jsonio import parse_request
from zkr.operations import OPERATIONS, validate

FAST = sorted(load_shapes()["operations"])
IDS = {SCOPE[0]: ["0" * 32, "a" * 32], "victim": ["b" * 32]}
SEARCH = {"tenant_id": "t", "person_id": "p", "query": "coffee"}


def plain(value: Any) -> Any:
    """A fast request object (a light class) as the dict ``model_dump()`` gives."""
    return value.model_dump()


def same_types(fast: Any, dumped: Any) -> bool:
    """Equal values are not enough: an enum member must be the member, an int an int."""
    if isinstance(dumped, dict):
        return isinstance(fast, dict) and all(same_types(fast[k], v) for k, v in dumped.items())
    return type(fast) is type(dumped)


def test_request_shapes_are_generated_from_the_current_models() -> None:
    committed = generate.SHAPES_PATH.read_text(encoding="utf-8")
    assert committed == generate.render(), (
        "zkr/fastpath/request_shapes.json is stale: run python -m zkr.fastpath.generate --write"
    )


def test_every_operation_but_plugin_loading_ones_has_a_fast_path_to_its_own_handler() -> None:
    assert set(FAST) == set(OPERATIONS) - generate.NORMAL_PATH_ONLY
    for name in FAST:
        handler = OPERATIONS[name].handler
        assert fast_operation(name) == f"{handler.__module__}:{handler.__qualname__}"
    assert fast_operation("rebuild") is None


@pytest.fixture(scope="module")
def pages(tmp_path_factory: pytest.TempPathFactory) -> list[dict[str, Any]]:
    """A peer's export page with every kind of record seed() writes (apply's requests)."""
    with MemoryDb(tmp_path_factory.mktemp("peer") / "peer.db") as peer:
        seed(peer, key="k2", predicate="city")
        page = peer.run("export", {"tenant_id": "t", "person_id": "p", "export_format": 1})
    return [page.model_dump(mode="json", by_alias=True)]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_fast_path_accepts_only_what_pydantic_accepts_with_the_same_values(
    data: st.DataObject, pages: list[dict[str, Any]]
) -> None:
    name = data.draw(st.sampled_from(FAST))
    template = {"ids": IDS, "pages": pages}
    request = data.draw(requests_for(name, template))
    try:
        payload = parse_request(encode(request), lenient=True)
    except RequestParseError:
        return  # not JSON: refused before either path looks at it
    fast = accept(name, payload)
    if fast is None:
        return  # declined: pydantic decides (the CLI test compares those answers)
    model = validate(OPERATIONS[name], payload)  # raises if the fast path accepted too much
    dumped = model.model_dump()
    assert plain(fast) == dumped
    assert same_types(plain(fast), dumped)
    if name == "apply" and model.page is not None:
        _records_read_alike(model.page)


def _records_read_alike(page: m.ExportPage) -> None:
    """Every record of an accepted page is one its kind's model reads (apply's own reading,
    which light classes do not check), with the values the checker's light record holds."""
    shapes = load_shapes()
    for commit in page.commits:
        for envelope in commit.records:
            kind, body = parse_record(envelope)  # raises if the checker vouched for a bad one
            light = check._model(shapes, shapes["records"][kind], envelope["record"])
            assert light.model_dump() == body.model_dump()
            assert same_types(light.model_dump(), body.model_dump())


@pytest.mark.parametrize(
    "request_body",
    [
        SEARCH,
        {**SEARCH, "limit": 0, "ranking": "recall", "unknown": [1, {"x": "\ud800"}]},
        {**SEARCH, "limit": 2**32 - 1, "as_of": {"valid_at": -(2**63), "recorded_at": 2**63 - 1}},
        {**SEARCH, "as_of": None, "query_embedding": None, "query": " "},
    ],
)
def test_valid_requests_take_the_fast_path(request_body: dict[str, Any]) -> None:
    payload = parse_request(encode(request_body), lenient=True)
    fast = accept("search", payload)
    assert fast is not None
    model = validate(OPERATIONS["search"], payload)
    assert plain(fast) == model.model_dump()
    assert fast.ranking is model.ranking and isinstance(fast.ranking, m.Ranking)


@pytest.mark.parametrize(
    "text",
    [
        '{"tenant_id":"t","person_id":"p"}',  # missing query
        '{"tenant_id":"t","person_id":"p","query":"q","limit":-0}',  # -0 is a float
        '{"tenant_id":"t","person_id":"p","query":"q","limit":1.0}',
        '{"tenant_id":"t","person_id":"p","query":"q","limit":true}',
        '{"tenant_id":"t","person_id":"p","query":"q","limit":4294967296}',
        '{"tenant_id":"t","person_id":"p","query":"q","limit":-1}',
        '{"tenant_id":"t","person_id":"p","query":"\\ud800"}',  # lone surrogate in a known field
        '{"tenant_id":"t","person_id":"p","query":"q","query":"r"}',  # duplicate known key
        '{"tenant_id":"t","person_id":"p","query":"q","ranking":"Recall"}',
        '{"tenant_id":"t","person_id":"p","query":1}',
        '{"tenant_id":"t","person_id":"p","query":"q","as_of":{"valid_at":1}}',
        '{"tenant_id":"t","person_id":"p","query":"q","as_of":[]}',
        # a vector element that is a boolean, or an integer a float may not hold exactly
        '{"tenant_id":"t","person_id":"p","query":"q",'
        '"query_embedding":{"model":"m","version":"1","vector":[true]}}',
        '{"tenant_id":"t","person_id":"p","query":"q",'
        '"query_embedding":{"model":"m","version":"1","vector":[9007199254740993]}}',
        "[]",
    ],
)
def test_anything_uncertain_is_declined(text: str) -> None:
    assert accept("search", parse_request(text, lenient=True)) is None


class _Kind(enum.StrEnum):
    a = "a"


class _Odd(BaseModel):
    model_config = ConfigDict(extra="ignore")

    aliased: str = Field(alias="other", strict=True)


class _ByName(_Odd):
    model_config = ConfigDict(extra="ignore", populate_by_name=True)


class _Path(BaseModel):
    aliased: str = Field(validation_alias=AliasPath("outer", "inner"), strict=True)


class _Checked(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str = Field(strict=True, max_length=3)
    lax: int = 0
    kind: _Kind = _Kind.a
    checked: str = Field("x", strict=True)

    @field_validator("checked")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


def _describe(model: type[BaseModel]) -> Any:
    model.model_rebuild()
    models: dict[str, Any] = {}
    name = generate._model(model.__pydantic_core_schema__, models)  # type: ignore[arg-type]
    return None if name is None else models[name]


def test_the_generator_describes_only_what_it_can_decide_exactly() -> None:
    # An alias is the key; the name too only where the model populates by name.
    assert _describe(_Odd) == {"forbid": False, "fields": [{"key": "other", "type": ["str"]}]}
    assert _describe(_ByName)["fields"] == [{"key": "other", "name": "aliased", "type": ["str"]}]
    # An alias path (a key inside a key): the whole model is left to pydantic.
    assert _describe(_Path) is None
    shape = _describe(_Checked)
    types = {field["key"]: field["type"] for field in shape["fields"]}
    # A length limit, a lax int, an enum outside zkr.enums, a validator: all opaque.
    assert types == {key: ["opaque"] for key in ("text", "lax", "kind", "checked")}


def test_a_search_that_embeds_its_question_with_a_plugin_is_declined() -> None:
    # The plugin's models are built on the real classes, which the fast path would replace
    # (a one-shot hybrid search through an embedder plugin failed with a schema error).
    from zkr.fastpath.run import needs_plugins

    lane = {"model": "intfloat/multilingual-e5-small", "version": "1"}
    scope = {"tenant_id": "t", "person_id": "p"}
    asked = {**scope, "query": "coffee", "query_embedding": lane}
    assert needs_plugins("search", asked)
    given_vector = {**asked, "query_embedding": {**lane, "vector": [1.0, 0.0]}}
    assert not needs_plugins("search", given_vector)
    assert not needs_plugins("search", {**scope, "query": "coffee"})
    assert not needs_plugins("get", asked)
