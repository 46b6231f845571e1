"""The one-shot fast path: valid requests of some operations run without importing pydantic.

A one-shot ``zkr --db PATH search`` spent most of its start-up importing pydantic and building
the request model (issue 14). For operations whose handler can answer JSON data without pydantic
(the operation table's ``json_handler``), :func:`zkr.fastpath.check.accept` checks a decoded
request against a description of its request model, *generated from that pydantic model*
(``request_shapes.json``, written by ``python -m zkr.fastpath.generate --write``; a test fails
when it is stale). It either accepts the request, giving exactly the values pydantic would, or
declines, and the caller takes the normal path, where pydantic reports the error. There is no
second validator: anything the description cannot say for certain is declined.
"""
