"""The timeline ``?as_of=`` shows a claim as it was believed then (issue 24).

A correction recorded later had not superseded the claim yet, nor ended its validity: the page
must not show the "superseded" badge or an end date from the future. (It did: the timeline uses
``memories`` with ``as_of``, which listed the claim's state of today.)
"""

from __future__ import annotations

import re

from tests.web.conftest import PERSON, TENANT, WebServer
from zkr import models as m


def test_the_timeline_as_of_before_a_correction_shows_the_claim_as_then_believed(
    web: WebServer,
) -> None:
    made = web.remember(
        "Ana works at the bakery.",
        {"subject": "Ana", "predicate": "employer", "value": "the bakery"},
        at=1_000,
    )
    assert made.claim_id is not None
    web.db.correct(
        m.CorrectRequest(
            tenant_id=TENANT,
            person_id=PERSON,
            claim_id=made.claim_id,
            text="Ana works at the library now.",
            value="the library",
            valid_at=3_000,
            recorded_at=3_000,
        )
    )
    web.login()
    body = web.request("/?as_of=2000").body
    claims = re.findall(r'<li class="claim status-(\w+)">(.*?)</li>', body, flags=re.S)
    assert [status for status, _ in claims] == ["accepted"]
    held = claims[0][1]
    assert "the bakery" in held
    assert "superseded" not in held
    assert "→ now" in held  # still true, as far as anyone knew then
    # Today the listing shows the library only.
    today = re.findall(r'<li class="claim status-(\w+)">(.*?)</li>', web.request("/").body, re.S)
    assert [status for status, _ in today] == ["accepted"] and "the library" in today[0][1]
