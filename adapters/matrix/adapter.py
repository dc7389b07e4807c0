"""The Matrix adapter: logs in, syncs, turns room events into `Inbound` for the dialog and starts the delivery
of the outbox. Only I/O and the mapping of Matrix onto the dialog live here:

- an invitation is accepted when it comes from one person (an invitation is that person's "start", so
  the dialog gets `/start` from them); a room with several people gets a polite refusal and is left,
  unless MATRIX_ALLOW_GROUP_ROOMS;
- text (`!cmd` and `/cmd` are commands) goes to the dialog as typed; a bare number answers the person's message
  with choices it replies to, or else their latest one with open choices; one of the bot's own reactions on such a
  message picks a choice (see choices.py), once per question (`bot.presses`); a shared location (`m.location`) is a
  location; anything else (pictures, files) reaches the dialog without text;
- without MATRIX_E2E, an encrypted room is told once (ever: noted in the database) that the bot cannot read
  it, and nothing else;
- group rooms joined while MATRIX_ALLOW_GROUP_ROOMS was on are left at the next start without it;
- an edit (`m.replace`) is not applied: the dialog says how to fix the entry;
- the bot's own events and the history before its very first sync are ignored; the sync token is saved
  after each sync, so a restart neither loses nor repeats messages.

Events of one room are handled in order, one at a time, in the room's lanes (`bot.ordering`): the dialog may let
some inbound (a decision on a proposal, say) pass the queue while a long turn runs (`Dialog.bypasses_queue`)."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import uuid
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

import aiohttp
from nio import (
    AsyncClient,
    AsyncClientConfig,
    DownloadError,
    InviteMemberEvent,
    JoinError,
    MegolmEvent,
    ReactionEvent,
    RoomGetStateResponse,
    RoomMemberEvent,
    RoomMessageAudio,
    RoomMessageEmote,
    RoomMessageImage,
    RoomMessageMedia,
    RoomMessageText,
    RoomMessageUnknown,
    RoomTypingResponse,
    SyncError,
    SyncResponse,
)

from adapters.matrix.choices import choice_for_key, choice_for_number
from adapters.matrix.media import media_of
from adapters.matrix.outbound import MatrixDelivery
from adapters.matrix.render import message_content, parse_geo_uri, strip_reply_fallback
from adapters.matrix.session import MatrixLoginError, SavedSession, SessionFile, log_in
from bot.access import Sender, Tell
from bot.delivery.choices import Choice, latest_choices, reacted_choices
from bot.delivery.stream import LiveAnswer, Pace
from bot.dialog import Dialog
from bot.health import Liveness
from bot.inbound import Inbound
from bot.ordering import ChatLanes, lane_of
from bot.presses import screen_press
from bot.rooms import PLATFORM, language_of, note_unreadable, room_left, unreadable_rooms, wrote_in_room
from brain.core import Brain
from brain.i18n import Renderer, tr

if TYPE_CHECKING:
    from bot.settings import Settings

log = logging.getLogger(__name__)

# Only what the bot reads: room timelines and state. No presence, typing or account data.
SYNC_FILTER: dict[str, Any] = {
    "presence": {"not_types": ["*"]},
    "account_data": {"not_types": ["*"]},
    "room": {
        "ephemeral": {"not_types": ["*"]},
        "account_data": {"not_types": ["*"]},
        "timeline": {"limit": 50},  # after a long pause, the last 50 events of a room are enough
    },
}
MAX_SYNC_BACKOFF_S = 60.0
SHUTDOWN_GRACE_S = 10.0
STREAM_PACE = Pace()  # an answer is shown after about 1 s and edited at most once a second
TYPING_AFTER_S = 0.3
TYPING_TIMEOUT_MS = 30_000  # how long a typing notice lasts unless renewed or ended
TYPING_RENEW_S = 25.0


@dataclass(frozen=True)
class MatrixConfig:
    homeserver: str
    user_id: str
    data_dir: Path  # device, login and sync token: <COMPANION_DATA_DIR>/matrix
    password: str | None = None
    access_token: str | None = None
    allow_group_rooms: bool = False
    e2e: bool = False
    default_locale: str = "en"
    default_timezone: str = "UTC"
    other_platforms: tuple[str, ...] = ()  # other running platforms that deliver reminders too
    sync_timeout_ms: int = 30_000
    poll_seconds: float = 2.0
    concurrency: int = 16  # events handled at once, over all rooms
    stream: Pace | None = STREAM_PACE  # how a companion answer is shown while it is written; None: not at all
    typing_after: float = TYPING_AFTER_S  # a message handled faster than this shows no typing notice

    @classmethod
    def from_settings(cls, settings: Settings) -> MatrixConfig:
        if settings.matrix_homeserver is None or settings.matrix_user_id is None:
            raise MatrixLoginError("MATRIX_HOMESERVER and MATRIX_USER_ID are not set")
        return cls(
            homeserver=settings.matrix_homeserver,
            user_id=settings.matrix_user_id,
            data_dir=settings.data_dir / "matrix",
            password=settings.matrix_password.get_secret_value() if settings.matrix_password else None,
            access_token=settings.matrix_access_token.get_secret_value() if settings.matrix_access_token else None,
            allow_group_rooms=settings.matrix_allow_group_rooms,
            e2e=settings.matrix_e2e,
            default_locale=settings.default_locale,
            default_timezone=settings.default_timezone,
            other_platforms=("telegram",) if settings.telegram_enabled else (),
        )


def build_client(config: MatrixConfig) -> AsyncClient:
    store = config.data_dir / "store"
    if config.e2e:
        from nio.crypto import ENCRYPTION_ENABLED

        if not ENCRYPTION_ENABLED:
            raise MatrixLoginError("MATRIX_E2E needs the encryption extra of matrix-nio: "
                                   "pip install 'matrix-nio[e2e]'")
        store.mkdir(parents=True, exist_ok=True)
    client_config = AsyncClientConfig(
        max_limit_exceeded=0,  # a 429 comes back to us at once: the delivery backs off as the server asks
        max_timeouts=2,
        request_timeout=30,
        encryption_enabled=config.e2e,
        store_sync_tokens=config.e2e,
    )
    return AsyncClient(config.homeserver, config.user_id, store_path=str(store) if config.e2e else "",
                       config=client_config)


class MatrixAdapter:
    """The Matrix bot account as a chat adapter: `start` runs it in the background until `stop`; `run` is the same
    in the foreground."""

    def __init__(self, brain: Brain, dialog: Dialog, config: MatrixConfig) -> None:
        self.brain = brain
        self.dialog = dialog
        self.config = config
        self.client = build_client(config)
        self.delivery = MatrixDelivery(brain, self.client, other_platforms=config.other_platforms,
                                       poll_seconds=config.poll_seconds)
        self.session_file = SessionFile(config.data_dir / "session.json")
        self.session = SavedSession(config.homeserver, config.user_id)
        self.ready = asyncio.Event()  # set after the first sync: from then on, the bot answers
        self.liveness = Liveness("matrix")  # connected after the first sync; each sync answered is a sign of life
        self.lanes = ChatLanes(config.concurrency)
        self._handling: set[asyncio.Task[None]] = set()
        self._leaving: set[str] = set()
        self._told_encrypted: set[str] = set()  # rooms told that they cannot be read (`bot.rooms`), read at start
        self._stop = asyncio.Event()
        self._first_try = asyncio.Event()  # the first login worked, or the homeserver could not be reached
        self._task: asyncio.Task[None] | None = None

    @property
    def me(self) -> str:
        return self.config.user_id

    # ---- life cycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Runs the bot in the background (it keeps trying while the homeserver cannot be reached). Returns once
        the first login was tried; a refused password or token raises MatrixLoginError here, so `companion run`
        ends at once instead of running on without Matrix."""
        self._stop.clear()
        self._first_try.clear()
        self._task = asyncio.create_task(self.run(self._stop), name="matrix")
        tried = asyncio.create_task(self._first_try.wait())
        await asyncio.wait({self._task, tried}, return_when=asyncio.FIRST_COMPLETED)
        tried.cancel()
        if self._task.done():
            task, self._task = self._task, None
            task.result()  # the login's error, if it failed

    async def stop(self) -> None:
        self._stop.set()
        if self._task is not None:
            await self._task

    def wake_sender(self) -> None:
        """The delivery also looks every `poll_seconds`; waking it sends new pushes at once."""
        self.delivery.wake()

    async def run(self, stop: asyncio.Event) -> None:
        """Log in, catch up, and serve until `stop` is set."""
        delivery: asyncio.Task[None] | None = None
        halt = asyncio.Event()  # the delivery's background passes end with the sync, however that ends
        try:
            if not await self._start_when_reachable(stop):
                return
            delivery = asyncio.create_task(self.delivery.run(halt), name="matrix-delivery")
            await self._sync_forever(stop)
        finally:
            self.liveness.disconnected()
            halt.set()
            if delivery is not None:
                await asyncio.gather(delivery, return_exceptions=True)
            await self.shutdown()

    async def _start_when_reachable(self, stop: asyncio.Event) -> bool:
        """`connect`, again and again while the homeserver cannot be reached (a wrong password or token
        still ends the bot at once). False when stopped before it worked."""
        failures = 0
        while not stop.is_set():
            try:
                await self.connect()
                self._first_try.set()
                return True
            except (OSError, TimeoutError, aiohttp.ClientError) as error:
                self._first_try.set()
                failures += 1
                delay = min(MAX_SYNC_BACKOFF_S, 2.0 ** (failures - 1))
                log.warning("Matrix: %s is not reachable (%s); trying again in %.0f s", self.config.homeserver,
                            error or type(error).__name__, delay)
                try:
                    await asyncio.wait_for(stop.wait(), delay)
                except TimeoutError:
                    pass
        return False

    async def connect(self) -> None:
        """Logs in and catches up with a first sync; from then on the bot answers (`ready`)."""
        self.config.data_dir.mkdir(parents=True, exist_ok=True)
        saved = self.session_file.load(self.config.homeserver, self.config.user_id)
        self.session = await log_in(self.client, saved, password=self.config.password,
                                    access_token=self.config.access_token)
        self.session_file.save(self.session)
        log.info("Matrix: logged in as %s (device %s)", self.me, self.session.device_id)
        if not self.config.e2e:  # read before any event of theirs; with encryption on, the bot reads them now
            self._told_encrypted = await unreadable_rooms(self.brain)
        response = None
        if self.session.next_batch:
            response = await self._sync_once(since=self.session.next_batch)
            if response is None:
                log.warning("Matrix: the saved sync token was refused; starting from now")
        if response is not None:
            await self._leave_group_rooms()
            await self._process(response)
        else:
            # The very first sync: what happened before is history, not to be answered. Invitations
            # waiting for the bot are accepted, though (they were meant for it).
            response = await self._sync_once(since=None)
            if response is None:
                raise MatrixLoginError(f"{self.config.homeserver} refused the first sync of {self.me}")
            await self._leave_group_rooms()
            for room_id, invite in response.rooms.invite.items():
                await self._on_invite(room_id, invite.invite_state)
        self._save_token(response.next_batch)
        self.ready.set()
        self.liveness.connected()
        self.delivery.wake()

    async def shutdown(self) -> None:
        """Let every room finish what it is doing (bounded), send the last replies, close the client."""
        if self._handling:
            _, late = await asyncio.wait(list(self._handling), timeout=SHUTDOWN_GRACE_S)
            for task in late:
                task.cancel()
            await asyncio.gather(*late, return_exceptions=True)
        if self.ready.is_set():
            await self.delivery.pass_once()
        await self.client.close()

    def _save_token(self, next_batch: str) -> None:
        self.session = replace(self.session, next_batch=next_batch)
        self.session_file.save(self.session)

    # ---- sync ------------------------------------------------------------------------------------------
    async def _sync_once(self, *, since: str | None) -> SyncResponse | None:
        """A sync with the full room state (member lists for the room checks), not waiting for news. None
        when the homeserver refuses it (e.g. a sync token it no longer knows); ConnectionError when it is
        busy or failing (429, 5xx), so the start is tried again later."""
        response = await self.client.sync(timeout=0, sync_filter=SYNC_FILTER, since=since, full_state=True)
        if not isinstance(response, SyncResponse):
            status = getattr(getattr(response, "transport_response", None), "status", None)
            message = f"{getattr(response, 'status_code', '')} {getattr(response, 'message', response)}"
            if getattr(response, "status_code", None) == "M_LIMIT_EXCEEDED" or status is None or status >= 429:
                raise ConnectionError(message)
            log.warning("Matrix sync refused: %s", message)
            return None
        await self._keys()
        return response

    async def _sync_forever(self, stop: asyncio.Event) -> None:
        """Long-poll syncs until `stop`. Only the waiting is interrupted by a stop, never the handling of a
        sync, so a sync's events are always dispatched before its token is saved."""
        failures = 0
        stopping = asyncio.create_task(stop.wait())
        try:
            while not stop.is_set():
                polling = asyncio.create_task(self.client.sync(
                    timeout=self.config.sync_timeout_ms, sync_filter=SYNC_FILTER, since=self.session.next_batch))
                await asyncio.wait({polling, stopping}, return_when=asyncio.FIRST_COMPLETED)
                if not polling.done():
                    polling.cancel()
                    await asyncio.gather(polling, return_exceptions=True)
                    return
                try:
                    response = polling.result()
                    if isinstance(response, SyncError):
                        raise ConnectionError(f"{response.status_code} {response.message}")
                    self.liveness.progressed()
                    await self._keys()
                    await self._process(response)
                    self._save_token(response.next_batch)
                    failures = 0
                    continue
                except (OSError, TimeoutError, aiohttp.ClientError, ConnectionError) as error:
                    failures += 1
                    log.warning("Matrix sync failed (%s); retrying", error)
                except Exception:
                    failures += 1
                    log.exception("Matrix: handling a sync failed")
                # A pause that grows with each failure in a row, cut short by a stop.
                await asyncio.wait({stopping}, timeout=min(MAX_SYNC_BACKOFF_S, 2.0 ** (failures - 1)))
        finally:
            stopping.cancel()

    async def _keys(self) -> None:
        """End-to-end encryption upkeep, as nio's sync_forever does it: our keys up, others' keys in."""
        if not self.config.e2e:
            return
        client = self.client
        if client.should_upload_keys:
            await client.keys_upload()
        if client.should_query_keys:
            await client.keys_query()
        if client.should_claim_keys:
            await client.keys_claim(client.get_users_for_key_claiming())
        await client.send_to_device_messages()

    async def _process(self, response: SyncResponse) -> None:
        for room_id, invite in response.rooms.invite.items():
            await self._on_invite(room_id, invite.invite_state)
        for room_id, info in response.rooms.join.items():
            for event in info.timeline.events:
                try:
                    await self._on_event(room_id, event)
                except Exception:
                    log.exception("Matrix: event %s in %s failed", getattr(event, "event_id", "?"), room_id)
        for room_id in response.rooms.leave:
            await room_left(self.brain, room_id)

    # ---- rooms -----------------------------------------------------------------------------------------
    async def _on_invite(self, room_id: str, invite_state: list[Any]) -> None:
        inviter = next((e.sender for e in invite_state if isinstance(e, InviteMemberEvent)
                        and e.state_key == self.me and e.membership == "invite"), None)
        # Who may talk is the dialog's to decide (`bot.access`); an invitation from someone who could not even use
        # an invite code here is declined without a word.
        if inviter is None or not await self.dialog.access.reachable(Sender(PLATFORM, inviter)):
            log.info("Matrix: declining the invitation to %s from %s", room_id, inviter)
            await self.client.room_leave(room_id)
            return
        joined = await self.client.join(room_id)
        if isinstance(joined, JoinError):
            log.warning("Matrix: could not join %s: %s", room_id, joined.message)
            return
        self._leaving.discard(room_id)  # invited back into a room it once refused
        persons, encrypted = await self._room_state(room_id)
        if len(persons) > 1 and not self.config.allow_group_rooms:
            await self._refuse(room_id, inviter)
            return
        if encrypted and not self.config.e2e:
            await self._cannot_decrypt(room_id, inviter)
            return  # nothing else is said in a room the bot cannot read (no greeting)
        # An invitation is the person's way of starting the chat, like Telegram's Start button.
        inbound = Inbound(platform=PLATFORM, platform_user_id=inviter, chat_id=room_id,
                          message_id=f"invite:{room_id}", text="/start")
        self._dispatch(room_id, inbound)

    async def _leave_group_rooms(self) -> None:
        """At start, without MATRIX_ALLOW_GROUP_ROOMS: group rooms joined while they were allowed are left, with
        the notice, before anything said there is read."""
        if self.config.allow_group_rooms:
            return
        for room_id in list(self.client.rooms):
            if not self._is_direct(room_id):
                await self._refuse(room_id, None)

    async def _room_state(self, room_id: str) -> tuple[set[str], bool]:
        """Everyone but the bot who is in the room or invited to it, and whether the room is encrypted;
        asked from the server (right after a join, before a sync has brought the room's state)."""
        state = await self.client.room_get_state(room_id)
        if not isinstance(state, RoomGetStateResponse):
            room = self.client.rooms.get(room_id)
            return set(self._persons(room_id)), bool(room is not None and room.encrypted)
        persons = {e["state_key"] for e in state.events
                   if e.get("type") == "m.room.member" and e.get("state_key") != self.me
                   and e.get("content", {}).get("membership") in ("join", "invite")}
        return persons, any(e.get("type") == "m.room.encryption" for e in state.events)

    def _persons(self, room_id: str) -> list[str]:
        room = self.client.rooms.get(room_id)
        return [] if room is None else [u for u in room.users if u != self.me]

    def _is_direct(self, room_id: str) -> bool:
        return len(self._persons(room_id)) <= 1

    async def _refuse(self, room_id: str, inviter: str | None) -> None:
        """A polite word in the inviter's language, then leave."""
        if room_id in self._leaving:
            return
        self._leaving.add(room_id)
        text = (await self._renderer(inviter))(tr(
            "Hello! I'm a personal companion and talk with one person at a time, so I'm leaving this room. "
            "Invite me to a direct chat instead."))
        try:
            await self.delivery.send(room_id, "m.room.message", message_content(text), f"companion-refuse-{room_id}")
        except Exception as error:
            log.info("Matrix: could not say goodbye in %s: %s", room_id, error)
        await self.client.room_leave(room_id)
        await room_left(self.brain, room_id)
        log.info("Matrix: left %s (more than one person in it)", room_id)

    async def _cannot_decrypt(self, room_id: str, person: str) -> None:
        """Without MATRIX_E2E an encrypted room is unreadable: say so once instead of staying silent, and nothing
        else there, also after a restart (the room is noted in the database first)."""
        if room_id in self._told_encrypted:
            return
        self._told_encrypted.add(room_id)
        if not await note_unreadable(self.brain, room_id):
            return
        render = await self._renderer(person)
        text = render(tr("This chat is encrypted, and I can only read unencrypted chats. Please start a new "
                         "direct chat with me and turn encryption off for it."))
        try:
            await self.delivery.send(room_id, "m.room.message", message_content(text),
                                     f"companion-unencrypted-{room_id}")
        except Exception as error:
            log.info("Matrix: could not explain encryption in %s: %s", room_id, error)

    async def _renderer(self, person: str | None) -> Renderer:
        """Texts for `person` in their language, or in the default one for someone the bot does not know."""
        locale, zone = self.config.default_locale, self.config.default_timezone
        known = await language_of(self.brain, person) if person is not None else None
        if known is not None:
            locale, zone = known
        return Renderer(locale, zone)

    # ---- events ----------------------------------------------------------------------------------------
    async def _on_event(self, room_id: str, event: Any) -> None:
        if getattr(event, "sender", None) == self.me or room_id in self._leaving or room_id in self._told_encrypted:
            return  # a room told that the bot cannot read it hears nothing more from it
        if isinstance(event, RoomMemberEvent):
            await self._on_member(room_id, event)
            return
        inbound: Inbound | None = None
        if isinstance(event, ReactionEvent):
            inbound = await self._reaction(room_id, event)
        elif isinstance(event, RoomMessageText | RoomMessageEmote):
            relates = event.source.get("content", {}).get("m.relates_to", {})
            if relates.get("rel_type") == "m.replace":
                # An edit of an earlier message, which was acted on as sent: the dialog says how to fix it.
                inbound = replace(self._inbound(room_id, event.sender, event.event_id, text=event.body), edited=True)
            else:
                reply_to = relates.get("m.in_reply_to", {}).get("event_id")
                inbound = await self._text(room_id, event.sender, event.event_id, strip_reply_fallback(event.body),
                                           reply_to=reply_to if isinstance(reply_to, str) else None)
        elif isinstance(event, RoomMessageUnknown) and event.msgtype == "m.location":
            inbound = self._inbound(room_id, event.sender, event.event_id,
                                    location=parse_geo_uri(str(event.content.get("geo_uri", ""))))
        elif isinstance(event, RoomMessageAudio | RoomMessageImage):  # a voice note or a photo
            inbound = replace(self._inbound(room_id, event.sender, event.event_id),
                              media=media_of(event, self._download))
        elif isinstance(event, RoomMessageMedia | RoomMessageUnknown):
            inbound = self._inbound(room_id, event.sender, event.event_id)  # "I can only read text" from the dialog
        elif isinstance(event, MegolmEvent):
            if not self.config.e2e:
                await self._cannot_decrypt(room_id, event.sender)
                return
            log.warning("Matrix: could not decrypt %s in %s (session %s)", event.event_id, room_id, event.session_id)
            try:
                await self.client.request_room_key(event)
            except Exception as error:
                log.info("Matrix: key request failed: %s", error)
        if inbound is not None:
            self._dispatch(room_id, inbound)

    async def _on_member(self, room_id: str, event: RoomMemberEvent) -> None:
        if event.state_key == self.me:
            return
        persons = self._persons(room_id)
        if event.membership in ("join", "invite") and len(persons) > 1 and not self.config.allow_group_rooms:
            await self._refuse(room_id, event.sender)
        elif event.membership in ("leave", "ban") and not persons:
            await self.client.room_leave(room_id)  # the person left: nobody to talk to here
            await room_left(self.brain, room_id)

    def _inbound(self, room_id: str, sender: str, event_id: str, *, text: str | None = None,
                 action: str | None = None, location: tuple[float, float] | None = None) -> Inbound:
        room = self.client.rooms.get(room_id)
        name = room.user_name(sender) if room is not None else None
        return Inbound(platform=PLATFORM, platform_user_id=sender, chat_id=room_id, message_id=event_id,
                       text=text, action=action, display_name=name, location=location)

    async def _download(self, mxc: str) -> bytes:
        """The content of an mxc:// URI from the homeserver's media repository, in memory."""
        response = await self.client.download(mxc=mxc)
        if isinstance(response, DownloadError):
            raise RuntimeError(f"download of {mxc} failed: {response.message}")
        body = response.body
        if not isinstance(body, bytes):
            raise RuntimeError(f"download of {mxc} was not kept in memory")
        return body

    async def _text(self, room_id: str, sender: str, event_id: str, text: str, *,
                    reply_to: str | None = None) -> Inbound | None:
        """A typed number answers the message with choices it replies to, or without a reply the person's latest
        message whose choices are open; anything else is text."""
        if len(text.strip()) <= 4:
            if reply_to is not None:
                choices = await reacted_choices(self.brain, sender, room_id, reply_to)
            else:
                choices = await latest_choices(self.brain, sender, room_id)
            choice = choice_for_number(choices, text) if choices is not None else None
            if choices is not None and choice is not None:
                return await self._picked(room_id, sender, event_id, choice, choices)
        return self._inbound(room_id, sender, event_id, text=text)

    async def _reaction(self, room_id: str, event: ReactionEvent) -> Inbound | None:
        """One of the bot's own reactions on the sender's message with choices picks one; any other reaction, or a
        reaction on someone else's message, is ignored."""
        choices = await reacted_choices(self.brain, event.sender, room_id, event.reacts_to)
        if choices is None:
            return None
        choice = choice_for_key(choices, event.key)
        if choice is None:
            return None
        return await self._picked(room_id, event.sender, event.event_id, choice, choices)

    async def _picked(self, room_id: str, sender: str, event_id: str, choice: Choice,
                      choices: list[Choice]) -> Inbound | None:
        """The picked choice for the dialog, or None when it cannot act (`bot.presses`: a used, expired or settled
        question), which is said in a short note and changes nothing."""
        inbound = self._inbound(room_id, sender, event_id, action=choice.token)
        check = await screen_press(self.brain, inbound, [c.token for c in choices])
        if check.text is None:
            return inbound
        render = Renderer(check.locale or self.config.default_locale, self.config.default_timezone)
        try:
            await self.delivery.send(room_id, "m.room.message", message_content(render(check.text)),
                                     f"companion-refused-{event_id}")
        except Exception as error:
            log.info("Matrix: could not answer %s in %s: %s", event_id, room_id, error)
        return None

    # ---- handing over to the dialog --------------------------------------------------------------------
    def _dispatch(self, room_id: str, inbound: Inbound) -> None:
        """Runs the update in its lane of the room: after the room's earlier ones, or beside a long turn when the
        dialog must take it at once (e.g. a button press while a turn runs)."""
        direct = self._is_direct(room_id)
        task = asyncio.create_task(self.lanes.run(lane_of(self.dialog, inbound), self._turn(room_id, inbound, direct)))
        self._handling.add(task)
        task.add_done_callback(self._handling.discard)

    def _teller(self, room_id: str) -> Tell:
        """Sends a text straight to the room (for someone without a person: no outbox)."""
        async def tell(text: str) -> None:
            await self.delivery.send(room_id, "m.room.message", message_content(text),
                                     f"companion-access-{uuid.uuid4().hex}")

        return tell

    async def _turn(self, room_id: str, inbound: Inbound, direct: bool) -> None:
        """The dialog's answer to one event: a typing notice while it is worked on (a written message), the answer
        shown while the model writes it (free text), and a read receipt once it is handled."""
        try:
            async with self._typing(room_id, inbound):
                await self.dialog.handle(inbound, tell=self._teller(room_id), live=self._live(room_id, inbound))
            # Registered after the turn: a /link in it may have moved this Matrix id to another person.
            await wrote_in_room(self.brain, inbound.platform_user_id, room_id, direct=direct)
        except Exception:
            log.exception("Matrix: handling %s in %s failed", inbound.message_id, room_id)
        finally:
            self.delivery.wake()
        await self._read(room_id, inbound.message_id)

    def _live(self, room_id: str, inbound: Inbound) -> LiveAnswer | None:
        editing = self.delivery.sender.editing
        if self.config.stream is None or editing is None or self.brain.companion is None \
                or inbound.text is None or inbound.is_command:
            return None
        return LiveAnswer(editing, room_id, pace=self.config.stream)

    @contextlib.asynccontextmanager
    async def _typing(self, room_id: str, inbound: Inbound) -> AsyncIterator[None]:
        """A typing notice in the room while a written message is worked on: from `typing_after` on, renewed
        before it lapses, ended when the work is done (only if it was shown)."""
        if inbound.text is None:  # a reaction or a location: answered at once
            yield
            return
        done = asyncio.Event()
        shown = False

        async def keep_typing() -> None:
            nonlocal shown
            delay = self.config.typing_after
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(done.wait(), timeout=delay)
                if done.is_set():
                    return
                shown = await self._notice(room_id, typing=True) or shown
                delay = TYPING_RENEW_S

        typing = asyncio.create_task(keep_typing())
        try:
            yield
        finally:
            done.set()
            await asyncio.gather(typing, return_exceptions=True)
            if shown:
                await self._notice(room_id, typing=False)

    async def _notice(self, room_id: str, *, typing: bool) -> bool:
        try:
            response = await self.client.room_typing(room_id, typing_state=typing, timeout=TYPING_TIMEOUT_MS)
        except (OSError, TimeoutError, aiohttp.ClientError) as error:
            log.debug("Matrix: typing notice in %s failed: %s", room_id, error)
            return False
        return isinstance(response, RoomTypingResponse)

    async def _read(self, room_id: str, event_id: str) -> None:
        """A read receipt on the handled event."""
        try:
            await self.client.update_receipt_marker(room_id, event_id)
        except (OSError, TimeoutError, aiohttp.ClientError) as error:
            log.debug("Matrix: read receipt in %s failed: %s", room_id, error)
