"""The ASGI application: routes, forms and error pages of the person's memory page.

Pages are rendered on the server (Jinja2, autoescaped: memories are untrusted text) and work without
JavaScript; every change is a POST with a CSRF token and goes through a zkr operation.
Reads run in Starlette's thread pool (``def`` endpoints); ``MemoryDb`` serialises its own use.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from importlib.resources import files
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from zkr import MemoryDb
from zkr.background_embedding import for_host
from zkr.errors import NotFound, ZkrError
from zkr_web.embedding import check_embedder
from zkr_web.history import claim_page
from zkr_web.memory import ScopedMemory
from zkr_web.moments import MomentError, parse_moment
from zkr_web.profile import profile_page
from zkr_web.rendering import Pages, WebConfig, as_of_param
from zkr_web.security import AccessGuard, origin_allowed, session_path, tokens_match
from zkr_web.timeline import timeline_page

__all__ = ["WebConfig", "create_app"]

#: A form larger than this is refused before it is parsed (the contract's request size).
MAX_FORM_BYTES = 1_048_576


class _FormError(Exception):
    """A submitted form is unusable (too large, no CSRF token, foreign origin)."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status
        self.message = message


async def _form(request: Request, pages: Pages) -> dict[str, str]:
    """The POSTed form, after the size, origin and CSRF checks (nothing is run before them)."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > MAX_FORM_BYTES:
        raise _FormError(413, f"form exceeds {MAX_FORM_BYTES} bytes")
    body = b""
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_FORM_BYTES:
            raise _FormError(413, f"form exceeds {MAX_FORM_BYTES} bytes")
    if not origin_allowed(request.headers):
        raise _FormError(403, "this form was sent from another site; nothing was changed")
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "application/x-www-form-urlencoded":
        raise _FormError(415, "forms are sent as application/x-www-form-urlencoded")
    try:
        pairs = parse_qsl(body.decode("utf-8"), keep_blank_values=True, strict_parsing=False)
    except UnicodeDecodeError:
        raise _FormError(400, "the form is not UTF-8") from None
    form = dict(pairs)
    if not tokens_match(form.get("csrf"), pages.csrf):
        raise _FormError(403, "missing or wrong CSRF token; nothing was changed")
    return form


def _field(form: dict[str, str], name: str) -> str:
    return form.get(name, "")


def create_app(config: WebConfig, db: MemoryDb | None = None) -> AccessGuard:
    """The whole application, wrapped in the access-token guard.

    :param db: an open database to use (the caller closes it); by default ``config.db_path`` is
        opened at start-up and closed at shutdown.
    """
    state: dict[str, Pages] = {}

    def pages() -> Pages:
        return state["pages"]

    # ------------------------------------------------------------------ reading pages

    def home(request: Request) -> Response:
        return timeline_page(pages(), request)

    def search(request: Request) -> Response:
        p = pages()
        query = request.query_params.get("q", "").strip()
        pack = None
        cited: dict[str, Any] = {}
        if query:
            pack = p.memory.search(query, limit=20, as_of=as_of_param(request))
            for item in pack.items:
                for evidence_id in item.evidence_ids:
                    if evidence_id not in cited:
                        cited[evidence_id] = _evidence(p.memory, evidence_id)
        return p.render(
            request,
            "search.html",
            title="zkr — search",
            q=query,
            pack=pack,
            cited=cited,
            hybrid=config.embedder is not None,
        )

    def claim(request: Request) -> Response:
        return claim_page(pages(), request, request.path_params["claim_id"])

    def source(request: Request) -> Response:
        p = pages()
        item = p.memory.get("source", request.path_params["source_id"])
        evidence = [_evidence(p.memory, evidence_id) for evidence_id in item.evidence_ids]
        return p.render(request, "source.html", title="zkr — capture", item=item, evidence=evidence)

    def evidence(request: Request) -> Response:
        p = pages()
        quote = _evidence(p.memory, request.path_params["evidence_id"], strict=True)
        return p.render(request, "evidence.html", title="zkr — evidence", quote=quote)

    def profile(request: Request) -> Response:
        p = pages()
        return profile_page(p, request, lambda evidence_id: _evidence(p.memory, evidence_id))

    # ------------------------------------------------------------------ changing pages

    async def correct(request: Request) -> Response:
        p = pages()
        claim_id = request.path_params["claim_id"]
        item = await run_in_threadpool(p.memory.get, "claim", claim_id)
        # Only a POST changes anything: GET and HEAD (Starlette routes it with GET) show the form.
        if request.method != "POST":
            return p.render(
                request, "correct.html", title="zkr — correct", item=item, error=None, form={}
            )
        form = await _form(request, p)
        value = _field(form, "value")
        text = _field(form, "text") or f"Corrected by the person: {item.excerpt} → {value}"
        try:
            valid_at = parse_moment(_field(form, "valid_at"))
            now = p.now()
            result = await run_in_threadpool(
                p.memory.correct,
                claim_id,
                text,
                value,
                now if valid_at is None else valid_at,
                now,
            )
        except (ZkrError, MomentError) as exc:
            if isinstance(exc, NotFound):
                raise
            return p.render(
                request,
                "correct.html",
                status=400,
                title="zkr — correct",
                item=item,
                error=str(exc),
                form=form,
            )
        return RedirectResponse(f"{p.base}/claim/{result.claim_id}?done=corrected", status_code=303)

    async def remove(request: Request) -> Response:
        p = pages()
        source_id = request.path_params["source_id"]
        action = request.path_params["action"]
        if action not in ("delete", "forget"):
            raise HTTPException(404)
        item = await run_in_threadpool(p.memory.get, "source", source_id)
        if request.method != "POST":  # GET or HEAD: the confirmation page, nothing removed
            return p.render(
                request, "remove.html", title=f"zkr — {action}", item=item, action=action
            )
        await _form(request, p)
        if action == "delete":
            result = await run_in_threadpool(p.memory.delete, source_id, p.now())
            claims, done = result.claim_count, "deleted"
        else:
            outcome = await run_in_threadpool(p.memory.forget, source_id, p.now())
            claims, done = len(outcome.claim_ids), "forgotten"
        return RedirectResponse(f"{p.base}/?done={done}&claims={claims}", status_code=303)

    # ------------------------------------------------------------------ errors

    def not_found(request: Request, exc: Exception) -> Response:
        return pages().render(
            request,
            "error.html",
            status=404,
            title="zkr — not found",
            message="Nothing here: no such memory in your scope.",
        )

    def refused(request: Request, exc: Exception) -> Response:
        return pages().render(
            request, "error.html", status=400, title="zkr — refused", message=str(exc)
        )

    def form_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, _FormError)
        return pages().render(
            request, "error.html", status=exc.status, title="zkr — refused", message=exc.message
        )

    def http_error(request: Request, exc: Exception) -> Response:
        assert isinstance(exc, HTTPException)
        return pages().render(
            request, "error.html", status=exc.status_code, title="zkr", message=str(exc.detail)
        )

    @contextlib.asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        own = db is None
        if config.embedder is not None:
            check_embedder(config.embedder)  # refuse to start, not at the first search
        embedder = for_host(config.db_path, config, thread_name="zkr-web-embedder")
        handle = MemoryDb(config.db_path) if db is None else db
        # A change made on the page rings the embedder: it is embedded as it arrives.
        ring = None if embedder is None else embedder.notify
        memory = ScopedMemory(handle, config.tenant_id, config.person_id, config.embedder, ring)
        state["pages"] = Pages(config, memory)
        if embedder is not None:
            embedder.start()
        try:
            yield
        finally:
            if embedder is not None:
                embedder.close()
            if own:
                handle.close()

    static = Path(str(files("zkr_web") / "static"))
    routes = [
        Route("/", home),
        Route("/search", search),
        Route("/claim/{claim_id}", claim),
        Route("/claim/{claim_id}/correct", correct, methods=["GET", "POST"]),
        Route("/source/{source_id}", source),
        Route("/source/{source_id}/{action}", remove, methods=["GET", "POST"]),
        Route("/evidence/{evidence_id}", evidence),
        Route("/profile", profile),
        Mount("/static", StaticFiles(directory=static), name="static"),
    ]
    app = Starlette(
        # Everything lives under the session path, where the cookie is sent (see security).
        routes=[Mount(session_path(config.token), routes=routes)],
        exception_handlers={
            NotFound: not_found,
            ZkrError: refused,
            MomentError: refused,
            _FormError: form_error,
            HTTPException: http_error,
        },
        lifespan=lifespan,
    )
    return AccessGuard(app, config.token)


def _evidence(memory: ScopedMemory, evidence_id: str, *, strict: bool = False) -> dict[str, Any]:
    """One cited evidence: its quote and transcript locator, or a note that it is gone."""
    try:
        item = memory.get("evidence", evidence_id)
    except NotFound:
        if strict:
            raise
        return {"id": evidence_id, "quote": None, "locator": None}
    return {"id": evidence_id, "quote": item.excerpt, "locator": memory.locator(evidence_id)}
