"""A real Chromium (Debian's ``chromium`` package) driven by Playwright, and where screenshots go.

``playwright install`` cannot download browsers here, so the system Chromium is launched by path.
Without Playwright or Chromium these tests skip — unless ``ZKR_REQUIRE_BROWSER`` is set (the nox
``web`` session sets it after installing Chromium), where a missing browser fails the run.
Screenshots land in ``.artifacts/web/`` (gitignored; ``ZKR_WEB_ARTIFACTS`` moves it).
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[3]
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _unavailable(reason: str) -> None:
    if os.environ.get("ZKR_REQUIRE_BROWSER"):
        pytest.fail(f"browser tests required but {reason}")
    pytest.skip(reason)


@pytest.fixture(scope="session")
def chromium() -> Iterator[Any]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        _unavailable("playwright is not installed")
    executable = shutil.which("chromium") or shutil.which("chromium-browser")
    if executable is None:
        _unavailable("no chromium on PATH (apt-get install -y chromium)")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=executable, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def page(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(viewport={"width": 1100, "height": 800})
    page = context.new_page()
    page.set_default_timeout(15_000)
    try:
        yield page
    finally:
        context.close()


@pytest.fixture(scope="session")
def artifacts() -> Path:
    folder = Path(os.environ.get("ZKR_WEB_ARTIFACTS", ROOT / ".artifacts" / "web"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder
