"""``--embedder``: the page searches by meaning too, and what is written gets vectors (issue 24).

The embedder is the example plugin of this repository (a real, deterministic concept embedder),
registered the way an installed plugin is; ``test_embedder_e5.py`` does the same with e5.
"""

from __future__ import annotations

import http.cookiejar
import importlib.util
import re
import time
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.web.conftest import NOW, PERSON, TENANT, TOKEN, WebServer, start_server
from zkr import MemoryDb
from zkr_web.app import WebConfig, create_app
from zkr_web.cli import main

PLUGIN = Path(__file__).parents[1] / "plugins/zkr-example-embedder/src/zkr_example_embedder"
LANE = ("example/concepts", "1")


@pytest.fixture
def concept_embedder(registered_plugin: Callable[..., Any]) -> None:
    spec = importlib.util.spec_from_file_location("zkr_example_embedder", PLUGIN / "__init__.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    registered_plugin(module, name="zkr-example-embedder")


@pytest.fixture
def serve(tmp_path: Path) -> Iterator[Callable[..., WebServer]]:
    """``serve(embedder=...)``: start a zkr-web on the test's database file (seed it first)."""
    path = tmp_path / "memory.db"
    seeding = MemoryDb(path)
    running: list[Any] = []

    def start(embedder: tuple[str, str] | None = None) -> WebServer:
        config = WebConfig(
            db_path=str(path),
            tenant_id=TENANT,
            person_id=PERSON,
            token=TOKEN,
            clock=lambda: float(NOW),
            embedder=embedder,
        )
        server, thread, origin = start_server(create_app(config))
        running.append((server, thread))
        web = WebServer(base=_page_base(origin), token=TOKEN, db=seeding)
        web.login()
        return web

    try:
        yield start
    finally:
        for server, thread in running:
            server.should_exit = True
            thread.join(timeout=20)
        seeding.close()


def _page_base(origin: str) -> str:
    """Where the pages live: the address the first visit with the token is sent on to."""
    opener = urllib.request.build_opener(
        urllib.request.HTTPCookieProcessor(http.cookiejar.CookieJar())
    )
    with opener.open(f"{origin}/?token={TOKEN}", timeout=10) as reply:
        return str(reply.geturl()).split("?")[0].removesuffix("/")


def origin_of(web: WebServer) -> str:
    parts = urllib.parse.urlsplit(web.base)
    return f"{parts.scheme}://{parts.netloc}"


def wait_embedded(db: MemoryDb, lane: tuple[str, str], timeout: float = 30.0) -> None:
    """Wait until nothing of the scope is missing or stale in *lane* (the page's own thread)."""
    request = {"tenant_id": TENANT, "person_id": PERSON, "model": lane[0], "version": lane[1]}
    deadline = time.monotonic() + timeout
    while db.run("projections", request):
        assert time.monotonic() < deadline, "the page's background embedder did not finish"
        time.sleep(0.05)


def excerpts(web: WebServer, query: str) -> list[str]:
    body = web.request(f"/search?q={query}").body
    return re.findall(r'<a class="excerpt" href="[^"]+">([^<]+)</a>', body)


@pytest.mark.usefixtures("concept_embedder")
def test_with_an_embedder_the_page_searches_by_meaning(serve: Callable[..., WebServer]) -> None:
    lexical = serve()
    lexical.remember("Biscuit the dog", at=100)
    lexical.remember("I paid the rent", at=101)
    # No word in common with the memory: only the dense lane can find it.
    assert excerpts(lexical, "puppy") == []
    web = serve(embedder=LANE)
    wait_embedded(web.db, LANE)  # what was stored before the page started is embedded at start
    found = excerpts(web, "puppy")
    assert found[0] == "Biscuit the dog"
    assert "by words and meaning" in web.request("/search?q=puppy").body


@pytest.mark.usefixtures("concept_embedder")
def test_a_correction_made_on_the_page_is_embedded_as_it_arrives(
    serve: Callable[..., WebServer], monkeypatch: pytest.MonkeyPatch
) -> None:
    # No periodic catch-up during the test: only the page's own doorbell can embed the correction.
    monkeypatch.setattr("zkr.background_embedding.IDLE_SECONDS", 3600.0)
    seeding = serve()
    made = seeding.remember(
        "My job is at the office downtown.",
        {"subject": "me", "predicate": "employer", "value": "Acme"},
        at=100,
    )
    web = serve(embedder=LANE)
    wait_embedded(web.db, LANE)
    form = web.request(f"/claim/{made.claim_id}/correct").body
    csrf = re.search(r'name="csrf" value="([^"]+)"', form)
    assert csrf is not None
    reply = web.request(
        f"/claim/{made.claim_id}/correct",
        data={"csrf": csrf.group(1), "value": "Globex", "text": "I adopted a kitten."},
        headers={"Origin": origin_of(web)},
    )
    assert reply.status == 200 and "Globex" in reply.body
    wait_embedded(web.db, LANE)  # the page rang its embedder: the new capture has a vector
    assert "I adopted a kitten." in web.request("/search?q=puppy").body


def test_the_embedder_option_is_checked_before_anything_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "m.db"
    scope = ["--db", str(db), "--tenant", "home", "--person", "ana"]
    assert main([*scope, "--embedder", "no-version"]) == 2
    assert capsys.readouterr().err == (
        "zkr-web: --embedder must be MODEL/VERSION, got 'no-version'\n"
    )
    assert main([*scope, "--embedder", "no/such/1"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(
        "zkr-web: --embedder: no installed embedder for model 'no/such' version '1' (installed: "
    )
    # The environment variable, as zkr-mcp reads it.
    monkeypatch.setenv("ZKR_EMBEDDER", "elsewhere/2")
    assert main(scope) == 2
    assert "model 'elsewhere' version '2'" in capsys.readouterr().err
    assert not db.exists()
