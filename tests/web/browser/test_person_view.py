"""The timeline, a claim's history, forgetting and "as of" — in a real Chromium.

These pages stand on zkr-core's ``memories``, ``history`` and ``forget`` operations.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.web.browser.scenes import APRIL, seed, shot
from tests.web.conftest import WebServer


def test_the_timeline_lists_filters_and_pages(web: WebServer, page: Any, artifacts: Path) -> None:
    seed(web)
    for index in range(55):  # more than one page (50 rows)
        web.remember(
            f"Screen note {index:02d}: reading about tide tables.",
            at=APRIL + 60 * index,
            kind="screen",
        )
    page.goto(f"{web.base}/?token={web.token}")
    rows = page.locator("ul.timeline > li")
    assert rows.count() == 50
    # Newest first: the last screen note leads.
    assert "Screen note 54" in rows.first.inner_text()
    page.screenshot(path=str(artifacts / "timeline.png"))  # the first screenful
    page.click("a[rel=next]")
    page.wait_for_url("**cursor=**")
    older = page.locator("ul.timeline > li").all_inner_texts()
    assert any("Ana lives_in Lisbon" in row for row in older)
    assert not any("Screen note 54" in row for row in older)

    # Kinds as filters: only preferences.
    page.click("text=« newest")
    page.check("input[name=kind][value=preference]")
    page.click("form.filters button")
    page.wait_for_url("**kind=preference**")
    statements = page.locator("ul.timeline > li").all_inner_texts()
    assert len(statements) == 1 and "Ana prefers green tea" in statements[0]


def test_correct_then_both_versions_are_in_the_history_and_as_of_shows_the_earlier(
    web: WebServer, page: Any, artifacts: Path
) -> None:
    made = seed(web)
    page.goto(f"{web.base}/?token={web.token}")
    page.click("text=Ana lives_in Lisbon")
    page.wait_for_url(f"**/claim/{made['home'].claim_id}")
    page.click("text=Correct this")
    page.fill("input[name=value]", "Porto")
    page.fill("textarea[name=text]", "Ana moved to Porto in May.")
    page.fill("input[name=valid_at]", "2026-05-01T00:00:00")
    page.click("button:has-text('Record the correction')")
    page.wait_for_selector("p.notice")

    assert page.locator("h1.statement").inner_text() == "Ana lives_in Porto"
    versions = page.locator("ul.versions > li")
    assert versions.count() == 2
    assert "accepted" in versions.nth(0).inner_text()
    assert "Ana lives_in Porto" in versions.nth(0).inner_text()
    assert "Ana moved to Porto in May." in versions.nth(0).inner_text()
    old = versions.nth(1).inner_text()
    assert "superseded" in old and "Ana lives_in Lisbon" in old
    assert "I live in Lisbon, near the river." in old and "seg-19" in old
    assert "2026-05-01 00:00:00 UTC" in old  # valid until the correction's moment
    events = page.locator("table.events td:nth-child(2)").all_inner_texts()
    assert "recorded" in events and "corrected" in events
    shot(page, artifacts, "claim-history")

    # "As of" April: the page shows the belief of that time.
    page.fill("form.asof input[name=as_of]", "2026-04-15T12:00:00")
    page.click("form.asof button")
    page.wait_for_selector("p.banner")
    assert page.locator("h1.statement").inner_text() == "Ana lives_in Lisbon"
    assert "Ana lives_in Lisbon" in page.locator("li.believed").inner_text()
    shot(page, artifacts, "claim-as-of")
    # ...and so does the timeline of that moment, where the correction is not there yet.
    page.click("nav >> text=Timeline")
    page.wait_for_selector("ul.timeline")
    rows = page.locator("ul.timeline > li").all_inner_texts()
    assert any("Ana lives_in Lisbon" in row for row in rows)
    assert not any("Porto" in row for row in rows)
    page.click("text=back to now")
    page.wait_for_selector("ul.timeline")
    rows = page.locator("ul.timeline > li").all_inner_texts()
    assert any("Ana lives_in Porto" in row for row in rows)


def test_forget_a_source_and_it_is_gone(web: WebServer, page: Any, artifacts: Path) -> None:
    made = seed(web)
    page.goto(f"{web.base}/?token={web.token}")
    page.click("text=Ana prefers green tea in the afternoon.")
    page.wait_for_url(f"**/source/{made['tea'].source_id}")
    page.click("text=Forget…")
    confirmation = page.locator("main").inner_text()
    assert "erased irreversibly" in confirmation and "cannot be undone" in confirmation
    shot(page, artifacts, "forget-confirm")
    page.click("button:has-text('Forget it')")
    page.wait_for_selector("p.notice")
    assert "Forgotten" in page.locator("p.notice").inner_text()
    timeline = page.locator("main").inner_text()
    assert "green tea" not in timeline
    assert "Ana lives_in Lisbon" in timeline  # the rest stays
    page.goto(f"{web.base}/search?q=green+tea")
    assert page.locator("li.result").count() == 0
    response = page.goto(f"{web.base}/source/{made['tea'].source_id}")
    assert response is not None and response.status == 404
    # Its claim is gone from the timeline too; its history says it was erased.
    response = page.goto(f"{web.base}/claim/{made['tea'].claim_id}")
    assert response is not None
    if response.status == 200:
        assert "green tea" not in page.locator("main").inner_text()
