"""One BLAS thread for the dense-scan worker's matrix product.

A recall hybrid search scans its lane on a worker thread while the search's own thread ranks the
lexical list in SQLite (:func:`zkr.embeddings.dense.dense_ranks_started`). With the BLAS's default
of one thread per core, the product took both cores of a 2-core machine from the SQL running
beside it, and OpenBLAS's pool threads then spin for a while waiting for more work: at 100,000
memories a hybrid search through ``serve`` spent about 57 ms of CPU per request against 33-37 ms
with one BLAS thread, for the same wall time (issue 27.5). One thread for the scan and one for the
SQL is the parallelism that machine has.

The scores do not change: OpenBLAS's matrix-vector product splits the rows between its threads,
each row's dot product summed by the same kernel either way (checked bit for bit on the 100k
benchmark lane; ``tests/core/embeddings/test_dense.py`` checks it on every run).

The limit is process-wide while it holds (BLAS libraries keep one thread count), set and restored
around each scan (a few microseconds; ``threadpoolctl`` finds the BLAS numpy loaded). Without
``threadpoolctl`` or a BLAS it knows, the scan runs as before.
"""

from __future__ import annotations

from contextlib import AbstractContextManager, nullcontext
from typing import Any

__all__ = ["one_blas_thread"]

_CONTROLLER: list[Any] = []  # [the BLAS libraries' controller, or None when there is none]


def _blas() -> Any:
    """The controller of the BLAS libraries loaded in this process (``None``: none found)."""
    if not _CONTROLLER:
        try:
            from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]

            found = ThreadpoolController().select(user_api="blas")
            _CONTROLLER.append(found if found.lib_controllers else None)
        except Exception:  # no threadpoolctl, or a library it cannot drive: scan as before
            _CONTROLLER.append(None)
    return _CONTROLLER[0]


def one_blas_thread() -> AbstractContextManager[object]:
    """A context in which BLAS calls of this process use one thread."""
    blas = _blas()
    return nullcontext() if blas is None else blas.limit(limits=1)
