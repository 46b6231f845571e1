"""Readable relevance and a filled Profile page, in a real Chromium (issue 24, acceptance 5)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from tests.web.browser.scenes import APRIL, LOCATOR, seed, shot
from tests.web.conftest import WebServer


def test_search_shows_relevance_as_words_and_a_bar(
    web: WebServer, page: Any, artifacts: Path
) -> None:
    seed(web)
    web.remember("Ana walked along the river in Lisbon after work.", at=APRIL + 60)
    page.goto(f"{web.base}/?token={web.token}")
    page.fill("form.search input[name=q]", "Ana Lisbon river")
    page.click("form.search button")
    page.wait_for_url("**/search?q=Ana+Lisbon+river**")
    results = page.locator("li.result")
    assert results.count() >= 2
    words = page.locator("li.result .relevance-words").all_inner_texts()
    assert words[0] == "best match"
    assert all(w.endswith("the best match") and w != "best match" for w in words[1:]), words
    # A bar the browser draws (a <meter>), filled in proportion to the share of the best score.
    meters = page.locator("li.result .relevance meter")
    assert meters.first.is_visible()
    values = [int(meters.nth(i).get_attribute("value")) for i in range(meters.count())]
    assert values[0] == 10_000 and all(v < 10_000 for v in values[1:])
    assert meters.first.bounding_box()["width"] > 40
    # What a person reads holds no basis points ("10000", "9166").
    for index, value in enumerate(values):
        text = results.nth(index).inner_text()
        assert not re.search(rf"\b{value}\b", text), text
    hover = page.locator("li.result .relevance").nth(1).get_attribute("title")
    assert re.fullmatch(r"\d{1,2} % of the best match's score .*", hover), hover
    shot(page, artifacts, "search-relevance")


def test_the_profile_page_shows_the_persons_profile_facts_with_their_quotes(
    web: WebServer, page: Any, artifacts: Path
) -> None:
    seed(web)
    made = web.remember(
        "Ana: call me Ana Sousa, that's my full name.",
        {"subject": "Ana", "predicate": "full_name", "value": "Ana Sousa", "kind": "profile_fact"},
        at=APRIL,
        locator={**LOCATOR, "segment_id": "seg-31"},
    )
    page.goto(f"{web.base}/?token={web.token}")
    page.click("nav >> text=Profile")
    page.wait_for_url("**/profile")
    facts = page.locator("li.fact")
    assert facts.count() == 1
    fact = facts.first
    assert fact.locator(".fact-key").inner_text() == "full name"
    assert fact.locator(".fact-value").inner_text() == "Ana Sousa"
    assert "Ana: call me Ana Sousa, that's my full name." in fact.locator("blockquote").inner_text()
    assert "seg-31" in fact.locator(".locator").inner_text()
    shot(page, artifacts, "profile")

    # The fact opens its claim page.
    fact.locator(".fact-value").click()
    page.wait_for_url(f"**/claim/{made.claim_id}")
    assert page.locator("h1.statement").inner_text() == "Ana full_name Ana Sousa"

    # As of March, before it was said, the page holds no profile fact.
    page.goto(f"{web.base}/profile")
    page.fill("form.asof input[name=as_of]", "2026-03-15T12:00:00")
    page.click("form.asof button")
    page.wait_for_selector("p.banner")
    assert page.locator("li.fact").count() == 0
    assert "No profile facts were held at that time" in page.locator("main").inner_text()
