"""An OpenAI-compatible chat-completions stub on 127.0.0.1 (stdlib only), for ``hermes chat``.

A user turn that asks to remember something gets one ``zkr_store`` tool call; after a tool
result, or for any other turn, the answer is plain text. Every request body is recorded.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

__all__ = ["FakeLlm"]

#: zkr_store's arguments: the remember request of zkr's operation table, without the scope.
STORE_ARGS = {
    "text": "User likes green tea",
    "claim": {"subject": "user", "predicate": "likes", "value": "green tea", "kind": "preference"},
}


def _text(content: Any) -> str:
    if isinstance(content, list):
        return " ".join(str(part.get("text", "")) for part in content if isinstance(part, dict))
    return str(content or "")


def _asked(content: Any) -> str:
    """What the user typed: without the recalled-memory block Hermes injects."""
    return re.sub(r"<memory-context>.*?</memory-context>", "", _text(content), flags=re.S)


def _reply(body: dict[str, Any]) -> dict[str, Any]:
    messages = body.get("messages") or []
    last = messages[-1] if messages else {}
    tools = [t.get("function", {}).get("name") for t in body.get("tools") or []]
    if last.get("role") == "tool":
        return {"role": "assistant", "content": "Noted: you like green tea."}
    asked = _asked(last.get("content")) if last.get("role") == "user" else ""
    if "Remember" in asked and "zkr_store" in tools:
        call = {"name": "zkr_store", "arguments": json.dumps(STORE_ARGS)}
        return {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": "call_1", "type": "function", "function": call}],
        }
    return {"role": "assistant", "content": "You like green tea."}


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args: Any) -> None:
        pass

    def _send(self, status: int, data: bytes, content_type: str) -> None:
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def do_GET(self) -> None:
        self.server.requests.append({"_path": self.path, "_method": "GET"})
        models = {"object": "list", "data": [{"id": "fake-model", "object": "model"}]}
        self._send(200, json.dumps(models).encode(), "application/json")

    def do_POST(self) -> None:
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length) or b"{}")
        body["_path"] = self.path
        self.server.requests.append(body)
        if "messages" not in body:
            self._send(200, b"{}", "application/json")
            return
        message = _reply(body)
        finish = "tool_calls" if message.get("tool_calls") else "stop"
        usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
        head = {"id": "chatcmpl-fake", "created": int(time.time()), "model": "fake-model"}
        if not body.get("stream"):
            page = {
                **head,
                "object": "chat.completion",
                "usage": usage,
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            }
            self._send(200, json.dumps(page).encode(), "application/json")
            return
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.end_headers()
        delta: dict[str, Any] = {"role": "assistant"}
        if message.get("content"):
            delta["content"] = message["content"]
        if message.get("tool_calls"):
            delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(message["tool_calls"])]
        chunks = (
            {"choices": [{"index": 0, "delta": delta, "finish_reason": None}]},
            {"choices": [{"index": 0, "delta": {}, "finish_reason": finish}], "usage": usage},
        )
        for chunk in chunks:
            chunk.update(head, object="chat.completion.chunk")
            self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
        self.wfile.write(b"data: [DONE]\n\n")
        self.wfile.flush()


class _Server(ThreadingHTTPServer):
    requests: list[dict[str, Any]]


class FakeLlm:
    """``with FakeLlm() as llm:`` serves on ``llm.base_url`` until the block ends."""

    def __enter__(self) -> FakeLlm:
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.requests = []
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    @property
    def chats(self) -> list[dict[str, Any]]:
        return [r for r in self._server.requests if "messages" in r]
