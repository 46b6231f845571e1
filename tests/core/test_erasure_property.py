"""Erasure is absorbing under any interleaving (issue 26, point 2): three SQLite databases.

Random interleavings of remember/correct/forget/export/apply across three databases, pages
delivered late, duplicated, reordered and under other upstream names (a backup's feed) - at the
end no forgotten text is in any byte of any file (database and WAL) or search answer, and every
database holds the same content (:mod:`tests.core.erasure_model`). CI runs 100 interleavings;
``ZKR_FUZZ_PROFILE=long`` (``nox -s erasure_long``) runs 1,000 longer ones. Fails on b1744e7 (a late
page brings the forgotten text back). The PostgreSQL replica's part is
``tests/postgres/test_erasure_property.py``.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from hypothesis import HealthCheck, event, given, settings

from tests.core.erasure_model import LONG, Step, World, check, steps

EXAMPLES = 1_000 if LONG else 100


@settings(
    max_examples=EXAMPLES,
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(program=steps(postgres=False))
def test_forgotten_text_never_comes_back_and_all_databases_agree(program: list[Step]) -> None:
    with tempfile.TemporaryDirectory(prefix="zkr-erasure-") as folder:
        world = World.open(Path(folder))
        try:
            for step in program:
                world.run(step)
            world.settle()
            check(world)
            event(f"forgotten captures: {min(len(world.forgotten), 3)}+")
            event(f"corrections: {min(world.corrected, 2)}+")
            dropped = world.dropped
            event(
                f"late copies dropped: {'0' if not dropped else '1-9' if dropped < 10 else '10+'}"
            )
        finally:
            world.close()
