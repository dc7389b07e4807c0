"""The model client: two tiers (`primary` for conversation and planning, `fast` for summaries, classification
and guards), timeouts, one retry, and an availability state so that a missing model server costs one failed call,
not one timeout per message. A chat request is built by the official `ollama` client's types and sent to its host
with aiohttp (see `LLM._chat_once`); the model list and embeddings go through the client itself.

Privacy is enforced here, at the one place where requests leave the process: a request marked sensitive
(food, places, memory, free-text notes) goes only to a tier marked local, or with the person's consent."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

import aiohttp
import httpx
import ollama
from aiohttp.helpers import get_env_proxy_for_url
from ollama._types import ChatRequest
from pydantic import ValidationError
from yarl import URL

log = logging.getLogger(__name__)

Tier = Literal["primary", "fast"]
TIERS: tuple[Tier, ...] = ("primary", "fast")
TextSink = Callable[[str], Awaitable[None]]


@runtime_checkable
class PacedSink(Protocol):
    """A text sink that lets the stream rest while it needs no new text (an answer shown and edited once a second
    needs it just before each edit): meanwhile the model's lines wait in the socket and come in one read."""

    async def __call__(self, text: str) -> None:
        """The next piece of the answer."""

    def rest(self) -> float:
        """How long (seconds) the stream may rest now before it is read again."""
        ...


# Told of every request to the model server: the tier (or "embed"), its seconds, and whether it succeeded.
CallObserver = Callable[[str, float, bool], None]

DEFAULT_TIMEOUT_S = 60.0
# Headers of the ollama client's HTTP client that belong to its own connection, not to a request.
_HOP_HEADERS = frozenset({"connection", "content-length", "accept-encoding", "host", "transfer-encoding"})
RETRY_DELAY_S = 0.2
RECHECK_S = 60.0  # after a failure, further calls fail fast until this long has passed


class ModelUnavailable(Exception):
    """No model answered (server down, model missing, timeout or garbage after one retry)."""


class PrivacyBlocked(Exception):
    """A sensitive request was about to go to a remote model without the person's consent."""


@dataclass(frozen=True)
class TierConfig:
    model: str
    local: bool = True  # the model runs on hardware the person (or operator for them) controls
    # Sent with every call: qwen3 and other thinking models think before answering unless told not to, which makes
    # a turn several times slower. Off for the fast tier; a setting for the primary (OLLAMA_PRIMARY_THINK).
    think: bool = False


@dataclass(frozen=True)
class ToolCall:
    name: str
    arguments: Any  # what the model sent; usually a dict, validated by the tool executor, never trusted
    id: str | None = None


@dataclass
class LLMReply:
    content: str
    tool_calls: list[ToolCall] = field(default_factory=list)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    model: str = ""
    done_reason: str | None = None
    model_ms: float = 0.0  # wall time of the request(s), including the retry
    server_ms: float = 0.0  # the server's own time for the answer, as it reports it (Ollama's total_duration)


class LLM:
    def __init__(self, host: str, tiers: dict[Tier, TierConfig], *, timeout_s: float = DEFAULT_TIMEOUT_S,
                 recheck_s: float = RECHECK_S, retry_delay_s: float = RETRY_DELAY_S,
                 monotonic: Callable[[], float] = time.monotonic, on_call: CallObserver | None = None,
                 keep_alive: bool = False) -> None:
        """`keep_alive`: chat requests share one connection pool (one aiohttp session, on the event loop that
        first asks), which `aclose` closes: the app's client keeps it, so an answer opens no new connection (nor a
        TLS handshake with a remote server). Without it each chat request has a session of its own."""
        missing = [tier for tier in TIERS if tier not in tiers]
        if missing:
            raise ValueError(f"missing model tiers: {', '.join(missing)}")
        self.host = host
        self.tiers = dict(tiers)
        self.timeout_s = timeout_s
        self.recheck_s = recheck_s
        self.retry_delay_s = retry_delay_s
        self._monotonic = monotonic
        self._on_call = on_call
        self._client = ollama.AsyncClient(host=host, timeout=httpx.Timeout(timeout_s, connect=min(5.0, timeout_s)))
        self._down_since: float | None = None
        self._stream_proxy: tuple[str | None, aiohttp.BasicAuth | None] | None = None
        self._keep_alive = keep_alive
        self._http: aiohttp.ClientSession | None = None
        self._http_loop: asyncio.AbstractEventLoop | None = None
        self._tools = ToolModels()
        self.calls = 0
        self.failures = 0

    # -- availability -----------------------------------------------------------------------------------

    @property
    def available(self) -> bool:
        """False after a failed call, until the recheck interval has passed (then the next call tries again)."""
        return self._down_since is None

    def _may_try(self) -> bool:
        return self._down_since is None or self._monotonic() - self._down_since >= self.recheck_s

    def _mark(self, ok: bool) -> None:
        if ok:
            if self._down_since is not None:
                log.warning("model server at %s answers again", self.host)
            self._down_since = None
        else:
            if self._down_since is None:
                log.warning("model server at %s does not answer; commands and buttons keep working", self.host)
            self._down_since = self._monotonic()

    async def check(self) -> bool:
        """Asks the server which models it has; True when the primary model is among them."""
        try:
            listed = await asyncio.wait_for(self._client.list(), timeout=min(5.0, self.timeout_s))
            names = {m.model for m in listed.models if m.model}
            ok = any(_same_model(self.tiers["primary"].model, name) for name in names)
        except Exception as problem:  # any failure means: not available
            log.info("model check failed: %s", problem)
            ok = False
        self._mark(ok)
        return ok

    def is_local(self, tier: Tier) -> bool:
        return self.tiers[tier].local

    def model(self, tier: Tier) -> str:
        return self.tiers[tier].model

    # -- calls ------------------------------------------------------------------------------------------

    async def chat(self, tier: Tier, messages: Sequence[dict[str, Any]], *,
                   tools: Sequence[dict[str, Any]] | None = None, on_text: TextSink | None = None,
                   sensitive: bool = False, consent: bool = False, options: dict[str, Any] | None = None,
                   ) -> LLMReply:
        """One model call. Streams when `on_text` is given (each text piece is passed on as it comes).
        Raises PrivacyBlocked before anything is sent if `sensitive` and the tier is remote without consent;
        ModelUnavailable when no model answered after one retry."""
        if sensitive and not self.is_local(tier) and not consent:
            raise PrivacyBlocked(f"sensitive content may not go to the remote {tier} model")
        if not self._may_try():
            raise ModelUnavailable("the model server did not answer recently")
        started = time.perf_counter()
        last: Exception | None = None
        for attempt in range(2):
            if attempt:
                await asyncio.sleep(self.retry_delay_s)
            self.calls += 1
            attempt_started = time.perf_counter()
            try:
                reply = await asyncio.wait_for(
                    self._chat_once(tier, list(messages), list(tools or []), on_text, options),
                    timeout=self.timeout_s)
            except (ollama.ResponseError, httpx.HTTPError, aiohttp.ClientError, ConnectionError, TimeoutError,
                    ValidationError, ValueError) as problem:
                self.failures += 1
                self._observe(tier, attempt_started, ok=False)
                last = problem
                log.info("model call failed (attempt %d): %s", attempt + 1, _describe(problem))
                if isinstance(problem, ollama.ResponseError) and 400 <= problem.status_code < 500 \
                        and problem.status_code not in (404, 408, 429):
                    break  # our request is wrong; asking again will not help
                continue
            self._observe(tier, attempt_started, ok=True)
            reply.model_ms = (time.perf_counter() - started) * 1000
            self._mark(True)
            return reply
        self._mark(False)
        raise ModelUnavailable(_describe(last)) from last

    def _observe(self, tier: str, started: float, *, ok: bool) -> None:
        if self._on_call is not None:
            self._on_call(tier, time.perf_counter() - started, ok)

    async def _chat_once(self, tier: Tier, messages: list[dict[str, Any]], tools: list[dict[str, Any]],
                         on_text: TextSink | None, options: dict[str, Any] | None) -> LLMReply:
        """One request to /api/chat, streamed when `on_text` is given. The request is what the ollama client
        would send (built by its types, to its host with its headers, through the proxy the environment names);
        the tools' part is kept as JSON, encoded once per tool schema: encoding some fifty tools on every call cost
        more than a millisecond of CPU. The reply is read with aiohttp (its HTTP parser is C), one plain JSON parse
        per line (the client validates every line into a response model).

        Streamed to a `PacedSink`, the stream may rest between two reads. While it rests the connection does not
        read from the socket at all: the model's lines wait in the kernel and come in one read when it is read
        again, so the process wakes up once per draft, not once per piece (each wake-up costs CPU of its own)."""
        model, think = self.tiers[tier].model, self.tiers[tier].think
        body = ChatRequest(model=model, messages=[_message(m) for m in messages], stream=on_text is not None,
                           think=think, options=options).model_dump(exclude_none=True)
        encoded = json.dumps(body)
        if tools:
            encoded = f'{encoded[:-1]}, "tools": [{",".join(self._tools.encoded(tools))}]}}'
        parts: list[str] = []
        calls: list[ToolCall] = []
        final: dict[str, Any] | None = None
        paced = on_text if isinstance(on_text, PacedSink) else None
        client = self._client._client
        headers = {k: v for k, v in client.headers.items() if k.lower() not in _HOP_HEADERS}
        headers["Content-Type"] = "application/json"
        url = str(client.base_url).rstrip("/") + "/api/chat"  # as the client merges it: a host's path prefix stays
        if self._stream_proxy is None:  # as the client, through a proxy the environment names for the host
            self._stream_proxy = _env_proxy(url)
        proxy, proxy_auth = self._stream_proxy
        async with self._http_session() as http, \
                http.post(url, data=encoded.encode(), headers=headers, proxy=proxy, proxy_auth=proxy_auth) as response:
            if response.status >= 400:
                raise ollama.ResponseError(await response.text(), response.status)
            rest, ended = b"", False
            while final is None and not ended:
                data = await response.content.readany()
                if not data:  # the end: a last line without its newline counts too
                    ended, data = True, b"\n"
                *lines, rest = (rest + data).split(b"\n")
                for line in lines:
                    if not line.strip():
                        continue
                    chunk = json.loads(line)
                    if not isinstance(chunk, dict):
                        raise ValueError(f"the model server sent {type(chunk).__name__}, not an object")
                    if error := chunk.get("error"):
                        raise ollama.ResponseError(str(error))
                    message = chunk.get("message", {})
                    done = chunk.get("done", False)
                    if not isinstance(message, dict) or not isinstance(done, bool):
                        raise ValueError("the model server sent a line that is no chat response")
                    piece = message.get("content") or ""
                    if not isinstance(piece, str):
                        raise ValueError("the model server sent a message whose content is no text")
                    if piece:
                        parts.append(piece)
                        if on_text is not None:
                            await on_text(piece)
                    calls.extend(_tool_call(c) for c in message.get("tool_calls") or ())
                    if done:
                        final = chunk
                        break
                pause = paced.rest() if paced is not None and final is None else 0.0
                if pause > 0:
                    await _resting(response, pause)
        if final is None:
            raise ValueError("the stream ended without a final chunk" if on_text is not None
                             else "the model server's answer is not complete")
        return LLMReply(content="".join(parts), tool_calls=calls,
                        prompt_tokens=int(final.get("prompt_eval_count") or 0),
                        completion_tokens=int(final.get("eval_count") or 0), model=str(final.get("model") or ""),
                        done_reason=final.get("done_reason"), server_ms=int(final.get("total_duration") or 0) / 1e6)

    @contextlib.asynccontextmanager
    async def _http_session(self) -> AsyncIterator[aiohttp.ClientSession]:
        """The session a chat request goes out on: the kept one (see `keep_alive`), or one of its own."""
        timeout = aiohttp.ClientTimeout(total=None, connect=min(5.0, self.timeout_s))  # the call has its own
        if not self._keep_alive:
            async with aiohttp.ClientSession(timeout=timeout) as http:
                yield http
            return
        loop = asyncio.get_running_loop()
        if self._http is None or self._http.closed or self._http_loop is not loop:
            if self._http is not None and not self._http.closed:  # another loop's, which has ended: let it go
                self._http.detach()
            self._http, self._http_loop = aiohttp.ClientSession(timeout=timeout), loop
        yield self._http

    async def aclose(self) -> None:
        """Closes the kept connections of chat requests (see `keep_alive`); the client stays usable."""
        if self._http is not None and not self._http.closed:
            await self._http.close()
        self._http = self._http_loop = None

    async def embed(self, texts: Sequence[str], *, model: str, sensitive: bool = True, consent: bool = False,
                    local: bool = True) -> list[list[float]]:
        if sensitive and not local and not consent:
            raise PrivacyBlocked("sensitive content may not go to a remote embedding model")
        if not self._may_try():
            raise ModelUnavailable("the model server did not answer recently")
        started = time.perf_counter()
        try:
            response = await asyncio.wait_for(self._client.embed(model=model, input=list(texts)), self.timeout_s)
        except (ollama.ResponseError, httpx.HTTPError, ConnectionError, TimeoutError, ValidationError) as problem:
            self._observe("embed", started, ok=False)
            self._mark(False)
            raise ModelUnavailable(_describe(problem)) from problem
        self._observe("embed", started, ok=True)
        self._mark(True)
        return [list(v) for v in response.embeddings]


class ToolModels:
    """The function schemas of a request, each validated into the client's `ollama.Tool` model once and encoded as
    the client encodes it once: sent as JSON kept from the first time. A schema is looked up by its tool name and
    its encoding used while the schema equals the one it was made from (kept as a copy, so a schema changed in
    place is noticed)."""

    def __init__(self) -> None:
        self._by_name: dict[str, tuple[Mapping[str, Any], str]] = {}

    def encoded(self, schemas: Sequence[Mapping[str, Any] | ollama.Tool]) -> list[str]:
        """Each schema as the JSON the ollama client would send for it."""
        encoded = []
        for schema in schemas:
            if isinstance(schema, ollama.Tool):
                encoded.append(_encoded_tool(schema))
                continue
            function = schema.get("function")
            name = str(function.get("name", "")) if isinstance(function, Mapping) else ""
            known = self._by_name.get(name)
            if known is None or known[0] != schema:
                known = (copy.deepcopy(schema), _encoded_tool(ollama.Tool.model_validate(schema)))
                if name:
                    self._by_name[name] = known
            encoded.append(known[1])
        return encoded


def _encoded_tool(tool: ollama.Tool) -> str:
    """A tool as the client's request encodes it (its serializer renames a schema's `defs` to `$defs`)."""
    (dumped,) = ChatRequest(model="-", tools=[tool]).model_dump(exclude_none=True)["tools"]
    return json.dumps(dumped)


def _message(message: Mapping[str, Any]) -> ollama.Message:
    """A message as the ollama client sends it: empty fields left out."""
    return ollama.Message.model_validate({key: value for key, value in message.items() if value})


def _tool_call(call: Any) -> ToolCall:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not function.get("name"):
        raise ValueError(f"a tool call without a function name: {call!r}")
    return ToolCall(name=str(function["name"]), arguments=function.get("arguments"), id=call.get("id"))


def _env_proxy(url: str) -> tuple[str | None, aiohttp.BasicAuth | None]:
    """The proxy the environment names for `url` (HTTP(S)_PROXY, NO_PROXY), looked up once: aiohttp's `trust_env`
    looks it up (and netrc) in a thread on every request."""
    try:
        proxy, auth = get_env_proxy_for_url(URL(url))
    except LookupError:
        return None, None
    return str(proxy), auth


async def _resting(response: aiohttp.ClientResponse, seconds: float) -> None:
    """Waits `seconds` with the response's connection not reading from its socket. The transport itself is paused:
    aiohttp's own pause also holds its parser, which then hands on what it has in small steps."""
    connection = response.connection
    transport = connection.transport if connection is not None else None
    if transport is None or transport.is_closing() or not transport.is_reading():
        await asyncio.sleep(seconds)
        return
    transport.pause_reading()
    try:
        await asyncio.sleep(seconds)
    finally:
        if not transport.is_closing():
            transport.resume_reading()


def _same_model(wanted: str, listed: str) -> bool:
    return listed == wanted or (":" not in wanted and listed == f"{wanted}:latest")


def _describe(problem: BaseException | None) -> str:
    if problem is None:
        return "no answer"
    if isinstance(problem, TimeoutError):
        return "timed out"
    text = str(problem).strip() or type(problem).__name__
    return text[:300]


def llm_from_settings(settings: Any, *, on_call: CallObserver | None = None) -> LLM:
    """The client the app uses, from bot.settings.Settings; `on_call` is told of each request (the metrics)."""
    return LLM(settings.ollama_host, {
        "primary": TierConfig(settings.ollama_model_primary, settings.ollama_primary_local,
                              think=settings.ollama_primary_think),
        "fast": TierConfig(settings.ollama_model_fast, settings.ollama_fast_local, think=False),
    }, timeout_s=settings.ollama_timeout_s, on_call=on_call, keep_alive=True)
