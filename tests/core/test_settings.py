"""zkr's shared settings: one spelling per variable, old spellings read with a warning."""

from __future__ import annotations

import pytest

from zkr import settings
from zkr.errors import SettingError


def test_a_variable_beats_the_default_and_blank_counts_as_unset() -> None:
    assert settings.MCP_PORT.value({}) == "8766"
    assert settings.MCP_PORT.value({"ZKR_MCP_PORT": "9000"}) == "9000"
    assert settings.TENANT.value({"ZKR_TENANT": "  "}) == ""
    assert settings.TENANT.value({"ZKR_TENANT": " home "}) == "home"


def test_an_old_spelling_still_works_with_a_warning_naming_the_new_one() -> None:
    with pytest.warns(FutureWarning, match="ZKR_TENANT_ID is deprecated: set ZKR_TENANT"):
        assert settings.TENANT.value({"ZKR_TENANT_ID": "home"}) == "home"
    with pytest.warns(FutureWarning, match="ZKR_PERSON_ID is deprecated: set ZKR_PERSON"):
        assert settings.PERSON.value({"ZKR_PERSON_ID": "ana"}) == "ana"


def test_the_new_spelling_wins_over_the_old_one_without_a_warning(
    recwarn: pytest.WarningsRecorder,
) -> None:
    assert settings.TENANT.value({"ZKR_TENANT": "new", "ZKR_TENANT_ID": "old"}) == "new"
    assert not [w for w in recwarn if issubclass(w.category, FutureWarning)]


def test_a_setting_with_choices_refuses_others_in_one_line() -> None:
    with pytest.raises(
        SettingError, match=r'^ZKR_RANKING must be "contract" or "recall", not "x"$'
    ):
        settings.RANKING.value({"ZKR_RANKING": "x"})


def test_the_default_database_is_in_the_home_folder(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/ana")
    assert settings.default_db({}) == "/home/ana/.zkr/memory.db"
    assert settings.default_db({"ZKR_DB": "~/x.db"}) == "/home/ana/x.db"


def test_each_variable_has_one_setting_and_the_two_servers_differ_in_port() -> None:
    variables = [s.env for s in settings.SETTINGS.values()]
    old = [v for s in settings.SETTINGS.values() for v in s.deprecated_envs]
    assert len(set(variables + old)) == len(variables + old)
    assert all(v.startswith("ZKR_") for v in variables + old)
    assert settings.WEB_PORT.value({}) != settings.MCP_PORT.value({})
