"""A fake Telegram Bot API on 127.0.0.1 (aiohttp) for driving the real python-telegram-bot through
`base_url`: getMe, getUpdates (long polling with offsets), sendMessage, sendPhoto, sendDocument, editMessageText,
editMessageReplyMarkup, answerCallbackQuery, sendChatAction, leaveChat, deleteWebhook, setWebhook, getFile and the file
download (`/file/bot<token>/<path>`) of what a test put there (`voice`, `photo`). It serves
scripted updates, records every call with its time, and can fail scripted calls (429 with retry_after,
a 400 for bad HTML, ...).

PTB posts form fields; values that are not strings arrive JSON-encoded (`reply_markup`, `allowed_updates`),
text stays raw. A photo or a document arrives as a multipart file (a document's bytes and file name are kept
as `document_content` and `document_filename`).

The `/_control/...` routes let another process (the load benchmark) schedule updates at a rate and read
the timings, so the load generator does not take CPU from the bot under test; `serve_forever` runs the fake
as such a process (`python -m tests.telegram.fake_bot_api` prints its port, then serves until terminated).
Scheduled updates go to getUpdates, or, given webhook URLs, are posted to them in turn with the secret header
and at most `WEBHOOK_CONNECTIONS` posts open at once (like Telegram's `max_connections`, as a load balancer in
front of several bot processes would spread them); a post answered with an error is posted again after a short
pause."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import aiohttp
from aiohttp import web

TOKEN = "123456:TEST-token-for-the-fake-api"
BOT_USER = {"id": 123456, "is_bot": True, "first_name": "Companion", "username": "companion_test_bot",
            "can_join_groups": True, "can_read_all_group_messages": False, "supports_inline_queries": False}
_JSON_FIELDS = {"reply_markup", "allowed_updates", "link_preview_options", "reply_parameters", "entities",
                "caption_entities", "media"}
_INT_FIELDS = {"message_id", "offset", "limit", "timeout", "max_connections"}
WEBHOOK_CONNECTIONS = 40  # Telegram's default max_connections
WEBHOOK_RETRY_S = 0.5


@dataclass(frozen=True)
class Call:
    method: str
    params: dict[str, Any]
    at: float  # time.monotonic() when it arrived (comparable across processes on one machine)

    @property
    def chat_id(self) -> str | None:
        value = self.params.get("chat_id")
        return None if value is None else str(value)

    @property
    def text(self) -> str:
        return str(self.params.get("text") or self.params.get("caption") or "")

    @property
    def keyboard(self) -> list[list[dict[str, Any]]]:
        markup = self.params.get("reply_markup") or {}
        return list(markup.get("inline_keyboard", [])) if isinstance(markup, dict) else []

    def buttons(self) -> dict[str, str]:
        """label -> callback data of this message's inline keyboard."""
        return {b["text"]: b["callback_data"] for row in self.keyboard for b in row}


@dataclass
class Failure:
    """A scripted answer: an error (`status`), or with `delay` a normal answer that comes late."""

    method: str
    status: int
    description: str
    retry_after: int | None = None
    times: int = 1
    when: Callable[[dict[str, Any]], bool] | None = None
    delay: float = 0.0


@dataclass
class Person:
    """A Telegram user writing to the bot in their private chat (chat id = user id)."""

    id: int
    first_name: str = "Alice"
    language_code: str | None = "en"
    username: str | None = None

    @property
    def user(self) -> dict[str, Any]:
        data: dict[str, Any] = {"id": self.id, "is_bot": False, "first_name": self.first_name}
        if self.language_code:
            data["language_code"] = self.language_code
        if self.username:
            data["username"] = self.username
        return data

    @property
    def chat(self) -> dict[str, Any]:
        return {"id": self.id, "type": "private", "first_name": self.first_name}


@dataclass
class FakeBotAPI:
    token: str = TOKEN
    calls: list[Call] = field(default_factory=list)
    port: int = 0
    pushed_at: dict[int, float] = field(default_factory=dict)  # update_id -> time it became available
    pushed_chat: dict[int, str] = field(default_factory=dict)  # update_id -> its chat

    def __post_init__(self) -> None:
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1000)
        self._replays: list[dict[str, Any]] = []
        self._failures: list[Failure] = []
        self._calls_changed = asyncio.Condition()
        self._updates_changed = asyncio.Condition()
        self._closing = False
        self.refused = 0  # scripted failures answered
        self._runner: web.AppRunner | None = None
        self._scheduled: set[asyncio.Task[None]] = set()
        self.messages: dict[tuple[str, int], dict[str, Any]] = {}
        self.files: dict[str, bytes] = {}  # file_id -> content, served through getFile and the file download
        self.downloads: list[str] = []  # file paths downloaded, in order

    # ---- server ----------------------------------------------------------------------------------------
    async def start(self, port: int = 0) -> FakeBotAPI:
        app = web.Application(client_max_size=20 * 1024 * 1024)
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_get("/file/bot{token}/{path:.+}", self._download)
        app.router.add_post("/_control/schedule", self._control_schedule)
        app.router.add_get("/_control/report", self._control_report)
        app.router.add_post("/_control/reset", self._control_reset)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        server = site._server
        assert server is not None
        self.port = server.sockets[0].getsockname()[1]  # type: ignore[attr-defined]
        return self

    async def stop(self) -> None:
        self._closing = True
        for task in list(self._scheduled):
            task.cancel()
        async with self._updates_changed:
            self._updates_changed.notify_all()  # pending long polls return at once
        if self._runner is not None:
            await self._runner.cleanup()

    @property
    def base_url(self) -> str:
        """What TELEGRAM_BASE_URL holds: the adapter appends /bot<token>."""
        return f"http://127.0.0.1:{self.port}"

    # ---- scripting -------------------------------------------------------------------------------------
    def push(self, update: dict[str, Any]) -> int:
        """Makes an update available to getUpdates with the next update_id; returns the id."""
        update = self._numbered(update)
        self._updates.append(update)
        self._notify(self._updates_changed)
        return int(update["update_id"])

    def _numbered(self, update: dict[str, Any]) -> dict[str, Any]:
        """The update with the next update_id, its time of release and its chat recorded."""
        update = {**update, "update_id": next(self._update_ids)}
        self.pushed_at[int(update["update_id"])] = time.monotonic()
        chat = (update.get("message") or update.get("callback_query", {}).get("message") or {}).get("chat", {})
        if "id" in chat:
            self.pushed_chat[int(update["update_id"])] = str(chat["id"])
        return update

    def replay(self, update_id: int, update: dict[str, Any]) -> None:
        """Delivers an update again with its old id, whatever offset was confirmed (as Telegram does after a
        restart before the offset reached it, or a webhook retry)."""
        self._replays.append({**update, "update_id": update_id})
        self._notify(self._updates_changed)

    def text(self, person: Person, text: str, *, chat: dict[str, Any] | None = None) -> dict[str, Any]:
        message: dict[str, Any] = {"message_id": next(self._message_ids), "date": int(time.time()),
                                   "chat": chat or person.chat, "from": person.user, "text": text}
        if text.startswith("/"):
            message["entities"] = [{"type": "bot_command", "offset": 0, "length": len(text.split()[0])}]
        return {"message": message}

    def group_text(self, person: Person, text: str, chat: dict[str, Any], *,
                   reply_to: Call | None = None) -> dict[str, Any]:
        """A message of `person` in a group `chat` ({"id": -100..., "type": "group"}), optionally a reply to a
        message the bot sent there."""
        update = self.text(person, text, chat=chat)
        if reply_to is not None:
            update["message"]["reply_to_message"] = self.messages[(str(reply_to.chat_id),
                                                                   int(reply_to.params["_message_id"]))]
        return update

    @staticmethod
    def edited(update: dict[str, Any], text: str) -> dict[str, Any]:
        """The message of an earlier `text` update, edited to `text` (an edited_message update)."""
        message = {**update["message"], "text": text, "edit_date": int(time.time())}
        return {"edited_message": message}

    def forwarded(self, person: Person, text: str, original: Person) -> dict[str, Any]:
        """`person` forwards `original`'s message `text` into their private chat."""
        update = self.text(person, text)
        update["message"]["forward_origin"] = {"type": "user", "sender_user": original.user,
                                               "date": int(time.time()) - 60}
        return update

    def added_to(self, person: Person, chat: dict[str, Any], *, status: str = "member") -> dict[str, Any]:
        """`person` added the bot to `chat` (a my_chat_member update)."""
        return {"my_chat_member": {"chat": chat, "from": person.user, "date": int(time.time()),
                                   "old_chat_member": {"status": "left", "user": BOT_USER},
                                   "new_chat_member": {"status": status, "user": BOT_USER}}}

    def channel_post(self, chat: dict[str, Any], text: str) -> dict[str, Any]:
        return {"channel_post": {"message_id": next(self._message_ids), "date": int(time.time()), "chat": chat,
                                 "text": text}}

    def location(self, person: Person, lat: float, lng: float) -> dict[str, Any]:
        return {"message": {"message_id": next(self._message_ids), "date": int(time.time()), "chat": person.chat,
                            "from": person.user, "location": {"latitude": lat, "longitude": lng}}}

    def voice(self, person: Person, content: bytes, *, duration: int = 3, audio: bool = False,
              size: int | None = None) -> dict[str, Any]:
        """A voice note (or, with `audio`, an audio file) whose file holds `content`; `size` is what Telegram
        reports as its file size (the length of `content` unless given)."""
        file_id = self._file(content)
        sound: dict[str, Any] = {"file_id": file_id, "file_unique_id": f"u{file_id}", "duration": duration,
                                 "mime_type": "audio/ogg" if not audio else "audio/mpeg",
                                 "file_size": len(content) if size is None else size}
        if audio:
            sound["file_name"] = "note.mp3"
        return {"message": {"message_id": next(self._message_ids), "date": int(time.time()), "chat": person.chat,
                            "from": person.user, "audio" if audio else "voice": sound}}

    def photo(self, person: Person, content: bytes, *, caption: str | None = None) -> dict[str, Any]:
        """A photo (two sizes, the larger one holding `content`), with an optional caption."""
        small, large = self._file(b"thumbnail"), self._file(content)
        message: dict[str, Any] = {
            "message_id": next(self._message_ids), "date": int(time.time()), "chat": person.chat, "from": person.user,
            "photo": [{"file_id": small, "file_unique_id": f"u{small}", "width": 90, "height": 90, "file_size": 9},
                      {"file_id": large, "file_unique_id": f"u{large}", "width": 1280, "height": 960,
                       "file_size": len(content)}]}
        if caption:
            message["caption"] = caption
        return {"message": message}

    def resend(self, update: dict[str, Any]) -> dict[str, Any]:
        """The same message (the same file) sent once more, as a new message."""
        return {"message": {**update["message"], "message_id": next(self._message_ids)}}

    def _file(self, content: bytes) -> str:
        file_id = f"file{next(self._message_ids)}"
        self.files[file_id] = content
        return file_id

    def press(self, person: Person, data: str, message: Call) -> dict[str, Any]:
        """A press of a button (callback data `data`) under a message the bot sent (a recorded call)."""
        sent = self.messages[(str(message.chat_id), int(message.params["_message_id"]))]
        return {"callback_query": {"id": f"cq{next(self._message_ids)}", "from": person.user,
                                   "chat_instance": f"ci{person.id}", "data": data, "message": sent}}

    def fail(self, method: str, *, status: int, description: str, retry_after: int | None = None,
             times: int = 1, when: Callable[[dict[str, Any]], bool] | None = None) -> None:
        self._failures.append(Failure(method, status, description, retry_after, times, when))

    def slow(self, method: str, *, delay: float, times: int = 1,
             when: Callable[[dict[str, Any]], bool] | None = None) -> None:
        """The next matching call succeeds (the message arrives) but is answered only after `delay` seconds."""
        self._failures.append(Failure(method, 200, "", None, times, when, delay))

    def calls_of(self, method: str, chat_id: str | int | None = None) -> list[Call]:
        return [c for c in self.calls if c.method == method and (chat_id is None or c.chat_id == str(chat_id))]

    async def wait_for(self, method: str, *, chat_id: str | int | None = None, count: int = 1,
                       where: Callable[[Call], bool] | None = None, within: float = 10.0) -> list[Call]:
        """The first `count` matching calls, waiting (without polling) until they have arrived."""

        def matching() -> list[Call]:
            return [c for c in self.calls_of(method, chat_id) if where is None or where(c)]

        async with asyncio.timeout(within), self._calls_changed:
            await self._calls_changed.wait_for(lambda: len(matching()) >= count)
        return matching()[:count]

    def _notify(self, condition: asyncio.Condition) -> None:
        async def notify() -> None:
            async with condition:
                condition.notify_all()

        with contextlib.suppress(RuntimeError):  # no running loop: nobody can be waiting
            task = asyncio.get_running_loop().create_task(notify())
            self._scheduled.add(task)
            task.add_done_callback(self._scheduled.discard)

    def schedule(self, updates: Iterable[dict[str, Any]], rate: float, webhooks: Sequence[str] = (),
                 secret: str = "") -> None:
        """Releases the updates at `rate` per second (all at once when 0), from now on: to getUpdates, or posted
        to the `webhooks` in turn."""
        batch = list(updates)

        async def release() -> None:
            start = time.monotonic()
            posts: list[asyncio.Task[None]] = []
            open_posts = asyncio.Semaphore(WEBHOOK_CONNECTIONS)
            async with contextlib.AsyncExitStack() as stack:
                http = await stack.enter_async_context(aiohttp.ClientSession()) if webhooks else None
                for index, update in enumerate(batch):
                    if rate > 0:
                        delay = start + index / rate - time.monotonic()
                        if delay > 0:
                            await asyncio.sleep(delay)
                    if http is None:
                        self.push(update)
                        continue
                    await open_posts.acquire()
                    url = webhooks[index % len(webhooks)]
                    posts.append(asyncio.create_task(self._post(http, url, secret, self._numbered(update),
                                                                open_posts)))
                await asyncio.gather(*posts)

        task = asyncio.get_running_loop().create_task(release())
        self._scheduled.add(task)
        task.add_done_callback(self._scheduled.discard)

    async def _post(self, http: aiohttp.ClientSession, url: str, secret: str, update: dict[str, Any],
                    open_posts: asyncio.Semaphore) -> None:
        try:
            while not self._closing:
                with contextlib.suppress(aiohttp.ClientError):
                    async with http.post(url, json=update,
                                         headers={"X-Telegram-Bot-Api-Secret-Token": secret}) as response:
                        if response.status == 200:
                            return
                await asyncio.sleep(WEBHOOK_RETRY_S)
        finally:
            open_posts.release()

    # ---- the Bot API -----------------------------------------------------------------------------------
    async def _handle(self, request: web.Request) -> web.Response:
        method = request.match_info["method"]
        if request.match_info["token"] != self.token:
            return web.json_response({"ok": False, "error_code": 401, "description": "Unauthorized"}, status=401)
        params = await _params(request)
        call = Call(method, params, time.monotonic())
        failure = self._failure_for(method, params)
        if failure is not None and failure.delay:
            result = self._answer(method, params)
            await self._record(call)
            await asyncio.sleep(failure.delay)
            return _ok(result)
        if failure is not None:
            self.refused += 1
            await self._record(call)
            body: dict[str, Any] = {"ok": False, "error_code": failure.status, "description": failure.description}
            if failure.retry_after is not None:
                body["parameters"] = {"retry_after": failure.retry_after}
            return web.json_response(body, status=failure.status)
        if method == "getUpdates":
            await self._record(call)
            return _ok(await self._get_updates(params))
        if method == "getFile" and str(params.get("file_id")) not in self.files:
            await self._record(call)
            return web.json_response({"ok": False, "error_code": 400,
                                      "description": "Bad Request: invalid file_id"}, status=400)
        result = self._answer(method, params)
        await self._record(call)
        return _ok(result)

    async def _record(self, call: Call) -> None:
        self.calls.append(call)
        async with self._calls_changed:
            self._calls_changed.notify_all()

    def _failure_for(self, method: str, params: dict[str, Any]) -> Failure | None:
        for failure in self._failures:
            if failure.method == method and failure.times > 0 and (failure.when is None or failure.when(params)):
                failure.times -= 1
                return failure
        return None

    async def _get_updates(self, params: dict[str, Any]) -> list[dict[str, Any]]:
        offset = int(params.get("offset") or 0)
        limit = int(params.get("limit") or 100)
        timeout = float(params.get("timeout") or 0)
        if offset:  # confirms everything before it (updates are kept in id order)
            confirmed = 0
            while confirmed < len(self._updates) and int(self._updates[confirmed]["update_id"]) < offset:
                confirmed += 1
            del self._updates[:confirmed]
        if not (self._updates or self._replays) and timeout > 0 and not self._closing:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout), self._updates_changed:
                    await self._updates_changed.wait_for(lambda: bool(self._updates or self._replays)
                                                         or self._closing)
        replays, self._replays = self._replays, []
        # Replays first: PTB confirms up to the last update of a batch, which stays the newest one.
        return [*replays, *self._updates[:limit]]

    def _answer(self, method: str, params: dict[str, Any]) -> Any:
        if method == "getMe":
            return BOT_USER
        if method in ("sendMessage", "sendPhoto", "sendDocument"):
            chat_id = str(params["chat_id"])
            message_id = next(self._message_ids)
            params["_message_id"] = message_id
            chat: dict[str, Any] = ({"id": int(chat_id), "type": "group", "title": "Group"} if chat_id.startswith("-")
                                    else {"id": int(chat_id), "type": "private", "first_name": "Person"})
            message: dict[str, Any] = {"message_id": message_id, "date": int(time.time()), "from": BOT_USER,
                                       "chat": chat}
            if method == "sendPhoto":
                message["photo"] = [{"file_id": f"photo{message_id}", "file_unique_id": f"u{message_id}",
                                     "width": 640, "height": 480}]
                if params.get("caption"):
                    message["caption"] = params["caption"]
            elif method == "sendDocument":
                message["document"] = {"file_id": f"doc{message_id}", "file_unique_id": f"u{message_id}",
                                       "file_name": params.get("document_filename"),
                                       "file_size": params.get("document_bytes")}
                if params.get("caption"):
                    message["caption"] = params["caption"]
            else:
                message["text"] = params.get("text", "")
            if params.get("reply_markup"):
                message["reply_markup"] = params["reply_markup"]
            self.messages[(chat_id, message_id)] = message
            return message
        if method in ("editMessageText", "editMessageReplyMarkup"):
            key = (str(params.get("chat_id")), int(params.get("message_id") or 0))
            message = dict(self.messages.get(key) or {"message_id": key[1], "date": int(time.time()),
                                                      "chat": {"id": int(key[0] or 0), "type": "private"}})
            if method == "editMessageText":
                message["text"] = params.get("text", "")
            if params.get("reply_markup"):
                message["reply_markup"] = params["reply_markup"]
            else:
                message.pop("reply_markup", None)
            self.messages[key] = message
            return message
        if method == "getFile":
            file_id = str(params.get("file_id"))
            return {"file_id": file_id, "file_unique_id": f"u{file_id}", "file_size": len(self.files[file_id]),
                    "file_path": f"media/{file_id}"}
        return True  # answerCallbackQuery, sendChatAction, deleteWebhook, setWebhook, ...

    async def _download(self, request: web.Request) -> web.StreamResponse:
        path = request.match_info["path"]
        if request.match_info["token"] != self.token:
            return web.Response(status=401)
        self.downloads.append(path)
        content = self.files.get(path.removeprefix("media/"))
        if content is None:
            return web.Response(status=404, text="Not Found")
        return web.Response(body=content, content_type="application/octet-stream")

    # ---- control (for a load generator in another process) ---------------------------------------------
    async def _control_schedule(self, request: web.Request) -> web.Response:
        body = await request.json()
        self.schedule(body["updates"], float(body.get("rate", 0)), body.get("webhooks", ()), body.get("secret", ""))
        return web.json_response({"ok": True})

    async def _control_report(self, request: web.Request) -> web.Response:
        """The calls of `method` and the pushed updates, once `chats` different chats have had such a call
        (or `timeout` seconds passed)."""
        method = request.query.get("method", "sendMessage")
        chats = int(request.query.get("chats", "0"))
        timeout = float(request.query.get("timeout", "60"))
        if chats:
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(timeout), self._calls_changed:
                    await self._calls_changed.wait_for(
                        lambda: len({c.chat_id for c in self.calls if c.method == method}) >= chats)
        calls = [{"chat_id": c.chat_id, "at": c.at, "text": c.text[:80]} for c in self.calls_of(method)]
        pushed = [{"update_id": k, "at": v, "chat_id": self.pushed_chat.get(k)} for k, v in self.pushed_at.items()]
        return web.json_response({"calls": calls, "pushed": pushed, "refused": self.refused,
                                  "total_calls": len(self.calls)})

    async def _control_reset(self, request: web.Request) -> web.Response:
        self.calls.clear()
        self.pushed_at.clear()
        self.pushed_chat.clear()
        self.refused = 0
        return web.json_response({"ok": True})


def _ok(result: Any) -> web.Response:
    return web.json_response({"ok": True, "result": result})


async def _params(request: web.Request) -> dict[str, Any]:
    params: dict[str, Any] = {}
    if request.method == "GET":
        raw: Iterable[tuple[str, Any]] = request.query.items()
    elif request.content_type == "application/json":
        raw = (await request.json()).items()
    else:
        raw = (await request.post()).items()
    for key, value in raw:
        if isinstance(value, web.FileField):
            content = value.file.read()
            params[f"{key}_bytes"] = len(content)
            if key == "document":
                params["document_content"] = content
                params["document_filename"] = value.filename
            continue
        if key in _JSON_FIELDS and isinstance(value, str):
            with contextlib.suppress(ValueError):
                value = json.loads(value)
        elif key in _INT_FIELDS:
            with contextlib.suppress(TypeError, ValueError):
                value = int(value)
        params[key] = value
    return params


def serve_forever(port: int = 0, ready: Callable[[int], None] | None = None) -> None:
    """Runs the fake on 127.0.0.1 until the process is terminated; `ready(port)` is called once it listens."""

    async def main() -> None:
        api = await FakeBotAPI().start(port)
        if ready is not None:
            ready(api.port)
        try:
            await asyncio.Event().wait()
        finally:
            await api.stop()

    asyncio.run(main())


if __name__ == "__main__":
    serve_forever(ready=lambda port: print(port, flush=True))
