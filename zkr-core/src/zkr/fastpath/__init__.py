"""The one-shot fast path: valid requests of every operation run without importing pydantic.

A one-shot ``zkr --db PATH COMMAND`` (or a Claude Code hook) spent most of its start-up importing
pydantic and building the models (issues 14, 27): 15-30 times ``python -c pass``. Here, from one
description generated from the operation table and the models (``request_shapes.json``, written
by ``python -m zkr.fastpath.generate --write``; a test fails when it is stale):

* :func:`zkr.fastpath.check.accept` checks a decoded request exactly as its pydantic model
  would, or declines (pydantic then decides: there is no second validator);
* :mod:`zkr.fastpath.light` rebuilds every model as a light class (fields, keys, conversions,
  defaults; no validation), which the operation's own handler builds its result from;
* :func:`zkr.fastpath.run.answer` runs one request that way in a process that has not imported
  the real models, or declines.
"""
