"""python-telegram-bot's HTTP layer on aiohttp instead of httpx. PTB does everything Bot-API-specific above
this class (the parameters, the JSON answer, status codes to `RetryAfter`, `BadRequest`, `Forbidden`, ...);
what is here only moves bytes. httpx with httpcore, h11 and anyio under it costs several times aiohttp's CPU per
call to a local Bot API: for a bot that makes one call per message, that is a fair share of what a message costs.

Errors keep PTB's meaning, with the aiohttp error as their cause, which tells the outbox sender whether a failed
request can have reached Telegram (adapters/telegram/outbound.py): `NOT_SENT` are errors before any byte of the
request was written (no connection, none free in time); any other transport error may come after it was."""

from __future__ import annotations

import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

import aiohttp
from telegram._utils.defaultvalue import DefaultValue
from telegram._utils.types import ODVInput
from telegram.error import NetworkError, TimedOut
from telegram.request import BaseRequest, RequestData

# Raised before the request was written: it certainly did not arrive (ConnectionTimeoutError also covers the wait
# for a free connection of the pool; aiohttp counts that into the connect timeout).
NOT_SENT: tuple[type[BaseException], ...] = (aiohttp.ClientConnectorError, aiohttp.ConnectionTimeoutError)
# Any failure of the transport, sent or not.
TRANSPORT: tuple[type[BaseException], ...] = (aiohttp.ClientError, TimeoutError)


class AiohttpRequest(BaseRequest):
    """A `BaseRequest` on one aiohttp session: at most `connection_pool_size` connections, PTB's default timeouts
    (5 s to connect, read and write, 1 s for a free connection) unless given. aiohttp has no write timeout of its
    own: a request that cannot be written in time ends at the read timeout instead (its outcome unknown).
    `answered` is called on every answer with status 200 (the poller's sign of life)."""

    def __init__(self, connection_pool_size: int = 1, *, connect_timeout: float | None = 5.0,
                 read_timeout: float | None = 5.0, write_timeout: float | None = 5.0,
                 pool_timeout: float | None = 1.0, answered: Callable[[], None] | None = None) -> None:
        self._pool_size = connection_pool_size
        self._answered = answered
        self._connect_timeout = connect_timeout
        self._read_timeout = read_timeout
        self._write_timeout = write_timeout
        self._pool_timeout = pool_timeout
        self._session: aiohttp.ClientSession | None = None

    @property
    def read_timeout(self) -> float | None:
        return self._read_timeout

    async def initialize(self) -> None:
        if self._session is None or self._session.closed:
            # Proxies from the environment (HTTPS_PROXY, NO_PROXY), as httpx takes them; aiohttp looks them up on
            # every request when asked to, so only when some are set.
            self._session = aiohttp.ClientSession(
                connector=aiohttp.TCPConnector(limit=self._pool_size), headers={"User-Agent": self.USER_AGENT},
                trust_env=bool(urllib.request.getproxies()))

    async def shutdown(self) -> None:
        if self._session is not None and not self._session.closed:
            await self._session.close()
        self._session = None

    async def do_request(
        self,
        url: str,
        method: str,
        request_data: RequestData | None = None,
        read_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        write_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        connect_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
        pool_timeout: ODVInput[float] = BaseRequest.DEFAULT_NONE,
    ) -> tuple[int, bytes]:
        if self._session is None or self._session.closed:
            raise RuntimeError("This AiohttpRequest is not initialized!")
        read = self._read_timeout if isinstance(read_timeout, DefaultValue) else read_timeout
        connect = self._connect_timeout if isinstance(connect_timeout, DefaultValue) else connect_timeout
        pool = self._pool_timeout if isinstance(pool_timeout, DefaultValue) else pool_timeout
        # aiohttp's `connect` is the wait for a pooled connection and the new connection together.
        waiting = None if connect is None or pool is None else connect + pool
        timeout = aiohttp.ClientTimeout(total=None, connect=waiting, sock_connect=connect, sock_read=read)
        try:
            async with self._session.request(method, url, data=_body(request_data), timeout=timeout) as response:
                body = await response.read()
                if response.status == 200 and self._answered is not None:
                    self._answered()
                return response.status, body
        except aiohttp.ConnectionTimeoutError as error:
            raise TimedOut("Timed out before the request was sent (no free connection, or connecting took too "
                           "long)") from error
        except TimeoutError as error:  # the read timeout (aiohttp's SocketTimeoutError among them)
            raise TimedOut from error
        except aiohttp.ClientError as error:
            raise NetworkError(f"aiohttp.{type(error).__name__}: {error}") from error


_URLENCODED = "application/x-www-form-urlencoded"


def _body(request_data: RequestData | None) -> Any:
    """Form fields as PTB encodes them (JSON values as strings), multipart when files go along. Without files the
    form is encoded here: given a dict, aiohttp builds a `FormData` and a multipart writer for it on every request
    (a fifth of what a draft edit costs this process) only to send the same urlencoded bytes."""
    if request_data is None:
        return None
    fields = request_data.json_parameters
    files = request_data.multipart_data
    if not files:
        return aiohttp.BytesPayload(urllib.parse.urlencode(fields).encode(), content_type=_URLENCODED)
    form = aiohttp.FormData()
    for name, value in fields.items():
        form.add_field(name, value)
    for name, (filename, content, mimetype) in files.items():
        form.add_field(name, content, filename=filename, content_type=mimetype)
    return form
