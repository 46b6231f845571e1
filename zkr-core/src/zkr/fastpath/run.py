"""Run one operation of a one-shot process without pydantic, or decline.

A one-shot process (``zkr --db PATH COMMAND``, a Claude Code hook) answers one request and exits;
importing pydantic and building the models cost it 15-30 times a bare ``python -c pass``
(issue 27). :func:`answer` checks the request with the generated description
(:func:`zkr.fastpath.check.accept`), puts the light classes (:mod:`zkr.fastpath.light`) in the
place of :mod:`zkr.models` and runs the operation's own handler, which builds its result from
them exactly as it would from the pydantic models: one handler, one result representation.

Declining (``None``) is always safe: the caller takes the normal path. It declines a request the
checker cannot vouch for, and any request in a process that has already imported the real
models (a long-lived server, a test run), where the two kinds of class must never meet. For the
same reason a process that ran :func:`answer` must not use the library (``MemoryDb``) afterwards:
it is for one-shot processes only.
"""

from __future__ import annotations

import importlib
import sys

from zkr.fastpath.check import accept, load_shapes

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from zkr.store.database import Database

__all__ = ["answer", "available", "needs_plugins"]


def available(name: str) -> bool:
    """Whether operation *name* can run on the fast path in this process."""
    models = sys.modules.get("zkr.models")
    if models is not None and getattr(models, "__light__", False) is not True:
        return False
    return name in load_shapes()["operations"]


def answer(db: Database, name: str, payload: Any) -> tuple[Any] | None:
    """``(json_data,)``, the operation's answer as :func:`zkr.operations.run` gives it, or
    ``None`` to decline (nothing was run).

    :raises zkr.errors.ZkrError: as the handler raises it for an accepted request.
    """
    if not available(name) or needs_plugins(name, payload):
        return None
    request = accept(name, payload)
    if request is None:
        return None
    _install()
    module, _, function = load_shapes()["operations"][name]["handler"].partition(":")
    result = getattr(importlib.import_module(module), function)(db, request)
    return (_to_json(result),)


def needs_plugins(name: str, payload: Any) -> bool:
    """Whether the request loads plugins: a search that names a lane without giving its vector
    embeds the question with the lane's embedder plugin. Plugins are built on the real models
    (an extractor's ``Suggestion`` holds a ``ClaimInput``), which the light classes would replace
    for the rest of the process, so such a request takes the normal path, as ``rebuild`` does."""
    if name != "search" or not isinstance(payload, dict):
        return False
    embedding = payload.get("query_embedding")
    return isinstance(embedding, dict) and embedding.get("vector") is None


def _install() -> None:
    """Make ``from zkr import models`` give the light classes for the rest of the process."""
    from zkr.fastpath.light import light_models

    module = light_models()
    sys.modules["zkr.models"] = module
    zkr = sys.modules["zkr"]
    zkr.__dict__["models"] = module


def _to_json(result: Any) -> Any:
    if isinstance(result, list):
        return [_to_json(item) for item in result]
    if result is None:
        return None
    return result.model_dump(mode="json", by_alias=True)
