"""Telegram's webhook over HTTP (webhook mode, see `bot.inbox`): `listen:port/path` takes Telegram's posts,
checks the secret header, and stores each update in the inbox before it answers, so an acknowledged update is
never lost. I/O only: the inbox's workers hand the stored updates to the adapter's `handle_update`."""

from __future__ import annotations

import contextlib
import hmac
import json
import logging
import re
from collections.abc import Awaitable, Callable
from typing import Any

from tornado.httpserver import HTTPServer
from tornado.web import Application, RequestHandler

from bot.inbox import Inbox, Posted

log = logging.getLogger(__name__)

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"

# A posted update (parsed JSON) -> where it goes, or None for updates the bot does not act on.
Route = Callable[[dict[str, Any]], Posted | None]


class _UpdateEndpoint(RequestHandler):
    """POST <path>: Telegram's webhook call."""

    def initialize(self, receive: Callable[[str | None, bytes], Awaitable[int]]) -> None:
        self._receive = receive

    async def post(self) -> None:
        self.set_status(await self._receive(self.request.headers.get(SECRET_HEADER), self.request.body))

    def check_xsrf_cookie(self) -> None:
        """Telegram sends no cookie; the secret header authenticates the call."""


class WebhookEndpoint:
    """The HTTP side: `listen:port/path` takes Telegram's posts and stores them in the inbox before it answers."""

    def __init__(self, inbox: Inbox, secret: str, route: Route) -> None:
        self.inbox = inbox
        self.secret = secret
        self.route = route
        self._server: HTTPServer | None = None

    async def receive(self, secret: str | None, body: bytes) -> int:
        """The HTTP status to answer: 200 once the update is stored (or is not for the bot), 403 without the
        secret, 400 for a body that is no update, 500 when it could not be stored (Telegram retries)."""
        if secret is None or not hmac.compare_digest(secret.encode(), self.secret.encode()):
            return 403
        try:
            payload = json.loads(body)
            update_id = int(payload["update_id"])
            posted = self.route(payload)
        except Exception:  # a 5xx would make Telegram post it again and again
            log.warning("telegram webhook: a post that is no update was refused", exc_info=True)
            return 400
        if posted is None:
            return 200  # nothing the bot acts on
        try:
            await self.inbox.store(update_id, posted, payload)
        except Exception:
            log.exception("telegram webhook: storing update %s failed; Telegram will post it again", update_id)
            return 500
        return 200

    async def start(self, listen: str, port: int, path: str) -> None:
        app = Application([(rf"/{re.escape(path)}/?" if path else r"/", _UpdateEndpoint, {"receive": self.receive})])
        self._server = HTTPServer(app)
        self._server.listen(port, address=listen)

    async def stop(self) -> None:
        if self._server is not None:
            self._server.stop()
            with contextlib.suppress(Exception):
                await self._server.close_all_connections()
            self._server = None
