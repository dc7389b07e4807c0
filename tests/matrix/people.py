"""A test person on the real homeserver: a matrix-nio client that syncs in the background, keeps every event
it sees, and waits for the one a test expects (polling its own list, never sleeping a fixed time)."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from nio import (
    AsyncClient,
    AsyncClientConfig,
    ReactionEvent,
    RoomCreateResponse,
    RoomMemberEvent,
    RoomMessageText,
    RoomSendResponse,
    SyncResponse,
)

from tests.matrix.synapse import Account

WAIT_S = 15.0
_txn = itertools.count()


@dataclass(frozen=True)
class Seen:
    index: int
    room_id: str
    event: Any


class MatrixPerson:
    def __init__(self, homeserver: str, account: Account, *, e2e_store: Path | None = None) -> None:
        self.account = account
        if e2e_store is not None:  # a client that encrypts and decrypts (needs matrix-nio[e2e])
            e2e_store.mkdir(parents=True, exist_ok=True)
            self.client = AsyncClient(homeserver, account.user_id, store_path=str(e2e_store),
                                      config=AsyncClientConfig(encryption_enabled=True))
        else:
            self.client = AsyncClient(homeserver, account.user_id,
                                      config=AsyncClientConfig(encryption_enabled=False))
        self.client.restore_login(account.user_id, account.device_id, account.access_token)
        self.seen: list[Seen] = []
        self.ephemeral: list[Seen] = []  # typing notices and read receipts, in the order they came
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None

    @property
    def user_id(self) -> str:
        return self.account.user_id

    async def start(self) -> None:
        first = await self.client.sync(timeout=0, full_state=True)
        assert isinstance(first, SyncResponse), first
        self._task = asyncio.create_task(self._sync())

    async def close(self) -> None:
        if self._task is not None:
            self._task.cancel()
            await asyncio.gather(self._task, return_exceptions=True)
        await self.client.close()

    async def _sync(self) -> None:
        while True:
            response = await self.client.sync(timeout=5000)
            if not isinstance(response, SyncResponse):
                await asyncio.sleep(0.05)
                continue
            if self.client.olm is not None:
                await self._keys()
            async with self._changed:
                for room_id, info in response.rooms.join.items():
                    for event in info.timeline.events:
                        self.seen.append(Seen(len(self.seen), room_id, event))
                    for event in info.ephemeral:
                        self.ephemeral.append(Seen(len(self.ephemeral), room_id, event))
                for room_id, info in response.rooms.leave.items():
                    for event in info.timeline.events:
                        self.seen.append(Seen(len(self.seen), room_id, event))
                self._changed.notify_all()

    async def _keys(self) -> None:
        client = self.client
        if client.should_upload_keys:
            await client.keys_upload()
        if client.should_query_keys:
            await client.keys_query()
        if client.should_claim_keys:
            await client.keys_claim(client.get_users_for_key_claiming())
        await client.send_to_device_messages()

    def mark(self) -> int:
        """Where the events seen so far end: `wait_for(after=mark)` looks only at what comes later."""
        return len(self.seen)

    async def wait_until(self, ready: Callable[[list[Seen]], Any], *, after: int = 0, within: float = WAIT_S) -> Any:
        """Waits until `ready(events seen after the mark)` returns something truthy, and returns that."""
        async def found() -> Any:
            async with self._changed:
                while not (result := ready(self.seen[after:])):
                    await self._changed.wait()
                return result

        try:
            return await asyncio.wait_for(found(), within)
        except TimeoutError:
            recent = [f"{s.event.sender}: {getattr(s.event, 'body', type(s.event).__name__)}" for s in self.seen[-8:]]
            raise AssertionError(f"{self.user_id} did not see the expected event; last ones: {recent}") from None

    async def wait_ephemeral(self, match: Callable[[Seen], bool], *, within: float = WAIT_S) -> Seen:
        """The first typing notice or receipt that `match`es."""
        async def found() -> Seen:
            async with self._changed:
                while (seen := next((s for s in self.ephemeral if match(s)), None)) is None:
                    await self._changed.wait()
                return seen

        try:
            return await asyncio.wait_for(found(), within)
        except TimeoutError:
            raise AssertionError(f"{self.user_id} did not see the expected typing notice or receipt") from None

    async def wait_for(self, match: Callable[[Seen], bool], *, after: int = 0, within: float = WAIT_S) -> Seen:
        """The first event after the mark that `match`es."""
        seen: Seen = await self.wait_until(lambda events: next((s for s in events if match(s)), None), after=after,
                                           within=within)
        return seen

    # ---- acting ----------------------------------------------------------------------------------------
    async def open_direct_room(self, bot: str, *, encrypted: bool = False) -> str:
        state = [{"type": "m.room.encryption", "state_key": "", "content": {"algorithm": "m.megolm.v1.aes-sha2"}}]
        created = await self.client.room_create(is_direct=True, invite=[bot], initial_state=state if encrypted else ())
        assert isinstance(created, RoomCreateResponse), created
        return created.room_id

    async def send(self, room_id: str, text: str, *, reply_to: str | None = None) -> str:
        content: dict[str, Any] = {"msgtype": "m.text", "body": text}
        if reply_to is not None:
            content["m.relates_to"] = {"m.in_reply_to": {"event_id": reply_to}}
        response = await self.client.room_send(room_id, "m.room.message", content,
                                               tx_id=f"t{next(_txn)}", ignore_unverified_devices=True)
        assert isinstance(response, RoomSendResponse), response
        return response.event_id

    async def edit(self, room_id: str, event_id: str, text: str) -> str:
        """Edits the earlier message `event_id` to `text` (as Element does: `m.replace` with the new content)."""
        content = {"msgtype": "m.text", "body": f"* {text}", "m.new_content": {"msgtype": "m.text", "body": text},
                   "m.relates_to": {"rel_type": "m.replace", "event_id": event_id}}
        response = await self.client.room_send(room_id, "m.room.message", content, tx_id=f"t{next(_txn)}")
        assert isinstance(response, RoomSendResponse), response
        return response.event_id

    async def react(self, room_id: str, event_id: str, key: str) -> str:
        content = {"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}}
        response = await self.client.room_send(room_id, "m.reaction", content, tx_id=f"t{next(_txn)}")
        assert isinstance(response, RoomSendResponse), response
        return response.event_id

    # ---- what the bot did ------------------------------------------------------------------------------
    async def message_from(self, bot: str, room_id: str, *, after: int, contains: str = "") -> RoomMessageText:
        """The next message (not an edit) from `bot` in `room_id` containing `contains`."""
        seen = await self.wait_for(lambda s: s.room_id == room_id and isinstance(s.event, RoomMessageText)
                                   and s.event.sender == bot and not is_edit(s.event) and contains in s.event.body,
                                   after=after)
        return seen.event  # type: ignore[no-any-return]

    async def say(self, bot: str, room_id: str, text: str, *, contains: str = "") -> RoomMessageText:
        """Send `text` and return the bot's next message (containing `contains`)."""
        mark = self.mark()
        await self.send(room_id, text)
        return await self.message_from(bot, room_id, after=mark, contains=contains)

    async def reactions_on(self, bot: str, event_id: str, count: int, *, after: int = 0) -> list[str]:
        """The first `count` reaction keys `bot` put on `event_id`, in order."""
        def keys(events: list[Seen]) -> list[str] | None:
            found = [s.event.key for s in events if isinstance(s.event, ReactionEvent) and s.event.sender == bot
                     and s.event.reacts_to == event_id]
            return found[:count] if len(found) >= count else None

        result: list[str] = await self.wait_until(keys, after=after)
        return result

    async def edit_of(self, bot: str, event_id: str, *, after: int = 0) -> str:
        """The new text of `bot`'s edit of `event_id`."""
        seen = await self.wait_for(lambda s: isinstance(s.event, RoomMessageText) and s.event.sender == bot
                                   and edited_event(s.event) == event_id, after=after)
        return str(seen.event.source["content"]["m.new_content"]["body"])

    async def left(self, who: str, room_id: str, *, after: int = 0) -> None:
        await self.wait_for(lambda s: s.room_id == room_id and isinstance(s.event, RoomMemberEvent)
                            and s.event.state_key == who and s.event.membership == "leave", after=after)

    def messages_from(self, bot: str, room_id: str, *, after: int = 0) -> list[RoomMessageText]:
        return [s.event for s in self.seen[after:] if s.room_id == room_id and isinstance(s.event, RoomMessageText)
                and s.event.sender == bot and not is_edit(s.event)]


def edited_event(event: RoomMessageText) -> str | None:
    relates = event.source.get("content", {}).get("m.relates_to", {})
    return relates.get("event_id") if relates.get("rel_type") == "m.replace" else None


def is_edit(event: RoomMessageText) -> bool:
    return edited_event(event) is not None


def numbered(event: RoomMessageText) -> dict[str, int]:
    """The choices under a bot message: label -> its number."""
    choices: dict[str, int] = {}
    for line in event.body.rsplit("\n\n", 1)[-1].split("\n"):
        number, dot, label = line.partition(". ")
        if dot and number.isdigit():
            choices[label] = int(number)
    return choices
