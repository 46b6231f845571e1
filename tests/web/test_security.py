"""zkr-web's safety rules, checked over real HTTP against a real database.

No token: refused. Stored markup: inert. Another scope's ids: the same 404 as missing ones.
A POST without the CSRF token (or from another origin): refused, and the database unchanged.
"""

from __future__ import annotations

import re
from typing import Any

from tests.web.conftest import PERSON, TENANT, WebServer
from zkr import models as m
from zkr_web.security import session_path

PAYLOAD = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'


def _feed_mark(web: WebServer, tenant: str = TENANT, person: str = PERSON) -> Any:
    """Everything the scope's export feed holds: equal before and after means nothing changed."""
    page = web.db.export(
        m.ExportRequest(tenant_id=tenant, person_id=person, export_format=1, limit=100)
    )
    return page.model_dump(mode="json")


def test_every_request_without_the_token_is_refused(web: WebServer) -> None:
    made = web.remember(
        "Ana lives in Lisbon", {"subject": "Ana", "predicate": "lives_in", "value": "Lisbon"}
    )
    paths = [
        "/",
        "/search?q=Lisbon",
        f"/claim/{made.claim_id}",
        f"/source/{made.source_id}",
        f"/evidence/{made.evidence_id}",
        "/profile",
        "/static/style.css",
        "/nowhere",
    ]
    for path in paths:
        reply = web.request(path, cookies=False)
        assert reply.status == 401, path
        assert "Lisbon" not in reply.body
    wrong = [
        {"Authorization": "Bearer " + "y" * 43},
        {"Cookie": "zkr_web_token=" + "y" * 43},
        {"Cookie": "zkr_web_token=" + web.token[:-1]},
    ]
    for headers in wrong:
        assert web.request("/search?q=Lisbon", headers=headers, cookies=False).status == 401
    assert web.request("/?token=wrong", cookies=False).status == 401
    # The token does open it, as a header or through the cookie the first visit sets.
    bearer = web.request(
        "/search?q=Lisbon", headers={"Authorization": f"Bearer {web.token}"}, cookies=False
    )
    assert bearer.status == 200 and "Lisbon" in bearer.body


def test_first_visit_moves_the_token_into_a_strict_cookie_and_out_of_the_address(
    web: WebServer,
) -> None:
    reply = web.request(f"/search?q=x&token={web.token}", follow=False)
    assert reply.status == 303
    base = session_path(web.token)
    assert reply.headers["location"] == f"{base}/search?q=x"
    cookie = reply.headers["set-cookie"]
    assert "HttpOnly" in cookie and "SameSite=strict" in cookie and f"Path={base};" in cookie
    assert web.request("/search?q=x").status == 200  # the jar now holds the cookie


def test_answers_carry_the_restrictive_headers(web: WebServer) -> None:
    for reply in (web.request("/", cookies=False), web.login()):
        assert "script-src 'self'" in reply.headers["content-security-policy"]
        assert reply.headers["x-frame-options"] == "DENY"
        assert reply.headers["referrer-policy"] == "same-origin"
        assert reply.headers["cache-control"] == "no-store"


def test_stored_markup_renders_as_text(web: WebServer) -> None:
    made = web.remember(
        f"Ana said {PAYLOAD}", {"subject": "Ana", "predicate": "said", "value": PAYLOAD}
    )
    web.login()
    pages = [
        "/search?q=Ana",
        f"/claim/{made.claim_id}",
        f"/source/{made.source_id}",
        f"/evidence/{made.evidence_id}",
        f"/claim/{made.claim_id}/correct",
        f"/source/{made.source_id}/delete",
    ]
    for path in pages:
        body = web.request(path).body
        assert "&lt;script&gt;window.__pwned = 1&lt;/script&gt;" in body, path
        assert "<script>window" not in body and "<img src=x" not in body, path
        # The only scripts a page loads are the server's own file.
        assert re.findall(r"<script[^>]*>", body) == [
            f'<script src="{session_path(web.token)}/static/app.js" defer>'
        ]


def test_another_scopes_ids_answer_like_missing_ones(web: WebServer) -> None:
    foreign = web.remember(
        "Bo works at Initech",
        {"subject": "Bo", "predicate": "employer", "value": "Initech"},
        tenant="home",
        person="bo",
    )
    other_tenant = web.remember(
        "Cy works at Hooli",
        {"subject": "Cy", "predicate": "employer", "value": "Hooli"},
        tenant="work",
    )
    web.login()
    missing = "0" * 32
    for made in (foreign, other_tenant):
        routes = [
            ("/claim/{}", made.claim_id),
            ("/claim/{}/correct", made.claim_id),
            ("/source/{}", made.source_id),
            ("/source/{}/delete", made.source_id),
            ("/evidence/{}", made.evidence_id),
        ]
        for template, target in routes:
            seen, absent = (
                web.request(template.format(target)),
                web.request(template.format(missing)),
            )
            assert seen.status == absent.status == 404, template
            assert seen.body.replace(target, missing) == absent.body, template
            assert "Initech" not in seen.body and "Hooli" not in seen.body
        found = web.request("/search?q=Initech+Hooli").body
        assert "no cited memory matched" in found and 'class="result' not in found
    # Even a well-formed POST with the right CSRF token cannot reach the other scope.
    before = _feed_mark(web, "home", "bo")
    csrf = web.csrf()
    assert (
        web.request(
            f"/claim/{foreign.claim_id}/correct", data={"csrf": csrf, "value": "Evil"}
        ).status
        == 404
    )
    assert web.request(f"/source/{foreign.source_id}/delete", data={"csrf": csrf}).status == 404
    assert _feed_mark(web, "home", "bo") == before


def test_forged_posts_change_nothing(web: WebServer) -> None:
    made = web.remember(
        "Ana lives in Lisbon", {"subject": "Ana", "predicate": "lives_in", "value": "Lisbon"}
    )
    web.login()
    before = _feed_mark(web)
    csrf = web.csrf()
    forged: list[tuple[str, dict[str, str], dict[str, str]]] = [
        (f"/claim/{made.claim_id}/correct", {"value": "Porto"}, {}),
        (f"/claim/{made.claim_id}/correct", {"value": "Porto", "csrf": "0" * 64}, {}),
        (f"/claim/{made.claim_id}/correct", {"value": "Porto", "csrf": web.token}, {}),
        (f"/source/{made.source_id}/delete", {}, {}),
        (f"/source/{made.source_id}/delete", {"csrf": ""}, {}),
        # The right token from a page of another origin (a cross-site form) is refused too.
        (f"/source/{made.source_id}/delete", {"csrf": csrf}, {"Origin": "http://evil.test"}),
    ]
    for path, data, headers in forged:
        reply = web.request(path, data=data, headers=headers)
        assert reply.status == 403, (path, data)
        assert "nothing was changed" in reply.body
    # A GET never changes anything either: it only shows the confirmation.
    assert "Delete it" in web.request(f"/source/{made.source_id}/delete?csrf={csrf}").body
    assert _feed_mark(web) == before
    assert web.request(f"/claim/{made.claim_id}").status == 200


def test_a_genuine_correction_and_deletion_go_through_the_operations(web: WebServer) -> None:
    made = web.remember(
        "Ana lives in Lisbon", {"subject": "Ana", "predicate": "lives_in", "value": "Lisbon"}
    )
    web.login()
    csrf = web.csrf()
    reply = web.request(
        f"/claim/{made.claim_id}/correct",
        data={"csrf": csrf, "value": "Porto", "text": "I moved to Porto"},
    )
    assert reply.status == 200 and "Ana lives_in Porto" in reply.body
    pack = web.db.search(m.SearchRequest(tenant_id=TENANT, person_id=PERSON, query="Porto"))
    assert [item.excerpt for item in pack.items] == ["Ana lives_in Porto"]
    # A refused correction (blank value) says why and changes nothing.
    before = _feed_mark(web)
    claim_id = pack.items[0].memory.id
    refused = web.request(f"/claim/{claim_id}/correct", data={"csrf": csrf, "value": " "})
    assert refused.status == 400 and 'class="error"' in refused.body
    assert _feed_mark(web) == before
    deleted = web.request(f"/source/{made.source_id}/delete", data={"csrf": csrf})
    assert deleted.status == 200
    assert web.request(f"/source/{made.source_id}").status == 404


def test_times_outside_zkrs_range_are_refused_clearly(web: WebServer) -> None:
    # An "as of" or a correction time past the 64-bit range is a person's typo, not a crash: a
    # clear 400 page, nothing changed (it was a 500 with a traceback in the server's log).
    made = web.remember(
        "Ana lives in Lisbon", {"subject": "Ana", "predicate": "lives_in", "value": "Lisbon"}
    )
    web.login()
    before = _feed_mark(web)
    huge = "9" * 19
    for moment in (huge, "-" + huge):
        for path in (f"/?as_of={moment}", f"/search?q=Lisbon&as_of={moment}"):
            reply = web.request(path)
            assert reply.status == 400, (path, reply.status)
            assert 'class="error"' in reply.body or "refused" in reply.body
        reply = web.request(
            f"/claim/{made.claim_id}/correct",
            data={"csrf": web.csrf(), "value": "Porto", "valid_at": moment},
        )
        assert reply.status == 400 and 'class="error"' in reply.body, reply.status
    assert _feed_mark(web) == before
