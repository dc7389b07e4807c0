"""Long polling on several cores (TELEGRAM_PROCESSES > 1). The bot is CPU-bound in Python, so one process serves
about one core's worth of messages. Telegram hands updates to one poller only, so this process (the first share)
polls, as before, and passes each update to the process that owns its chat: chat ids are split into
`processes` shares by their value, the first share handled here, every other one by a worker process of its own
that runs the same dialog on the same database and sends its own replies. A chat always lands in the same
process, so that process's lanes (`bot.ordering`) keep its updates in order and its button presses beside a running
turn, exactly as with one process.

Updates travel to a worker as JSON frames over a socket pair (`link`), written without blocking the poller's event
loop; nothing extra touches the database, so a message costs no more than in one process. The first share also
runs the scheduler and the outbox's background pass (pushes, retries) for every chat; a worker delivers the
replies of the updates it handled, under the same per-chat locks in PostgreSQL as any other sender.

A worker that dies is started again; until it is back, its chats are handled here. Updates it had taken but not
yet recorded are lost, as they would be in one process that crashed (a reply lost is better than a write
doubled: `bot.updates`). Stopping: the poller stops taking updates first, then tells every worker to finish what it
holds and waits for it."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import multiprocessing
import os
import socket
import struct
import time
import zlib
from collections.abc import Callable
from dataclasses import dataclass
from multiprocessing.connection import Connection
from typing import Any, Protocol

from telegram import Update

from bot.settings import Settings


class FedAdapter(Protocol):
    """What a worker process runs (the Telegram adapter with `fed` set): started, handed updates, stopped."""

    async def start(self) -> None: ...

    async def take(self, payload: dict[str, object]) -> None: ...

    async def stop(self) -> None: ...

log = logging.getLogger(__name__)

_FRAME = struct.Struct("!I")  # length of the JSON body that follows
_READY = b"R"
START_TIMEOUT_S = 120.0  # a worker imports the app, migrates (a no-op) and asks getMe before it is ready
STOP_TIMEOUT_S = 60.0
RESTART_AFTER_S = 5.0  # between two starts of one share, so a worker that cannot start does not spin
_BUFFERED = 1 << 20  # bytes waiting for a worker before the poller waits for it to read


def chat_of(update: object) -> str | None:
    """The chat an update belongs to (its lane's chat), or None for updates the bot does not act on."""
    if not isinstance(update, Update):
        return None
    posted = update.message or update.edited_message or update.channel_post
    if posted is not None:
        return str(posted.chat.id)
    if update.my_chat_member is not None:
        return str(update.my_chat_member.chat.id)
    query = update.callback_query
    if query is not None:
        message = query.message
        return str(message.chat.id if message is not None else query.from_user.id)
    return None


def share_of(chat_id: str, processes: int) -> int:
    """Which of `processes` shares handles the chat: stable for a chat, spread evenly over chat ids."""
    try:
        key = int(chat_id)
    except ValueError:
        key = zlib.crc32(chat_id.encode())
    return key % processes


class Link:
    """This process's end of one worker's socket: update frames out, the ready byte in."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader = reader
        self.writer = writer
        self.up = True
        # The worker writes nothing after its ready byte: end of stream means it is gone (the kernel closes its
        # socket when it dies), known at once rather than at the next check of its process.
        self._watch = asyncio.create_task(self._until_closed())

    async def _until_closed(self) -> None:
        with contextlib.suppress(Exception):
            while await self.reader.read(4096):
                pass
        self.up = False

    async def send(self, payload: dict[str, Any] | None) -> None:
        if not self.up or self.writer.is_closing():
            raise ConnectionResetError("the worker's socket is closed")
        body = json.dumps(payload, separators=(",", ":")).encode()
        self.writer.write(_FRAME.pack(len(body)) + body)
        if self.writer.transport.get_write_buffer_size() > _BUFFERED:
            await self.writer.drain()  # the worker is behind: wait for it rather than buffer without bound

    def close(self) -> None:
        self.up = False
        self._watch.cancel()
        with contextlib.suppress(Exception):
            self.writer.close()


@dataclass
class _Share:
    index: int
    process: Any = None  # multiprocessing's process object of the running worker
    link: Link | None = None
    started_at: float = 0.0


# A worker process's entry point: (settings, database URL, share index, its end of the socket pair).
Target = Callable[[Settings, str, int, Connection], None]


class Shares:
    """The worker processes of the shares other than the first, started, watched and stopped by the poller.
    `target` is the workers' entry point (`app.telegram_worker.serve_share`, which builds the app in the worker;
    the load benchmark builds its own bot there)."""

    def __init__(self, settings: Settings, database_url: str, processes: int, target: Target) -> None:
        if processes < 2:
            raise ValueError("shares need at least two processes")
        self.target = target
        self.settings = settings
        self.database_url = database_url
        self.processes = processes
        self._shares = [_Share(index) for index in range(1, processes)]
        self._context = multiprocessing.get_context("spawn")  # no copy of this process's loop, pool or sockets
        self._stopping = False
        self._watch: asyncio.Task[None] | None = None

    def link_for(self, chat_id: str) -> Link | None:
        """The worker that handles this chat, None when it is this process (or its worker is down)."""
        index = share_of(chat_id, self.processes)
        if index == 0:
            return None
        link = self._shares[index - 1].link
        return link if link is not None and link.up else None

    async def start(self) -> None:
        await asyncio.gather(*(self._start(share) for share in self._shares))
        self._watch = asyncio.create_task(self._watch_workers())

    async def _start(self, share: _Share) -> None:
        share.started_at = time.monotonic()
        mine, theirs = self._context.Pipe(duplex=True)  # a socket pair
        process = self._context.Process(target=self.target, name=f"telegram-share-{share.index}", daemon=True,
                                        args=(self.settings, self.database_url, share.index, theirs))
        process.start()
        theirs.close()
        share.process = process
        reader, writer = await _streams(mine)
        try:
            ready = await asyncio.wait_for(reader.read(1), timeout=START_TIMEOUT_S)
        except TimeoutError:
            ready = b""
        except BaseException:  # stopped while it starts: its socket closes, so it stops as soon as it is up
            writer.close()
            raise
        if ready != _READY:
            writer.close()
            process.kill()
            raise RuntimeError(f"Telegram worker {share.index} did not start (exit code {process.exitcode})")
        share.link = Link(reader, writer)

    async def _watch_workers(self) -> None:
        """Starts a worker again when it died; meanwhile its chats are handled here (`link_for` gives None)."""
        while not self._stopping:
            await asyncio.sleep(1.0)
            for share in self._shares:
                if self._stopping or share.process is None or share.process.is_alive():
                    continue
                if share.link is not None:
                    log.error("Telegram worker %s ended (exit code %s); its chats are handled by the poller until "
                              "it is started again", share.index, share.process.exitcode)
                    share.link.close()
                    share.link = None
                if time.monotonic() - share.started_at < RESTART_AFTER_S:
                    continue
                try:
                    await self._start(share)
                    log.warning("Telegram worker %s started again", share.index)
                except Exception:
                    log.exception("starting Telegram worker %s again failed", share.index)

    async def stop(self) -> None:
        """Each worker finishes the updates it holds and sends their replies, then ends."""
        self._stopping = True
        if self._watch is not None:
            self._watch.cancel()
            await asyncio.gather(self._watch, return_exceptions=True)
        for share in self._shares:
            if share.link is not None and share.link.up:
                with contextlib.suppress(OSError):
                    await share.link.send(None)
                    await share.link.writer.drain()
        for share in self._shares:
            if share.process is None:
                continue
            await asyncio.to_thread(share.process.join, STOP_TIMEOUT_S)
            if share.process.is_alive():
                log.error("Telegram worker %s did not stop within %.0f s; killed", share.index, STOP_TIMEOUT_S)
                share.process.kill()
                await asyncio.to_thread(share.process.join, 5.0)
            if share.link is not None:
                share.link.close()
                share.link = None

    def exit_codes(self) -> list[int | None]:
        """The current workers' exit codes (None: running, or never started)."""
        return [share.process.exitcode if share.process is not None else None for share in self._shares]

    def worker_pids(self) -> list[int]:
        return [share.process.pid for share in self._shares if share.process is not None and share.process.pid]


class RoutingQueue(asyncio.Queue[object]):
    """The poller's update queue: an update of a chat another process owns goes there, the rest stays here."""

    def __init__(self, shares: Shares) -> None:
        super().__init__()
        self.shares = shares

    async def put(self, item: object) -> None:
        chat = chat_of(item)
        link = self.shares.link_for(chat) if chat is not None else None
        if link is not None:
            assert isinstance(item, Update)
            try:
                await link.send(item.to_dict())
                return
            except (ConnectionError, OSError) as problem:
                log.error("passing update %s to its worker failed (%s); handled here", item.update_id, problem)
                link.close()
        await super().put(item)


async def _streams(connection: Connection) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    sock = socket.socket(fileno=os.dup(connection.fileno()))
    connection.close()
    return await asyncio.open_unix_connection(sock=sock)


# ---- the worker process ------------------------------------------------------------------------------------
async def serve_fed(adapter: FedAdapter, connection: Connection) -> None:
    """Starts a worker's adapter (`fed`), says it is ready, and hands it the updates the poller passes on until
    the poller says stop or goes away; then the adapter finishes what it holds and stops."""
    reader, writer = await _streams(connection)
    await adapter.start()
    try:
        writer.write(_READY)
        await writer.drain()
        while True:
            try:
                header = await reader.readexactly(_FRAME.size)
                body = await reader.readexactly(_FRAME.unpack(header)[0])
            except (asyncio.IncompleteReadError, ConnectionError):
                log.warning("the Telegram poller went away; stopping")
                break
            payload = json.loads(body)
            if payload is None:
                break
            await adapter.take(payload)
    finally:
        await adapter.stop()
        writer.close()
