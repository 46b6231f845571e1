"""Rendering pages: the template environment, the server's configuration and the "as of" moment.

Templates are autoescaped Jinja2 (memories are untrusted text); undefined names are errors.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

from jinja2 import Environment, PackageLoader, StrictUndefined
from starlette.requests import Request
from starlette.responses import HTMLResponse

from zkr.relevance import describe_relevance, relevance_percent
from zkr_web.memory import ScopedMemory
from zkr_web.moments import MomentError, format_moment, input_value, parse_moment
from zkr_web.security import csrf_token, same_origin_path, session_path

__all__ = ["Pages", "WebConfig", "as_of_param"]


@dataclass(frozen=True)
class WebConfig:
    """What one zkr-web server serves: one database, one person's scope, one access token."""

    db_path: str
    tenant_id: str
    person_id: str
    token: str
    #: The clock used for "now" (recorded times of corrections and deletions); tests may fix it.
    clock: Callable[[], float] = field(default=time.time)
    #: ``(model, version)`` of an installed embedder: search is hybrid and what is written gets
    #: vectors in the background (:mod:`zkr_web.embedding`); ``None``: words only.
    embedder: tuple[str, str] | None = None


class Pages:
    """Renders pages; holds the scope's memory and the template environment."""

    def __init__(self, config: WebConfig, memory: ScopedMemory) -> None:
        self.config = config
        self.memory = memory
        self.csrf = csrf_token()
        #: The session path every address of the page starts with.
        self.base = session_path(config.token)
        self.env = Environment(
            loader=PackageLoader("zkr_web", "templates"),
            autoescape=True,  # every value is escaped unless a template says otherwise (none do)
            undefined=StrictUndefined,
            trim_blocks=True,
            lstrip_blocks=True,
        )
        self.env.filters["moment"] = format_moment
        self.env.filters["input_moment"] = input_value
        self.env.filters["relevance_words"] = describe_relevance
        self.env.filters["relevance_percent"] = relevance_percent
        self.env.globals.update(
            csrf=self.csrf,
            base=self.base,
            tenant_id=config.tenant_id,
            person_id=config.person_id,
        )

    def now(self) -> int:
        return int(self.config.clock())

    def render(
        self, request: Request, template: str, status: int = 200, **context: Any
    ) -> HTMLResponse:
        try:
            as_of = as_of_param(request)
        except MomentError:  # the error page of an unreadable "as of" still renders
            as_of = None
        context.setdefault("title", "zkr")
        # The page's own path, relative to the session path: a request for
        # `//evil.example/x` must not be written back as a link to another host.
        full = same_origin_path(request.url.path)
        page_path = same_origin_path(full[len(self.base) :]) if full.startswith(self.base) else "/"
        html = self.env.get_template(template).render(
            request_path=self.base + page_path,
            page_path=page_path,
            query=dict(request.query_params),
            as_of=as_of,
            link=_linker(self.base, as_of),
            **context,
        )
        return HTMLResponse(html, status_code=status)


def as_of_param(request: Request) -> int | None:
    """The page's "as of" moment (``?as_of=``), or ``None`` for now.

    :raises MomentError: the value is not a time.
    """
    return parse_moment(request.query_params.get("as_of"))


def _linker(base: str, as_of: int | None) -> Callable[..., str]:
    """``link(path, **params)``: the address of *path* under the session path, keeping the page's
    "as of" moment."""

    def link(path: str, **params: Any) -> str:
        query = {key: str(value) for key, value in params.items() if value not in (None, "")}
        if as_of is not None and "as_of" not in params:
            query["as_of"] = str(as_of)
        return base + same_origin_path(path) + ("?" + urlencode(query) if query else "")

    return link
