"""``ZkrMemoryProvider``: zkr as the memory of a Hermes Agent 0.19.0 session.

Everything runs in process through ``zkr.operations.run`` (no subprocess). Hermes calls the
provider from several threads at once (the agent thread for tools, one thread per turn for
prefetch, its ``mem-sync`` worker for ``sync_turn``), so each of those paths has its own database
handle, and the write-behind queue opens a connection per call.

Construction is cheap and side-effect free: Hermes builds a fresh instance on every discovery,
``hermes memory status`` and ``hermes backup``. Threads and connections start in ``initialize``.
"""

from __future__ import annotations

import collections
import json
import logging
import sqlite3
import threading
import time
import uuid
from typing import Any

from zkr import operations
from zkr.db import MemoryDb, open_db
from zkr.errors import DatabaseBusy, RequestParseError, ZkrError
from zkr.operations import MAX_REQUEST_BYTES
from zkr.settings import RANKING
from zkr_hermes import recall, tools
from zkr_hermes._compat import MemoryProviderBase, tool_error
from zkr_hermes.config import (
    DEFAULT_PREFETCH_LIMIT,
    DEFAULT_PREFETCH_TIMEOUT,
    ProviderConfig,
    Scope,
    ScopePolicy,
    load_config,
    resolve_scope,
)
from zkr_hermes.config import save_config as _save_config
from zkr_hermes.queue import TurnQueue
from zkr_hermes.worker import QueueWorker, acquire_worker, release_worker

__all__ = ["SHUTDOWN_FLUSH_SECONDS", "ZkrMemoryProvider"]

log = logging.getLogger("zkr_hermes")

#: Hermes drains its own sync worker for at most 5 s and then calls ``shutdown`` with no limit;
#: this keeps the whole exit within a few seconds. Whatever is left stays queued on disk.
SHUTDOWN_FLUSH_SECONDS = 3.0
#: How long session boundaries (end, compression, memory-note edits) wait for queued turns.
BOUNDARY_FLUSH_SECONDS = 1.0
#: How long the warm recall waits for the turn just queued to be stored (a next turn that comes
#: sooner waits for the warm recall, so this stays short).
WARM_FLUSH_SECONDS = 0.5
_RECENT_TURNS_KEPT = 50

SYSTEM_PROMPT = (
    "# zkr Memory\n"
    "Search before answering questions about the user. Store only durable facts, preferences, "
    "decisions, and events. Cite evidence IDs. Use correction instead of overwriting history."
)


def _now() -> int:
    return int(time.time())


class ZkrMemoryProvider(MemoryProviderBase):  # type: ignore[misc]
    """Hermes ``MemoryProvider`` backed by a local zkr database."""

    def __init__(self, config: ProviderConfig | None = None) -> None:
        self._fixed_config = config
        self._config: ProviderConfig | None = None
        self._policy: ScopePolicy | None = None
        self._db: MemoryDb | None = None  # tools (the agent thread)
        self._read_db: MemoryDb | None = None  # prefetch threads
        self._queue: TurnQueue | None = None
        self._worker: QueueWorker | None = None
        self._writes_enabled = False
        self._session_id = ""
        self._turn_started: tuple[str, int] | None = None
        self._recent_keys: collections.deque[str] = collections.deque(maxlen=_RECENT_TURNS_KEPT)
        self._searches = recall.SearchSlot()
        self._lock = threading.RLock()

    # ------------------------------------------------------------------ identity and setup

    @property
    def name(self) -> str:
        return "zkr"

    def is_available(self) -> bool:
        """zkr-core is imported and local: nothing to reach, nothing to log in to."""
        return sqlite3.sqlite_version_info >= (3, 38, 0)

    def get_config_schema(self) -> list[dict[str, Any]]:
        return [
            {
                "key": "db_path",
                "description": "zkr database file (relative paths live in HERMES_HOME)",
                "default": "zkr.db",
            },
            {
                "key": "tenant_id",
                "description": "Tenant of every memory (default: hermes)",
                "default": "hermes",
            },
            {
                "key": "person_id",
                "description": "Whose memory this is; empty = the gateway user, else the profile",
            },
            {
                "key": "prefetch_limit",
                "description": "Memories recalled into each turn",
                "default": str(DEFAULT_PREFETCH_LIMIT),
            },
            {
                "key": "prefetch_timeout",
                "description": "Seconds a recall may take before the turn goes on without it",
                "default": str(DEFAULT_PREFETCH_TIMEOUT),
            },
            {
                "key": "ranking",
                "description": "Search ranking: recall (finds more) or contract (zkr 0.2.3's)",
                "default": RANKING.default,
            },
        ]

    def save_config(self, values: dict[str, Any], hermes_home: str) -> None:
        _save_config(values, hermes_home)

    def backup_paths(self) -> list[str]:
        """Absolute paths outside HERMES_HOME (Hermes backs up its home itself); no init needed."""
        try:
            config = self._config or self._fixed_config or load_config()
            return config.backup_paths()
        except Exception:
            return []

    def get_tool_schemas(self) -> list[dict[str, Any]]:
        return tools.tool_schemas()

    def system_prompt_block(self) -> str:
        return SYSTEM_PROMPT

    # ------------------------------------------------------------------ lifecycle

    def initialize(self, session_id: str, **kwargs: Any) -> None:
        with self._lock:
            if self._db is not None:
                self.shutdown()
            config = self._fixed_config or load_config(kwargs.get("hermes_home"))
            policy = resolve_scope(config, kwargs)
            self._config, self._policy = config, policy
            self._session_id = session_id or ""
            # Hermes 0.19.0 always says "primary" (cron and subagents skip memory entirely); the
            # guard keeps a future non-primary agent from writing its prompts into the user's
            # memory.
            self._writes_enabled = (kwargs.get("agent_context") or "primary") == "primary"
            db = read_db = None
            try:
                db = open_db(config.db_path)
                read_db = open_db(config.db_path)
                self._queue = TurnQueue(config.queue_path)
                # Starting the worker recovers turns an earlier process left pending.
                self._worker = acquire_worker(config.db_path, config.queue_path, policy)
            except BaseException:
                for handle in (db, read_db):
                    if handle is not None:
                        handle.close()
                self._queue = None
                log.warning("zkr: cannot open memory database %s", config.db_path)
                raise
            self._db, self._read_db = db, read_db

    def shutdown(self) -> None:
        """Flush queued turns within Hermes' budget, then close. Safe to call twice."""
        with self._lock:
            worker, policy = self._worker, self._policy
            self._worker = None
            flushed = True
            if worker is not None and policy is not None:
                flushed = release_worker(worker, policy, SHUTDOWN_FLUSH_SECONDS)
            if not flushed:
                log.warning("zkr: queued turns left for the next start (database busy)")
            for handle in (self._db, self._read_db):
                if handle is not None:
                    handle.close()
            self._db = self._read_db = None
            self._queue = None

    @property
    def scope(self) -> Scope | None:
        return None if self._policy is None else self._policy.scope

    # ------------------------------------------------------------------ recall

    def prefetch(self, query: str, *, session_id: str = "") -> str:
        """Cited memories for the coming turn, within ``prefetch_timeout`` seconds.

        Hermes passes ``session_id=""`` here; the session is the one from initialize/switch.
        See ``zkr_hermes.recall`` for how the warm recall left by ``queue_prefetch`` is used.
        """
        config = self._config
        if self._read_db is None or config is None or not isinstance(query, str):
            return ""
        if not query.strip():
            return ""
        deadline = recall.monotonic() + config.prefetch_timeout
        fresh = None
        # Twice: Hermes calls queue_prefetch on its own worker, so the previous turn's queued
        # search may start between the check and the start of this one.
        for _ in range(2):
            running = self._searches.running()
            if running is not None:
                if running.kind != "queued":
                    return ""  # an earlier turn's search is stuck (a long lock): don't pile up
                # The previous turn's queued search is still finishing: it is the warm recall.
                running.done.wait(max(0.0, deadline - recall.monotonic()))
            fresh = self._searches.start("fresh", lambda search: self._search(search, query))
            if fresh is not None:
                break
        if fresh is None:
            return ""
        warm = self._searches.take_warm(self._session_id)
        if warm is None:
            fresh.done.wait(max(0.0, deadline - recall.monotonic()))
            return recall.render(fresh.items or [])
        fresh.done.wait(min(recall.FAST_WAIT_SECONDS, max(0.0, deadline - recall.monotonic())))
        if not fresh.done.is_set():
            # Slow: answer with the warm recall if nothing was written since it was made.
            fresh.sequence_ready.wait(max(0.0, deadline - recall.monotonic()))
            if fresh.sequence == warm.sequence:
                return recall.render(warm.items)
            fresh.done.wait(max(0.0, deadline - recall.monotonic()))
        if not fresh.done.is_set() or fresh.items is None:
            return ""
        if fresh.sequence != warm.sequence:
            return recall.render(fresh.items)
        return recall.render(recall.merge(fresh.items, warm.items))

    def queue_prefetch(self, query: str, *, session_id: str = "") -> None:
        """Start the warm recall for the turn that just ended (*query* is its user message)."""
        if self._read_db is None or not isinstance(query, str) or not query.strip():
            return
        session = self._session_id
        recent = list(self._recent_keys)

        def body(search: recall.Search) -> None:
            # The turn was queued just before: let it be stored first, so that its own commit
            # does not make this recall look outdated at the next turn.
            self._flush(WARM_FLUSH_SECONDS)
            self._search(search, query)
            if search.items is None or search.sequence is None:
                return
            # The turn itself is the best match for its own words, and the model still has it.
            items = recall.without_evidence(search.items, self._turn_evidence(recent))
            self._searches.keep_warm(
                recall.Warm(session, search.sequence, items, recall.monotonic())
            )

        self._searches.start("queued", body)

    def _search(self, search: recall.Search, query: str) -> None:
        db, scope, config = self._read_db, self.scope, self._config
        if db is None or scope is None or config is None:
            return
        try:
            search.publish_sequence(db.run("sequence", _scoped(scope)).sequence)
            request = {"query": query, "limit": config.prefetch_limit, **_ranking(config)}
            pack = operations.run(db, "search", {**_scoped(scope), **request})
        except Exception as exc:  # recall is best effort: a turn never fails for it
            log.debug("zkr: prefetch failed: %s", type(exc).__name__)
            return
        search.items = list(pack.get("items", []))

    def _turn_evidence(self, keys: list[str]) -> list[str]:
        worker = self._worker
        if worker is None:
            return []
        results = dict(worker.results)
        return [str(results[key]["evidence_id"]) for key in keys if key in results]

    # ------------------------------------------------------------------ capture

    def on_turn_start(self, turn_number: int, message: str, **kwargs: Any) -> None:
        # When the user spoke: the turn's captured_at (its recorded_at is when it is queued).
        self._turn_started = (message if isinstance(message, str) else "", _now())

    def sync_turn(
        self,
        user_content: str,
        assistant_content: str,
        *,
        session_id: str = "",
        messages: list[dict[str, Any]] | None = None,
    ) -> None:
        """Make the completed turn durable in the queue; the worker stores it."""
        if not self._writes_enabled or self._queue is None or self._policy is None:
            return
        user = str(user_content or "").strip()
        if not user:
            return
        assistant = str(assistant_content or "").strip()
        now = _now()
        started = self._turn_started
        captured_at = started[1] if started and started[0].strip() == user else now
        key = f"{tools.TURN_KEY_PREFIX}{uuid.uuid4()}"
        payload = {
            **_scoped(self._policy.scope),
            "kind": "conversation",
            "text": f"User: {user}\nAssistant: {assistant}",
            "captured_at": min(captured_at, now),
            "recorded_at": now,
            "ingestion_key": key,
            "claim": None,
        }
        self._enqueue(payload)
        self._recent_keys.append(key)

    def _enqueue(self, payload: dict[str, Any]) -> None:
        queue, worker, policy = self._queue, self._worker, self._policy
        if queue is None or policy is None:
            return
        serialized = json.dumps(payload, ensure_ascii=False, separators=(",", ":"))
        if len(serialized.encode("utf-8")) > MAX_REQUEST_BYTES:
            # Kept, not applied: zkr refuses requests over 1 MiB.
            queue.reject(serialized, f"turn exceeds {MAX_REQUEST_BYTES} bytes")
            log.warning("zkr: a turn over %d bytes was quarantined", MAX_REQUEST_BYTES)
            return
        queue.enqueue(serialized, origin=policy.origin)
        if worker is not None:
            worker.wake()

    def _flush(self, timeout: float) -> bool:
        worker = self._worker
        return worker.flush(timeout) if worker is not None else False

    # ------------------------------------------------------------------ tools

    def handle_tool_call(self, tool_name: str, args: dict[str, Any], **kwargs: Any) -> str:
        """Run one zkr tool. Always a JSON string; internal error details never reach the model."""
        try:
            if tool_name not in tools.tool_names():
                return tool_error(f"Unknown tool: {tool_name}")
            db, policy = self._db, self._policy
            if db is None or policy is None:
                return tool_error("zkr memory is not available")
            if not isinstance(args, dict):
                return tool_error("arguments must be a JSON object")
            result = self._dispatch(db, policy.scope, tool_name, args)
            return json.dumps(result, ensure_ascii=False)
        except tools.ToolArgumentError as exc:
            return tool_error(str(exc))
        except RequestParseError as exc:
            # The arguments do not fit the tool: the contract's message says which field.
            return tool_error(exc.message)
        except DatabaseBusy:
            log.warning("zkr: %s: database busy", tool_name)
            return tool_error("zkr operation failed", detail="memory database is busy, try again")
        except ZkrError as exc:
            # zkr's messages are the contract's fixed strings: safe, and useful to the model.
            return tool_error("zkr operation failed", detail=exc.message)
        except sqlite3.OperationalError:
            log.warning("zkr: %s: database unavailable", tool_name)
            return tool_error("zkr operation failed", detail="memory database is busy, try again")
        except Exception as exc:
            log.warning("zkr: %s failed: %s", tool_name, type(exc).__name__)
            return tool_error("zkr operation failed")

    def _dispatch(self, db: MemoryDb, scope: Scope, name: str, args: dict[str, Any]) -> Any:
        if name == tools.SUGGEST:
            return self._suggest(db, scope, tools.suggest_turns(args))
        from zkr.tool_calls import call_tool

        # The person's ranking (zkr.json "ranking") unless the model chose; else zkr's.
        defaults = {} if self._config is None else _ranking(self._config)
        return call_tool(
            db,
            name,
            args,
            tenant_id=scope.tenant_id,
            person_id=scope.person_id,
            now=_now(),
            defaults=defaults,
        )

    def _suggest(self, db: MemoryDb, scope: Scope, turns: int) -> dict[str, Any]:
        from zkr_hermes.suggestions import suggest

        # Recent turns may still be queued: give the worker a moment so they have evidence ids.
        self._flush(BOUNDARY_FLUSH_SECONDS)
        return suggest(db, scope, turns)

    # ------------------------------------------------------------------ Hermes' other hooks

    def on_memory_write(
        self, action: str, target: str, content: str, metadata: dict[str, Any] | None = None
    ) -> None:
        """Mirror the built-in ``memory`` tool: each note becomes a cited zkr memory."""
        if not self._writes_enabled or self._db is None or self._policy is None:
            return
        from zkr_hermes.notes import mirror_note

        self._flush(BOUNDARY_FLUSH_SECONDS)  # an add still queued must be found by a replace
        mirror_note(self._db, self._policy.scope, self._enqueue, action, target, content, metadata)

    def on_session_end(self, messages: list[dict[str, Any]]) -> None:
        # Turns were queued by sync_turn; make them durable in zkr before the session is gone.
        self._flush(BOUNDARY_FLUSH_SECONDS)

    def on_session_switch(
        self,
        new_session_id: str,
        *,
        parent_session_id: str = "",
        reset: bool = False,
        rewound: bool = False,
        **kwargs: Any,
    ) -> None:
        self._session_id = new_session_id or ""
        self._turn_started = None
        self._searches.forget_warm()
        if reset:
            self._recent_keys.clear()

    def on_pre_compress(self, messages: list[dict[str, Any]]) -> str:
        """Tell the compressor that the dropped turns stay recallable, with their evidence ids."""
        worker = self._worker
        if worker is None or not self._recent_keys:
            return ""
        self._flush(BOUNDARY_FLUSH_SECONDS)
        evidence = [
            str(worker.results[key]["evidence_id"])
            for key in list(self._recent_keys)[-10:]
            if key in worker.results
        ]
        if not evidence:
            return ""
        return (
            "The earlier turns of this conversation are stored in zkr memory as cited evidence "
            f"({', '.join(evidence)}); zkr_search recalls them."
        )


def _ranking(config: ProviderConfig) -> dict[str, str]:
    """The person's ranking as request fields, or none: zkr's own default applies."""
    return {} if config.ranking is None else {"ranking": config.ranking}


def _scoped(scope: Scope) -> dict[str, str]:
    """The configured scope, applied last so a tool argument can never override it."""
    return {"tenant_id": scope.tenant_id, "person_id": scope.person_id}
