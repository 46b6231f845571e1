"""The time budget of one search (issue 18, defect 2), kept per connection.

Every search has a time budget (:func:`search_budget`, ``Database.search_budget_seconds``, default
:data:`zkr.store.database.SEARCH_BUDGET_SECONDS`): SQLite's progress handler aborts the statement
running when the budget is spent, and the search fails with a clear
:class:`~zkr.errors.LimitExceeded` instead of holding the database (and the caller) for minutes.
Work outside SQLite (embedding the query) runs :func:`within_budget`; a lane load that is the
store's cost, not the query's, runs :func:`budget_paused`.

It is the store's: a bound on a connection's work, used by the retrieval layer (which starts it)
and the embeddings layer (whose dense lane runs inside it), so it sits below both.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable, Iterator

from zkr.errors import LimitExceeded

# typing's TYPE_CHECKING without importing typing: one-shot start-up (issue 27.4).
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TypeVar

    _T = TypeVar("_T")


__all__ = ["budget_paused", "search_budget", "within_budget"]

#: SQLite virtual-machine steps between two looks at the clock.
_BUDGET_STEPS = 1_000


class _Budget:
    """The running budget of one connection's search: its deadline, and whether it is paused."""

    __slots__ = ("deadline", "paused", "seconds")

    def __init__(self, deadline: float, seconds: float = 0.0) -> None:
        self.deadline = deadline
        self.paused = False
        self.seconds = seconds


# The budget of each connection running a search (keyed by the connection object's id while the
# search runs, so a pause inside the search finds it).
_RUNNING: dict[int, _Budget] = {}


@contextlib.contextmanager
def search_budget(conn: sqlite3.Connection, seconds: float | None) -> Iterator[None]:
    """Abort the block's SQLite work once *seconds* have passed (``None``: no budget), not
    counting the time spent in :func:`budget_paused` blocks.

    :raises LimitExceeded: the budget ran out; nothing was written (searches only read).
    """
    if seconds is None:
        yield
        return
    budget = _Budget(time.monotonic() + seconds, seconds)
    spent = False

    def check() -> int:
        nonlocal spent
        spent = not budget.paused and time.monotonic() > budget.deadline
        return 1 if spent else 0

    _RUNNING[id(conn)] = budget
    conn.set_progress_handler(check, _BUDGET_STEPS)
    try:
        yield
    except sqlite3.OperationalError as exc:
        if spent and "interrupt" in str(exc):
            raise LimitExceeded(f"search exceeded its time budget of {seconds:g} seconds") from None
        raise
    finally:
        conn.set_progress_handler(None, 0)
        _RUNNING.pop(id(conn), None)


def within_budget(conn: sqlite3.Connection, work: Callable[[], _T]) -> _T:
    """*work*'s result, or :class:`LimitExceeded` once *conn*'s running search budget is spent.

    For work outside SQLite, which the progress handler cannot interrupt: embedding the query with
    an installed embedder (issue 26: an unbounded e5 query took 77 s inside a 5 s budget). The work
    runs on a worker thread and is waited for only as long as the budget has left; work that runs
    past it finishes on its own (embedders bound their inputs) and its result is dropped.
    """
    budget = _RUNNING.get(id(conn))
    if budget is None or budget.paused:
        return work()
    left = budget.deadline - time.monotonic()
    spent = LimitExceeded(f"search exceeded its time budget of {budget.seconds:g} seconds")
    if left <= 0:
        raise spent
    import concurrent.futures  # only a query embedded here needs it (start-up, issue 27.4)

    pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="zkr-search-embed")
    try:
        return pool.submit(work).result(timeout=left)
    except concurrent.futures.TimeoutError:
        raise spent from None
    finally:
        pool.shutdown(wait=False)


@contextlib.contextmanager
def budget_paused(conn: sqlite3.Connection) -> Iterator[None]:
    """Work in the block does not count against *conn*'s running search budget, if any.

    For the dense lane's load or refresh: a cache of the whole lane (seconds for 100,000 vectors on
    a busy machine), whose cost is the store's size and is paid once, not the query's work. Inside
    the budget it failed every hybrid search of a large store under load, each retry starting the
    load again.
    """
    budget = _RUNNING.get(id(conn))
    if budget is None or budget.paused:
        yield
        return
    budget.paused = True
    started = time.monotonic()
    try:
        yield
    finally:
        budget.paused = False
        budget.deadline += time.monotonic() - started
