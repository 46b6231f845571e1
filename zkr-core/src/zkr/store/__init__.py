"""The store: the SQLite connection and its transactions (:mod:`zkr.store.database`), the schema and
its migrations, the projections' rows and the rows' snapshots as feed records.

This ``__init__`` imports nothing: importing one store module (``zkr.store.records``, say) must not
open the whole chain database -> migrations -> feed, which imports ``records`` back.
"""
