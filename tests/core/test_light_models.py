"""The light classes (:mod:`zkr.fastpath.light`) hold and dump what pydantic's models do.

For drawn values of every model of :mod:`zkr.models` (requests, results, feed records), built the
way handlers build them — from a dict (``model_validate``) or from keywords — the light class
dumps exactly what the pydantic model dumps, in JSON and Python mode, by name and by alias; a
copy with changes and equality behave alike. The generator refuses any model a light class could
not rebuild (a validator, a serializer, a default it cannot express).
"""

from __future__ import annotations

import enum
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from tests.integration.test_fuzz import model_value
from zkr import models as m
from zkr.fastpath import generate
from zkr.fastpath.light import LightModel, light_models

MODELS = sorted(
    name
    for name, cls in vars(m).items()
    # zkr.models is a package: a model's module is zkr.models.requests, .responses, ...
    if isinstance(cls, type)
    and issubclass(cls, BaseModel)
    and cls.__module__.startswith(m.__name__ + ".")
)
assert len(MODELS) > 50  # the walk found the models (an empty list would make the tests vacuous)
IDS = ["0" * 32, "a" * 32]


def test_every_model_has_a_light_class() -> None:
    light = light_models()
    assert sorted(generate.classes()) == MODELS
    for name in MODELS:
        assert issubclass(getattr(light, name), LightModel)
    assert light.MemoryKind is m.MemoryKind and light.I64_MAX == m.I64_MAX


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_light_classes_dump_what_pydantic_dumps(data: st.DataObject) -> None:
    name = data.draw(st.sampled_from(MODELS))
    real_cls: type[BaseModel] = getattr(m, name)
    light_cls = getattr(light_models(), name)
    value = data.draw(model_value(real_cls, IDS, 0))
    try:
        real = real_cls.model_validate(value)
    except ValidationError:
        return  # the handlers only ever build valid ones
    by_alias = real.model_dump(by_alias=True)
    light = light_cls.model_validate(by_alias)
    for mode in ("json", "python"):
        for alias in (True, False):
            assert light.model_dump(mode=mode, by_alias=alias) == real.model_dump(
                mode=mode, by_alias=alias
            )
    # Built from keywords by field name, as handlers do.
    assert light_cls(**{k: getattr(light, k) for k in type(real).model_fields}) == light
    assert light == light_cls.model_validate(by_alias) and light != object()
    for field in list(type(real).model_fields)[:1]:
        copied = light.model_copy(update={field: getattr(light, field)})
        assert copied == light and copied is not light


class _Kind(enum.StrEnum):
    a = "a"


class _Validated(BaseModel):
    model_config = ConfigDict(extra="ignore")

    text: str

    @field_validator("text")
    @classmethod
    def _upper(cls, value: str) -> str:
        return value.upper()


def test_the_generator_refuses_a_model_a_light_class_would_get_wrong(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(m, "_Validated", _Validated, raising=False)
    _Validated.__module__ = m.__name__
    with pytest.raises(TypeError, match="validators"):
        generate.classes()


def test_a_light_class_is_frozen_and_names_a_missing_field() -> None:
    light = light_models()
    result = light.RememberResult(claim_id=None, evidence_id="e", source_id="s")
    with pytest.raises(TypeError):
        result.source_id = "x"
    with pytest.raises(TypeError, match="evidence_id"):
        light.RememberResult(claim_id=None, source_id="s")
    assert light.TimeRange(**{"from": 1, "until": None}).model_dump(by_alias=True) == {
        "from": 1,
        "until": None,
    }
    assert isinstance(hash(light.TimeRange(from_=1, until=2)), int)


def test_a_light_class_is_built_once_when_first_named() -> None:
    light = light_models()
    assert light.RetrievalPack is light.RetrievalPack
    assert light.RetrievalPack.__module__ == "zkr.models"
    with pytest.raises(AttributeError, match="NoSuchModel"):
        light.NoSuchModel  # noqa: B018


def _unused(_: Any) -> None:  # keep _Kind referenced for readers: enums outside zkr.enums
    assert _Kind.a == "a"
