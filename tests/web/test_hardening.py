"""Issue 26's zkr-web findings, each kept as a regression test.

- ``HEAD`` with the token and the CSRF token ran ``forget`` (Starlette routes HEAD with GET, and
  the handlers tested ``method == "GET"``): only a POST changes anything now, on every route.
- ``GET //evil.example/x?as_of=0`` rendered a link (and a form action) to ``//evil.example/x``,
  and a login at ``//evil.example/x?token=…`` redirected there: every path written back is
  same-origin.
- ``--token T`` put the token in the process list: the flag is refused, the token is read from a
  file or the environment.
"""

from __future__ import annotations

import http.client
import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path
from urllib.parse import urlsplit

import pytest

from tests.web.conftest import WebServer


def _csrf_of(web: WebServer, form_path: str) -> str:
    """The CSRF token exactly as the confirmation form carries it."""
    page = web.request(form_path)
    found = re.search(r'name="csrf" value="([^"]+)"', page.body)
    assert found, (form_path, page.status)
    return found.group(1)


def _raw(web: WebServer, method: str, path: str, body: str = "") -> http.client.HTTPResponse:
    """One request exactly as written (no client normalising ``//``), with the session cookie."""
    cookie = "; ".join(f"{c.name}={c.value}" for c in web.jar)
    parts = urlsplit(web.origin)
    connection = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    headers = {"Cookie": cookie, "Content-Type": "application/x-www-form-urlencoded"}
    connection.request(method, path, body=body.encode(), headers=headers)
    return connection.getresponse()


def _live(web: WebServer, source_id: str, claim_id: str) -> tuple[int, int]:
    return web.request(f"/source/{source_id}").status, web.request(f"/claim/{claim_id}").status


def test_head_with_token_and_csrf_changes_nothing_on_any_route(web: WebServer) -> None:
    made = web.remember("My PIN is 4821", {"subject": "Ana", "predicate": "pin", "value": "4821"})
    web.login()
    prefix = urlsplit(web.base).path
    csrf = _csrf_of(web, f"/source/{made.source_id}/forget")
    routes = [
        f"/source/{made.source_id}/forget",
        f"/source/{made.source_id}/delete",
        f"/claim/{made.claim_id}/correct",
    ]
    for route in routes:
        form = f"csrf={csrf}&value=Evil"
        # A HEAD carrying everything a POST would: the query and a body.
        answer = _raw(web, "HEAD", f"{prefix}{route}?{form}", body=form)
        answer.read()
        assert answer.status in (200, 405), (route, answer.status)
        assert _live(web, made.source_id, made.claim_id) == (200, 200), route
    found = web.request("/search?q=PIN")
    assert "4821" in found.body
    # The same form as a POST does run (the CSRF token above is the real one).
    assert web.request(f"/source/{made.source_id}/forget", data={"csrf": csrf}).status == 200
    assert web.request(f"/source/{made.source_id}").status == 404
    assert "4821" not in web.request("/search?q=PIN").body


@pytest.mark.parametrize(
    "path", ["//evil.example/x?as_of=0", "/\\evil.example/x?as_of=0", "///evil.example/x?as_of=0"]
)
def test_a_path_naming_another_host_is_never_written_back(web: WebServer, path: str) -> None:
    web.login()
    prefix = urlsplit(web.base).path
    for asked in (path, prefix + path):
        answer = _raw(web, "GET", asked)
        body = answer.read().decode("utf-8")
        location = answer.getheader("location") or ""
        for target in [*re.findall(r'(?:href|action|src)="([^"]*)"', body), location]:
            assert not target.startswith(("//", "/\\", "\\")), (asked, target)
            assert "evil.example" not in urlsplit(target).netloc, (asked, target)


@pytest.mark.parametrize("path", ["//evil.example/x", "/\\evil.example/x", "///evil.example/"])
def test_the_login_redirect_stays_on_this_origin(web: WebServer, path: str) -> None:
    answer = _raw(web, "GET", f"{path}?token={web.token}&as_of=0")
    assert answer.status == 303
    location = answer.getheader("location") or ""
    assert location.startswith("/") and not location.startswith(("//", "/\\")), location
    assert urlsplit(location).netloc == ""


def _exe() -> str:
    found = shutil.which("zkr-web", path=str(Path(sys.executable).parent))
    assert found
    return found


def _environment(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ZKR_")}
    return {**env, "ZKR_TENANT_ID": "home", "ZKR_PERSON_ID": "ana", **extra}


def test_the_token_flag_is_refused_before_anything_is_served(tmp_path: Path) -> None:
    token = "s3cret-" + "q" * 30
    done = subprocess.run(
        [_exe(), "--db", str(tmp_path / "m.db"), "--port", "0", "--token", token],
        capture_output=True,
        text=True,
        timeout=30,
        env=_environment(),
    )
    assert done.returncode == 2, done.stdout
    assert done.stdout == ""
    (line,) = done.stderr.splitlines()
    assert "--token-file" in line and "ZKR_WEB_TOKEN" in line and "Traceback" not in line
    assert not (tmp_path / "m.db").exists()


@pytest.mark.parametrize("how", ["file", "environment"])
def test_the_token_never_shows_in_the_process_list(tmp_path: Path, how: str) -> None:
    token = "s3cret-" + "z" * 30
    extra: dict[str, str] = {}
    argv = [_exe(), "--db", str(tmp_path / "m.db"), "--port", "0"]
    if how == "file":
        (tmp_path / "token").write_text(token + "\n")
        argv += ["--token-file", str(tmp_path / "token")]
    else:
        extra["ZKR_WEB_TOKEN"] = token
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=_environment(**extra)
    )
    try:
        assert process.stdout is not None
        process.stdout.readline()
        opened = process.stdout.readline()
        assert opened.rstrip().endswith(f"?token={token}"), opened  # the token in use
        # What `ps` shows every user: the command line.
        deadline = time.monotonic() + 5
        while True:
            shown = Path(f"/proc/{process.pid}/cmdline").read_bytes().replace(b"\0", b" ")
            if shown or time.monotonic() > deadline:
                break
        assert shown and token.encode() not in shown
        ps = shutil.which("ps")
        if ps:
            listing = subprocess.run([ps, "-eo", "args"], capture_output=True, text=True).stdout
            assert token not in listing
    finally:
        process.terminate()
        process.wait(timeout=20)


def test_zkr_web_through_zkr_refuses_the_token_flag_too(tmp_path: Path) -> None:
    pytest.importorskip("zkr_cli")
    zkr = shutil.which("zkr", path=str(Path(sys.executable).parent))
    assert zkr
    done = subprocess.run(
        [zkr, "--db", str(tmp_path / "m.db"), "web", "--port", "0", "--token", "t" * 24],
        capture_output=True,
        text=True,
        timeout=60,
        env=_environment(),
    )
    assert done.returncode == 2 and done.stdout == ""
    assert "--token-file" in done.stderr and "Traceback" not in done.stderr
