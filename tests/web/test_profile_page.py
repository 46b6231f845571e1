"""The Profile page lists the person's profile facts, cited, as they were believed (issue 24).

Before, it listed only the ``profiles`` operation's entries, which something must build
explicitly with ``profile``: a stored ``profile_fact`` claim left the page empty.
"""

from __future__ import annotations

import re

from tests.web.conftest import PERSON, TENANT, WebServer
from zkr import models as m

MAY = 1_777_593_600  # 2026-05-01 00:00:00 UTC
JUNE = 1_780_272_000 - 86_400  # 2026-05-31: before the server's fixed "now"


def _facts(body: str) -> list[tuple[str, str]]:
    """(key, value) of each listed profile fact, in page order."""
    return re.findall(
        r'<span class="fact-key">([^<]*)</span>\s*<a class="fact-value" href="[^"]*">([^<]*)</a>',
        body,
    )


def test_a_profile_fact_claim_fills_the_page_with_its_cited_words(web: WebServer) -> None:
    made = web.remember(
        "By the way, I live in Lisbon now, near the river.",
        {"subject": "me", "predicate": "lives_in", "value": "Lisbon", "kind": "profile_fact"},
        at=MAY,
    )
    web.remember(  # a fact of another kind is no profile fact
        "I prefer green tea.",
        {"subject": "me", "predicate": "prefers", "value": "green tea", "kind": "preference"},
        at=MAY + 60,
    )
    web.login()
    body = web.request("/profile").body
    assert "No profile facts" not in body
    assert _facts(body) == [("lives in", "Lisbon")]
    assert re.search(rf'class="fact-value" href="[^"]*/claim/{made.claim_id}"', body)
    # Cited: the quote it rests on, linked to its evidence page.
    assert re.search(rf'href="[^"]*/evidence/{made.evidence_id}"', body)
    assert "By the way, I live in Lisbon now, near the river." in body
    assert "green tea" not in body


def test_the_page_shows_the_facts_believed_at_the_as_of_moment(web: WebServer) -> None:
    made = web.remember(
        "I work at Acme.",
        {"subject": "me", "predicate": "employer", "value": "Acme", "kind": "profile_fact"},
        at=MAY,
    )
    web.db.correct(
        m.CorrectRequest(
            tenant_id=TENANT,
            person_id=PERSON,
            claim_id=made.claim_id,
            text="I moved to Globex.",
            value="Globex",
            valid_at=JUNE,
            recorded_at=JUNE,
        )
    )
    web.login()
    now = web.request("/profile").body
    assert _facts(now) == [("employer", "Globex")]
    assert "I moved to Globex." in now
    before = web.request(f"/profile?as_of={MAY + 3600}").body
    assert _facts(before) == [("employer", "Acme")]
    assert "I work at Acme." in before and "Globex" not in before
    # Before anything was said, nothing was held.
    assert (
        "No profile facts were held at that time" in web.request(f"/profile?as_of={MAY - 1}").body
    )


def test_an_explicit_profile_entry_shows_its_stability_beside_the_fact(web: WebServer) -> None:
    made = web.remember(
        "My name is Ana.",
        {"subject": "me", "predicate": "name", "value": "Ana", "kind": "profile_fact"},
        at=MAY,
    )
    web.db.run(
        "profile",
        {
            "tenant_id": TENANT,
            "person_id": PERSON,
            "claim_id": made.claim_id,
            "stability": "stable",
            "recorded_at": MAY + 10,
        },
    )
    web.login()
    body = web.request("/profile").body
    assert _facts(body) == [("name", "Ana")]
    assert re.search(r"true 2026-05-01 00:00:00 UTC → now · stable", body), body
    # Before the entry was recorded, the fact is listed without it.
    assert "· stable" not in web.request(f"/profile?as_of={MAY + 5}").body


def test_many_facts_are_paged(web: WebServer) -> None:
    for index in range(53):
        web.remember(
            f"Fact number {index}.",
            {
                "subject": "me",
                "predicate": f"k{index:02d}",
                "value": f"v{index}",
                "kind": "profile_fact",
            },
            at=MAY + index,
        )
    web.login()
    first = web.request("/profile").body
    assert len(_facts(first)) == 50 and _facts(first)[0] == ("k52", "v52")
    older = re.search(r'<a rel="next" href="[^"]*(/profile\?[^"]+)">', first)
    assert older is not None
    rest = _facts(web.request(older.group(1).replace("&amp;", "&")).body)
    assert rest == [("k02", "v2"), ("k01", "v1"), ("k00", "v0")]
