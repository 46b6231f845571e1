"""A person's visit, in a real Chromium: search, open a claim, correct it, look back in time.

Each step checks what the page shows (not only that it loaded) and keeps a screenshot of the main
pages in the artifacts folder.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.web.browser.scenes import MARCH, seed, shot
from tests.web.conftest import WebServer


def test_search_open_a_claim_correct_it_and_look_back(
    web: WebServer, page: Any, artifacts: Path
) -> None:
    made = seed(web)
    page.goto(f"{web.base}/?token={web.token}")
    assert "token" not in page.url  # moved into the cookie, out of the address bar
    shot(page, artifacts, "home")

    # Search: the claim comes back with its cited quote and transcript locator.
    page.fill("form.search input[name=q]", "Ana Lisbon")
    page.click("form.search button")
    page.wait_for_url("**/search?q=Ana+Lisbon**")
    first = page.locator("li.result").first
    assert first.locator("a.excerpt").inner_text() == "Ana lives_in Lisbon"
    assert "I live in Lisbon, near the river." in first.locator("blockquote").inner_text()
    assert "seg-19" in first.locator(".locator").inner_text()
    shot(page, artifacts, "search")

    # Open the claim, then correct it.
    first.locator("a.excerpt").click()
    page.wait_for_url(f"**/claim/{made['home'].claim_id}")
    assert page.locator("h1.statement").inner_text() == "Ana lives_in Lisbon"
    shot(page, artifacts, "claim")
    page.click("text=Correct this")
    page.fill("input[name=value]", "Porto")
    page.fill("textarea[name=text]", "Ana moved to Porto in May.")
    shot(page, artifacts, "correct")
    page.click("button:has-text('Record the correction')")
    page.wait_for_selector("p.notice")
    assert page.locator("h1.statement").inner_text() == "Ana lives_in Porto"
    assert "Ana moved to Porto in May." in page.locator("ul.evidence-list").first.inner_text()

    # Now the search shows the new belief...
    page.fill("form.search input[name=q]", "Ana Porto Lisbon")
    page.click("form.search button")
    page.wait_for_selector("li.result")
    statements = page.locator("li.result a.excerpt").all_inner_texts()
    assert "Ana lives_in Porto" in statements and "Ana lives_in Lisbon" not in statements

    # ...and "as of" April shows what the agent believed then.
    page.fill("form.asof input[name=as_of]", "2026-04-15T12:00:00")
    page.click("form.asof button")
    page.wait_for_selector("p.banner")
    assert "2026-04-15 12:00:00 UTC" in page.locator("p.banner").inner_text()
    statements = page.locator("li.result a.excerpt").all_inner_texts()
    assert "Ana lives_in Lisbon" in statements and "Ana lives_in Porto" not in statements
    shot(page, artifacts, "search-as-of")
    page.click("text=back to now")
    page.wait_for_selector("li.result")
    assert "Ana lives_in Porto" in page.locator("li.result a.excerpt").all_inner_texts()


def test_stored_script_stays_text_in_the_browser(
    web: WebServer, page: Any, artifacts: Path
) -> None:
    payload = '<script>window.__pwned = 1</script><img src=x onerror="window.__pwned = 2">'
    made = web.remember(
        f"Ana pasted {payload}",
        {"subject": "Ana", "predicate": "pasted", "value": payload},
        at=MARCH,
    )
    page.goto(f"{web.base}/?token={web.token}")
    for path in (f"/claim/{made.claim_id}", f"/source/{made.source_id}", "/search?q=pasted"):
        page.goto(web.base + path)
        assert page.evaluate("window.__pwned") is None
        assert payload in page.locator("main").inner_text()
    shot(page, artifacts, "escaped")


def test_without_the_token_the_browser_sees_nothing(web: WebServer, page: Any) -> None:
    seed(web)
    response = page.goto(f"{web.base}/search?q=Lisbon")
    assert response is not None and response.status == 401
    assert "Lisbon" not in page.content()
    assert page.locator("h1").inner_text() == "Access token needed"
