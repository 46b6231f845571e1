"""The plugin system: hook specs, loading rules, registries, the rule extractor, ``rebuild``."""

from __future__ import annotations

import inspect
import sqlite3
import sys
from pathlib import Path
from typing import Any

import pluggy
import pytest

from zkr import models as m
from zkr import plugins
from zkr.db import MemoryDb, open_db
from zkr.errors import DuplicatePluginIdError, UnknownPluginError
from zkr.plugins import hookspecs
from zkr.plugins.hookspecs import hookimpl
from zkr.plugins.hosts import HostAdapter, HostHealth
from zkr.testing import EmbedderContract

ROOT = Path(__file__).resolve().parents[3]
HOOKS = sorted(name for name in dir(plugins.pm.hook) if name.startswith("zkr_"))
CORE_HOOKS = sorted(
    name for name, value in inspect.getmembers(hookspecs, inspect.isfunction)
    if name.startswith("zkr_")
)  # fmt: skip


def snapshot_rows(db: MemoryDb) -> dict[str, list[Any]]:
    names = [r[0] for r in db.conn.execute("SELECT name FROM sqlite_master WHERE type='table'")]
    return {n: sorted(db.conn.execute(f'SELECT * FROM "{n}"').fetchall(), key=repr) for n in names}


# ----------------------------------------------------------------------------------------------
# Meta: every hook is documented and tested
# ----------------------------------------------------------------------------------------------


def test_core_hooks_are_the_issue_list() -> None:
    assert CORE_HOOKS == [
        "zkr_prepare_connection",
        "zkr_register_embedders",
        "zkr_register_extractors",
        "zkr_register_hosts",
        "zkr_register_importers",
    ]


@pytest.mark.parametrize("hook", CORE_HOOKS)
def test_every_hook_is_documented_with_its_full_signature(hook: str) -> None:
    spec = getattr(plugins.pm.hook, hook).spec
    heading = f"## {hook}({', '.join(spec.argnames)})"
    assert heading in (ROOT / "docs" / "plugin-hooks.md").read_text(encoding="utf-8").splitlines()
    assert spec.function.__doc__ and ":param" in spec.function.__doc__


@pytest.mark.parametrize("hook", CORE_HOOKS)
def test_every_hook_has_a_test(hook: str) -> None:
    assert f"test_hook_{hook}" in globals()


# ----------------------------------------------------------------------------------------------
# One test per hook
# ----------------------------------------------------------------------------------------------


class TinyEmbedder:
    model, version, dimension, normalization, distance = "tiny", "1", 2, "l2", "dot"

    def embed_batch(self, texts: list[str]) -> list[list[float]]:
        return [[1.0, 0.0] if "a" in text else [0.0, 1.0] for text in texts]


def test_hook_zkr_register_embedders(registered_plugin: Any) -> None:
    embedder = TinyEmbedder()

    class Plugin:
        @hookimpl
        def zkr_register_embedders(self, register: Any) -> None:
            register(embedder)

    registered_plugin(Plugin(), name="tiny")
    assert plugins.get_embedders()[("tiny", "1")] is embedder
    assert plugins.get_embedder("tiny", "1") is embedder
    with pytest.raises(UnknownPluginError):
        plugins.get_embedder("tiny", "2")


def test_hook_zkr_register_extractors() -> None:
    extractor = plugins.get_extractors()["rules"]
    found = extractor.extract(
        "Hi! My name is Ada Lovelace. I work at Acme Corp. It rains. I prefer green tea.",
        valid_from=42,
    )
    assert [(s.claim.kind.value, s.claim.predicate, s.claim.value) for s in found] == [
        ("profile_fact", "name", "Ada Lovelace"),
        ("profile_fact", "employer", "Acme Corp"),
        ("preference", "prefers", "green tea"),
    ]
    assert found[0].evidence_text == "My name is Ada Lovelace."
    assert all(s.claim.valid_from == 42 and s.claim.subject == "user" for s in found)
    assert all(s.extractor == "rules" for s in found)


def test_hook_zkr_register_hosts(registered_plugin: Any) -> None:
    class Host(HostAdapter):
        name = "example-host"
        install = "pip install example-host"

        def health(self) -> HostHealth:
            return HostHealth(ok=True, detail="fine")

    class Plugin:
        @hookimpl
        def zkr_register_hosts(self, register: Any) -> None:
            register(Host())

    registered_plugin(Plugin(), name="example-host-plugin")
    host = plugins.get_hosts()["example-host"]
    assert host.health() == HostHealth(ok=True, detail="fine")


def test_hook_zkr_register_importers(registered_plugin: Any, tmp_path: Path) -> None:
    """A third party's importer is registered beside the built-in ones (which come through the
    same hook), a second plugin claiming its name is refused, and what it reads is stored once."""
    from zkr.plugins.importers import Importer, Message, Skipped
    from zkr.writes.messages import remember_messages

    class Diary(Importer):
        name = "diary"
        description = "one message per line"

        def read(self, path: Path) -> Any:
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
                if not line:
                    yield Skipped(str(number), "blank line")
                    continue
                yield Message(
                    key=f"diary:{path.name}:{number}",
                    text=line,
                    at=1_700_000_000.5 + number,
                    source="diary",
                    conversation_id=path.name,
                    message_id=str(number),
                    author="user",
                )

    class Plugin:
        @hookimpl
        def zkr_register_importers(self, register: Any) -> None:
            register(Diary())

    registered_plugin(Plugin(), name="diary-plugin")
    importers = plugins.get_importers()
    assert {"chatgpt", "claude", "mem0", "notes", "diary"} <= set(importers)
    listed = {entry["name"]: entry for entry in plugins.get_plugins(all=True)}
    assert listed["diary-plugin"]["importers"] == [
        {"name": "diary", "description": "one message per line"}
    ]
    builtin = listed["zkr.plugins.default_plugins.importers"]["importers"]
    assert [i["name"] for i in builtin] == ["chatgpt", "claude", "mem0", "notes"]
    source = tmp_path / "diary.txt"
    source.write_text("I adopted a cat named Miso.\n\nMiso likes the balcony.\n", encoding="utf-8")
    items = list(importers["diary"].read(source))
    messages = [item for item in items if isinstance(item, Message)]
    with MemoryDb(tmp_path / "m.db") as db:
        for _ in range(2):
            counts = remember_messages(db, "t", "p", messages, recorded_at=1_800_000_000)
        assert (counts.stored, counts.replayed) == (0, 2)
        found = db.search(
            m.SearchRequest(tenant_id="t", person_id="p", query="Miso cat", ranking="recall")
        )
        assert found.items[0].excerpt == "I adopted a cat named Miso."
        captures = db.captures(m.CapturesRequest(tenant_id="t", person_id="p"))
        assert sorted(c.captured_at for c in captures) == [1_700_000_001, 1_700_000_003]

    class Impostor:
        @hookimpl
        def zkr_register_importers(self, register: Any) -> None:
            register(Diary())

    registered_plugin(Impostor(), name="impostor")
    with pytest.raises(DuplicatePluginIdError, match=r"diary-plugin.*impostor"):
        plugins.get_importers()


def test_hook_zkr_prepare_connection(registered_plugin: Any, tmp_path: Path) -> None:
    class Plugin:
        @hookimpl
        def zkr_prepare_connection(self, conn: sqlite3.Connection) -> None:
            conn.create_function("shout", 1, lambda text: str(text).upper(), deterministic=True)

    registered_plugin(Plugin(), name="shout")
    with open_db(tmp_path / "prepared.db") as db:
        assert db.conn.execute("SELECT shout('zkr')").fetchone() == ("ZKR",)


# ----------------------------------------------------------------------------------------------
# Loading rules
# ----------------------------------------------------------------------------------------------


def test_duplicate_ids_are_refused_naming_both_plugins(registered_plugin: Any) -> None:
    def plugin(name: str) -> Any:
        class Plugin:
            @hookimpl
            def zkr_register_embedders(self, register: Any) -> None:
                register(TinyEmbedder())

        return registered_plugin(Plugin(), name=name)

    plugin("first-provider")
    plugin("second-provider")
    with pytest.raises(DuplicatePluginIdError) as raised:
        plugins.get_embedders()
    assert "first-provider" in str(raised.value) and "second-provider" in str(raised.value)
    assert "tiny@1" in str(raised.value)


def test_check_pending_refuses_unknown_hooks() -> None:
    class Plugin:
        @hookimpl
        def zkr_no_such_hook(self) -> None:
            """Misspelled."""

    plugins.pm.register(Plugin(), name="misspelled")
    try:
        with pytest.raises(pluggy.PluginValidationError):
            plugins.load_plugins()
    finally:
        plugins.pm.unregister(name="misspelled")


def test_optional_hooks_pass_check_pending() -> None:
    class Plugin:
        @hookimpl(optionalhook=True)
        def zkr_some_future_hook(self) -> None:
            """Only where another distribution adds the spec."""

    plugins.pm.register(Plugin(), name="optional")
    try:
        plugins.load_plugins()
    finally:
        plugins.pm.unregister(name="optional")


def test_tests_do_not_auto_load_entry_points() -> None:
    assert getattr(sys, "_called_from_test", False)
    loaded = {plugins.pm.get_name(p) for p in plugins.pm.get_plugins()}
    assert loaded <= {*plugins.DEFAULT_PLUGINS} | {
        name for name in loaded if name is not None and not _is_entry_point(name)
    }


def _is_entry_point(name: str) -> bool:
    from importlib.metadata import entry_points

    return name in {ep.name for ep in entry_points(group="zkr")}


class FakeDistribution:
    """Enough of ``importlib.metadata.Distribution`` for ``load_plugins``."""

    def __init__(self, name: str, plugin: object) -> None:
        self.metadata = {"Name": name}
        self.version = "9.9.9"
        self.entry_points = [FakeEntryPoint(name.removeprefix("zkr-"), plugin)]


class FakeEntryPoint:
    group = "zkr"

    def __init__(self, name: str, plugin: object) -> None:
        self.name, self.plugin = name, plugin

    def load(self) -> object:
        return self.plugin


@pytest.fixture
def fresh_loader(monkeypatch: pytest.MonkeyPatch) -> Any:
    """Entry points as if nothing had been loaded yet; restores the manager afterwards."""
    monkeypatch.setattr(plugins._manager, "_entry_points_loaded", False)
    monkeypatch.setattr(plugins._manager, "_distributions", {})
    before = {plugins.pm.get_name(p) for p in plugins.pm.get_plugins()}
    yield monkeypatch
    for plugin in list(plugins.pm.get_plugins()):
        if plugins.pm.get_name(plugin) not in before:
            plugins.pm.unregister(plugin)
    for name in ("fake-one", "fake-two"):
        plugins.pm.unblock(name)  # undo ZKR_DISABLE_PLUGINS of a test


def fake_distributions(monkeypatch: pytest.MonkeyPatch) -> None:
    class One:
        @hookimpl
        def zkr_register_extractors(self, register: Any) -> None:
            """Nothing to register."""

    dists = [FakeDistribution("zkr-fake-one", One()), FakeDistribution("zkr-fake-two", One())]
    monkeypatch.setattr(plugins._manager.importlib.metadata, "distributions", lambda: dists)


def names() -> set[str]:
    return {str(plugins.pm.get_name(p)) for p in plugins.pm.get_plugins()}


def test_a_test_may_ask_for_entry_points(fresh_loader: pytest.MonkeyPatch) -> None:
    fake_distributions(fresh_loader)
    fresh_loader.delenv("ZKR_LOAD_PLUGINS", raising=False)
    plugins.load_plugins()
    assert not {"fake-one", "fake-two"} & names()
    plugins.load_plugins(entry_points=True)
    assert {"fake-one", "fake-two"} <= names()
    listed = {p["name"]: p for p in plugins.get_plugins()}
    assert listed["fake-one"] == {
        "name": "fake-one",
        "hooks": ["zkr_register_extractors"],
        "version": "9.9.9",
        "distribution": "zkr-fake-one",
    }
    assert "zkr.plugins.default_plugins.rule_extractor" not in listed
    assert "zkr.plugins.default_plugins.rule_extractor" in {
        p["name"] for p in plugins.get_plugins(all=True)
    }


def test_zkr_load_plugins_selects_distributions(fresh_loader: pytest.MonkeyPatch) -> None:
    fake_distributions(fresh_loader)
    fresh_loader.setenv("ZKR_LOAD_PLUGINS", "zkr-fake-two")
    plugins.load_plugins(entry_points=True)
    assert "fake-two" in names() and "fake-one" not in names()


def test_an_empty_zkr_load_plugins_loads_none(fresh_loader: pytest.MonkeyPatch) -> None:
    fake_distributions(fresh_loader)
    fresh_loader.setenv("ZKR_LOAD_PLUGINS", "")
    plugins.load_plugins(entry_points=True)
    assert not {"fake-one", "fake-two"} & names()


def test_zkr_disable_plugins_blocks_by_name(fresh_loader: pytest.MonkeyPatch) -> None:
    fake_distributions(fresh_loader)
    fresh_loader.delenv("ZKR_LOAD_PLUGINS", raising=False)
    fresh_loader.setenv("ZKR_DISABLE_PLUGINS", "fake-one")
    plugins.load_plugins(entry_points=True)
    assert "fake-two" in names() and "fake-one" not in names()


# ----------------------------------------------------------------------------------------------
# The rule extractor only suggests
# ----------------------------------------------------------------------------------------------


def test_extractor_suggestions_are_never_stored(memory_db: MemoryDb) -> None:
    before = snapshot_rows(memory_db)
    suggestions = plugins.get_extractors()["rules"].extract("I live in Lisbon.", valid_from=1)
    assert [(s.claim.predicate, s.claim.value) for s in suggestions] == [("home", "Lisbon")]
    assert snapshot_rows(memory_db) == before
    # A caller that accepts a suggestion stores it with remember, citing the evidence text.
    stored = memory_db.remember(
        m.RememberRequest(
            tenant_id="t", person_id="p", kind=m.SourceKind.conversation,
            text=suggestions[0].evidence_text, captured_at=1, recorded_at=1,
            claim=suggestions[0].claim,
        )
    )  # fmt: skip
    assert stored.claim_id is not None


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("I love hiking in the mountains!", [("preference", "loves", "hiking in the mountains")]),
        ("i like jazz", [("preference", "likes", "jazz")]),
        ("I work for the city council", [("profile_fact", "employer", "the city council")]),
        ("The weather is nice. Nothing about me here.", []),
        ("", []),
    ],
)
def test_rule_extractor_patterns(text: str, expected: list[tuple[str, str, str]]) -> None:
    found = plugins.get_extractors()["rules"].extract(text, valid_from=1)
    assert [(s.claim.kind.value, s.claim.predicate, s.claim.value) for s in found] == expected


# ----------------------------------------------------------------------------------------------
# The shipped contract class, applied to the tests' own embedder
# ----------------------------------------------------------------------------------------------


class TestHashEmbedderContract(EmbedderContract):
    @pytest.fixture
    def embedder(self, hash_embedder: Any) -> Any:
        return hash_embedder


class TestBrokenEmbedderFailsTheContract(EmbedderContract):
    """The contract catches an embedder that breaks its own declaration."""

    class Broken:
        model, version, dimension, normalization, distance = "broken", "1", 3, "l2", "cosine"

        def embed_batch(self, texts: list[str]) -> list[list[float]]:
            return [[1.0, 1.0] for _ in texts]  # wrong dimension, not unit

    def make_embedder(self) -> Any:
        return self.Broken()

    @pytest.mark.xfail(raises=AssertionError, strict=True)
    def test_consistent_dimension(self, embedder: Any) -> None:
        super().test_consistent_dimension(embedder)

    @pytest.mark.xfail(raises=AssertionError, strict=True)
    def test_declared_normalization_holds(self, embedder: Any) -> None:
        super().test_declared_normalization_holds(embedder)
