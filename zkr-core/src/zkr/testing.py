"""A pytest plugin for zkr and for third-party zkr plugins.

Enable it in a ``conftest.py`` with ``pytest_plugins = ["zkr.testing"]`` (it is deliberately not
auto-loaded through a ``pytest11`` entry point). It

* sets ``sys._called_from_test``, so :func:`zkr.plugins.load_plugins` does not auto-load installed
  entry points (a test asks with ``load_plugins(entry_points=True)``);
* provides the fixtures ``memory_db`` (a fresh database in a temporary directory) and
  ``registered_plugin`` (register a plugin object on ``zkr.plugins.pm`` for one test);
* ships :class:`EmbedderContract`, the test class an embedder plugin's suite subclasses.
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any, ClassVar

import pytest

from zkr.db import MemoryDb

__all__ = ["EmbedderContract", "memory_db", "pytest_configure", "registered_plugin"]


def pytest_configure(config: pytest.Config) -> None:
    """Mark the process as a test run (llm's and datasette's convention)."""
    sys._called_from_test = True  # type: ignore[attr-defined]


@pytest.fixture
def memory_db(tmp_path: Path) -> Iterator[MemoryDb]:
    """A fresh, migrated :class:`~zkr.db.MemoryDb` in a temporary directory."""
    db = MemoryDb(tmp_path / "memory.db")
    try:
        yield db
    finally:
        db.close()


@pytest.fixture
def registered_plugin() -> Iterator[Callable[..., Any]]:
    """``registered_plugin(plugin, name=None)``: register *plugin* on ``pm`` until the test ends.

    Returns the registration name. The plugins are unregistered in reverse order afterwards, so
    the next test sees the manager as it was.
    """
    from zkr.plugins import load_plugins, pm

    load_plugins()
    names: list[str] = []

    def register(plugin: object, name: str | None = None) -> str:
        registered = pm.register(plugin, name=name)
        assert registered is not None, f"plugin {name!r} is blocked or already registered"
        pm.check_pending()
        names.append(registered)
        return registered

    try:
        yield register
    finally:
        for name in reversed(names):
            pm.unregister(name=name)


class EmbedderContract:
    """Contract tests for an embedder. Subclass it in a ``Test*`` class and implement
    :meth:`make_embedder`::

        class TestMyEmbedder(EmbedderContract):
            def make_embedder(self):
                return MyEmbedder()

    Override :attr:`texts` for domain text and :attr:`batch_tolerance` when batching changes
    results slightly (padding in transformer models).
    """

    texts: ClassVar[Sequence[str]] = (
        "The user's dog is called Biscuit.",
        "What is the name of my pet?",
        "I prefer green tea to coffee.",
        "Sam works at Acme.",
        "Lisbon is in Portugal.",
        "",
        "ünïcödé and emoji 🎉 still embed",
    )
    #: Largest absolute difference allowed between batched and one-by-one vectors.
    batch_tolerance: ClassVar[float] = 1e-5

    def make_embedder(self) -> Any:
        """Return the embedder under test."""
        raise NotImplementedError

    @pytest.fixture
    def embedder(self) -> Any:
        return self.make_embedder()

    @staticmethod
    def _rows(produced: Any) -> list[list[float]]:
        return [[float(v) for v in row] for row in produced]

    def test_declares_a_valid_lane(self, embedder: Any) -> None:
        from zkr.plugins.embedders import check_embedder

        check_embedder(embedder)

    def test_consistent_dimension(self, embedder: Any) -> None:
        rows = self._rows(embedder.embed_batch(list(self.texts)))
        assert len(rows) == len(self.texts)
        assert {len(row) for row in rows} == {embedder.dimension}

    def test_finite_floats(self, embedder: Any) -> None:
        for row in self._rows(embedder.embed_batch(list(self.texts))):
            assert all(math.isfinite(v) for v in row)

    def test_batch_equals_one_by_one(self, embedder: Any) -> None:
        batch = self._rows(embedder.embed_batch(list(self.texts)))
        for text, batched in zip(self.texts, batch, strict=True):
            single = self._rows(embedder.embed_batch([text]))[0]
            worst = max(abs(a - b) for a, b in zip(single, batched, strict=True))
            assert worst <= self.batch_tolerance, f"{text!r} differs by {worst} when batched"

    def test_declared_normalization_holds(self, embedder: Any) -> None:
        if embedder.normalization != "l2":
            return
        for row in self._rows(embedder.embed_batch(list(self.texts))):
            magnitude = math.sqrt(sum(v * v for v in row))
            assert abs(magnitude - 1.0) <= 1e-4  # zkr's embed refuses anything further off

    def test_empty_batch(self, embedder: Any) -> None:
        assert self._rows(embedder.embed_batch([])) == []

    def test_declared_roles(self, embedder: Any) -> None:
        """An embedder with roles takes ``role=`` for each; every role gives a valid lane."""
        from zkr.plugins.embedders import ROLES

        roles = getattr(embedder, "roles", ())
        assert isinstance(roles, tuple)
        assert set(roles) <= set(ROLES), f"unknown roles {set(roles) - set(ROLES)}"
        for role in roles:
            batch = self._rows(embedder.embed_batch(list(self.texts), role=role))
            assert len(batch) == len(self.texts)
            assert {len(row) for row in batch} == {embedder.dimension}
            for text, batched in zip(self.texts, batch, strict=True):
                assert all(math.isfinite(v) for v in batched)
                if embedder.normalization == "l2":
                    assert abs(math.sqrt(sum(v * v for v in batched)) - 1.0) <= 1e-4
                single = self._rows(embedder.embed_batch([text], role=role))[0]
                worst = max(abs(a - b) for a, b in zip(single, batched, strict=True))
                assert worst <= self.batch_tolerance, f"{text!r} ({role}) differs by {worst}"
            assert self._rows(embedder.embed_batch([], role=role)) == []
