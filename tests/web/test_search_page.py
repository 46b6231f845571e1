"""The search page ranks with zkr's default (recall) and shows what each item cites."""

from __future__ import annotations

import re

import pytest

from tests.web.conftest import PERSON, TENANT, WebServer
from zkr import models as m
from zkr_web.security import session_path


def test_search_uses_the_recall_ranking_and_shows_citations(
    web: WebServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ZKR_RANKING", raising=False)
    made = web.remember(
        "Ana started as a nurse at Santa Maria hospital.",
        {"subject": "Ana", "predicate": "employer", "value": "Santa Maria hospital"},
    )
    # "nurses" finds "nurse" only through the recall index's stemming, not the contract ranking.
    contract = web.db.search(
        m.SearchRequest(tenant_id=TENANT, person_id=PERSON, query="nurses", ranking="contract")
    )
    assert contract.items == []
    web.login()
    body = web.request("/search?q=nurses").body
    results = re.findall(r'<a class="excerpt" href="([^"]+)">([^<]+)</a>', body)
    base = session_path(web.token)
    assert results == [(f"{base}/claim/{made.claim_id}", "Ana employer Santa Maria hospital")]
    assert f'href="{base}/evidence/{made.evidence_id}"' in body
    assert "Ana started as a nurse at Santa Maria hospital." in body
