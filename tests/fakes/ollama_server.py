"""A fake Ollama HTTP server on 127.0.0.1 for the real `ollama` client: scripted replies per test (text,
tool calls, streaming chunks, errors, slowness, garbage), and a record of every request it received.

    fake = FakeOllama(); url = await fake.start()
    fake.script(Script(tool_calls=[call("log_drink", kind="water", amount_ml=250)]), Script(content="Done."))
    ...; fake.requests[0]["messages"]; await fake.stop()

Replies are taken from the script queue in order; when it is empty, `default` answers (a callable receives
the request body, so a test or benchmark can answer by content). Images sent with a message (a vision model's
`images`, base64 in the body) are checked like Ollama does (not base64: a 400) and can be read back decoded
(`images`)."""

from __future__ import annotations

import asyncio
import base64
import binascii
import hashlib
import json
import math
import random
import re
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

MODELS = ("qwen3:4b", "qwen3:1.7b", "nomic-embed-text:latest", "qwen2.5vl:3b")


@dataclass
class Script:
    content: str = ""
    tool_calls: list[dict[str, Any]] = field(default_factory=list)  # [{"name": ..., "arguments": {...}}]
    delay_s: float = 0.0  # before the answer (or before the first chunk)
    status: int = 200  # anything else answers {"error": error} with this status
    error: str = "boom"
    garbage: bool = False  # a body that is not the shape the client expects
    chunks: int = 3  # when streaming: content split into this many pieces
    gate: ChunkGate | None = None  # when streaming: each piece waits until the gate lets it out
    chunk_delay_s: float = 0.0  # when streaming: the time between two pieces (a benchmark's model speed)
    prompt_tokens: int = 20
    eval_tokens: int = 5


class ChunkGate:
    """Lets the pieces of a streamed answer out one at a time, when the test says so (`allow`): a slow model
    without sleeping. `waiting` is how many pieces the server holds back at this moment."""

    def __init__(self) -> None:
        self.allowed = 0
        self.waiting = 0
        self._changed = asyncio.Condition()

    async def allow(self, pieces: int = 1) -> None:
        async with self._changed:
            self.allowed += pieces
            self._changed.notify_all()

    async def held(self, within: float = 10.0) -> None:
        """Until the server holds a piece back."""
        async with asyncio.timeout(within), self._changed:
            await self._changed.wait_for(lambda: self.waiting > 0)

    async def wait(self, index: int) -> None:
        async with self._changed:
            self.waiting += 1
            self._changed.notify_all()
            try:
                await self._changed.wait_for(lambda: index < self.allowed)
            finally:
                self.waiting -= 1


def call(name: str, **arguments: Any) -> dict[str, Any]:
    return {"name": name, "arguments": arguments}


Responder = Callable[[dict[str, Any]], Script]


class FakeOllama:
    def __init__(self, *, default: Script | Responder | None = None, keep_requests: bool = True) -> None:
        self.keep_requests = keep_requests  # False for long benchmark runs: every body is thousands of objects
        self.queue: deque[Script | Responder] = deque()
        self.default: Script | Responder = default or Script(content="OK.")
        self.requests: list[dict[str, Any]] = []  # bodies of /api/chat requests, in arrival order
        self.peers: list[Any] = []  # the client's address of each /api/chat request: one per connection
        self.embed_requests: list[dict[str, Any]] = []
        self.embed_dim = 8  # the length of /api/embed's vectors when the request names none
        # /api/embed's vectors: a hash of the whole text (equal texts, equal vectors; nothing else alike), or with
        # `embed_words` a hashed bag of its words, so that texts sharing words are near (a model with some meaning).
        self.embed_words = False
        # A test may hold the /api/embed requests whose first input `embed_held` accepts until `embed_release` is
        # set (on the server's loop), to look at what happens while they wait; the others are answered at once.
        self.embed_held: Callable[[str], bool] | None = None
        self.embed_release = asyncio.Event()
        self.models = list(MODELS)
        # How long a thinking model (qwen3) thinks before it answers when the request does not say `think: false`.
        self.think_s = 0.0
        self.in_flight = 0
        self.max_in_flight = 0
        self._runner: web.AppRunner | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.url = ""

    def script(self, *items: Script | Responder) -> None:
        self.queue.extend(items)

    async def start(self, port: int = 0) -> str:
        self._loop = asyncio.get_running_loop()
        app = web.Application(client_max_size=64 * 1024 * 1024)
        app.router.add_post("/api/chat", self._chat)
        app.router.add_post("/api/embed", self._embed)
        app.router.add_get("/api/tags", self._tags)
        app.router.add_get("/api/version", self._version)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        server = site._server
        assert server is not None
        sockets = getattr(server, "sockets", None) or []
        self.url = f"http://127.0.0.1:{sockets[0].getsockname()[1]}"
        return self.url

    def release_embeds(self) -> None:
        """Answers the held /api/embed requests and all later ones; callable from any thread."""
        if self._loop is not None:
            self._loop.call_soon_threadsafe(self.embed_release.set)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- what the tests read ----------------------------------------------------------------------------

    def sent_text(self, index: int = -1) -> str:
        """Everything one chat request carried (all message contents), for 'was X sent?' assertions."""
        return "\n".join(str(m.get("content", "")) for m in self.requests[index].get("messages", []))

    def images(self, index: int = -1) -> list[bytes]:
        """The images one chat request carried, decoded, in message order."""
        return [base64.b64decode(image) for m in self.requests[index].get("messages", [])
                for image in m.get("images") or []]

    def all_sent_text(self) -> str:
        return "\n".join(self.sent_text(i) for i in range(len(self.requests)))

    # -- routes -----------------------------------------------------------------------------------------

    def _next(self, body: dict[str, Any]) -> Script:
        item = self.queue.popleft() if self.queue else self.default
        return item(body) if callable(item) else item

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        if self.keep_requests:
            self.requests.append(body)
            self.peers.append(request.transport.get_extra_info("peername") if request.transport else None)
        for message in body.get("messages") or []:
            for image in message.get("images") or []:
                try:
                    base64.b64decode(image, validate=True)
                except (binascii.Error, TypeError):
                    return web.json_response({"error": "illegal base64 data in images"}, status=400)
        script = self._next(body)
        self.in_flight += 1
        self.max_in_flight = max(self.max_in_flight, self.in_flight)
        try:
            if script.delay_s:
                await asyncio.sleep(script.delay_s)
            if self.think_s and body.get("think") is not False:
                await asyncio.sleep(self.think_s)
            if script.status != 200:
                return web.json_response({"error": script.error}, status=script.status)
            if script.garbage:
                return web.Response(text='{"message": 42, "done": "perhaps"}', content_type="application/json")
            model = body.get("model", "")
            if body.get("stream", True) is False:
                return web.json_response(_final(model, script, script.content, with_calls=True))
            response = web.StreamResponse(headers={"Content-Type": "application/x-ndjson"})
            await response.prepare(request)
            for index, piece in enumerate(_pieces(script.content, script.chunks)):
                if script.gate is not None:
                    await script.gate.wait(index)
                if script.chunk_delay_s and index:
                    await asyncio.sleep(script.chunk_delay_s)
                await response.write((json.dumps(_chunk(model, piece)) + "\n").encode())
            if script.tool_calls:
                calls_chunk = _chunk(model, "")
                calls_chunk["message"]["tool_calls"] = _calls(script.tool_calls)
                await response.write((json.dumps(calls_chunk) + "\n").encode())
            await response.write((json.dumps(_final(model, script, "", with_calls=False)) + "\n").encode())
            await response.write_eof()
            return response
        finally:
            self.in_flight -= 1

    async def _embed(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.embed_requests.append(body)
        texts = body.get("input", [])
        if isinstance(texts, str):
            texts = [texts]
        if self.embed_held is not None and texts and self.embed_held(str(texts[0])):
            await self.embed_release.wait()
        embed = _bag_of_words if self.embed_words else _vector
        return web.json_response({"model": body.get("model", ""),
                                  "embeddings": [embed(str(t), int(body.get("dimensions") or self.embed_dim))
                                                 for t in texts]})

    async def _tags(self, request: web.Request) -> web.Response:
        return web.json_response({"models": [{"name": m, "model": m, "size": 1, "digest": "0" * 12}
                                             for m in self.models]})

    async def _version(self, request: web.Request) -> web.Response:
        return web.json_response({"version": "0.0.0-fake"})


def _calls(calls: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [{"id": f"call_{i}", "function": {"index": i, "name": c["name"], "arguments": c.get("arguments", {})}}
            for i, c in enumerate(calls)]


def _chunk(model: str, content: str) -> dict[str, Any]:
    return {"model": model, "created_at": "2026-11-30T07:30:00.000Z",
            "message": {"role": "assistant", "content": content}, "done": False}


def _final(model: str, script: Script, content: str, *, with_calls: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": content}
    if with_calls and script.tool_calls:
        message["tool_calls"] = _calls(script.tool_calls)
    return {"model": model, "created_at": "2026-11-30T07:30:00.000Z", "message": message, "done": True,
            "done_reason": "stop", "total_duration": 1000, "load_duration": 10,
            "prompt_eval_count": script.prompt_tokens, "prompt_eval_duration": 100, "eval_count": script.eval_tokens,
            "eval_duration": 500}


def _pieces(text: str, n: int) -> list[str]:
    if not text:
        return []
    size = max(1, math.ceil(len(text) / max(n, 1)))
    return [text[i:i + size] for i in range(0, len(text), size)]


def _bag_of_words(text: str, dim: int) -> list[float]:
    vector = [0.0] * dim
    for word in re.findall(r"\w+", text.lower()):
        vector[int(hashlib.sha256(word.encode()).hexdigest(), 16) % dim] += 1.0
    return vector


def _vector(text: str, dim: int) -> list[float]:
    # Equal texts, equal vectors; beyond the digest's 32 bytes a generator seeded with it, so that the vectors of
    # different texts stay unrelated however long they are.
    digest = hashlib.sha256(text.encode()).digest()
    head = [(digest[i] - 128) / 128 for i in range(min(dim, len(digest)))]
    more = random.Random(digest)
    return head + [more.uniform(-1.0, 1.0) for _ in range(dim - len(head))]
