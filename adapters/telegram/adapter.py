"""The Telegram adapter (python-telegram-bot 22). Every update, however it arrives, goes through one handler,
`TelegramAdapter.handle_update`: it becomes an `Inbound`, is claimed once (`bot.updates`), is answered by the
dialog (which writes the outbox), and the chat's pending rows are sent (`bot.delivery`, through
`outbound.TelegramTransport`). Around it are thin transports:

- long polling: PTB's updater fetches the updates, and its update processor runs each in its chat's lane
  (`ordering`, `bot.ordering`);
- a webhook (when a public URL is configured): the HTTP endpoint (`webhook`) stores each update in the inbox in
  PostgreSQL (`bot.inbox`), whose workers keep each chat's order across any number of processes behind one URL;
- several processes with long polling (TELEGRAM_PROCESSES, `scaleout`): the poller passes each update to the
  process that owns its chat, which puts it into its own update queue as if it had polled it.

Per update: claim its id (in the transaction that looks up the sender; a replay stops there), show "typing"
while free text is handled, let the dialog answer (a companion answer is shown while the model writes it and
edited as it grows, `bot.delivery.stream`), then send this chat's pending rows. A button press is
answered at once (the spinner stops), handled in a lane of its own so it never waits behind a long turn of the
same chat, and a pressed message whose buttons cannot act any more loses its keyboard. A press that cannot act
(another account's, a used, expired or settled one: `bot.presses`) is answered in the callback answer only."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import uuid
from collections.abc import AsyncIterator, Coroutine
from dataclasses import dataclass, replace
from types import TracebackType
from typing import Any

from telegram import BotCommand, BotCommandScopeAllPrivateChats, CallbackQuery, ChatMemberUpdated, Update
from telegram.constants import ChatAction, ChatMemberStatus, ChatType
from telegram.error import InvalidToken, TelegramError
from telegram.ext import Application, ContextTypes, TypeHandler

from adapters.telegram.config import TelegramConfig, Webhook
from adapters.telegram.inbound import Press, group_message, is_private, message_inbound, press_inbound
from adapters.telegram.ordering import ChatOrderedUpdates
from adapters.telegram.outbound import telegram_sender
from adapters.telegram.request import AiohttpRequest
from adapters.telegram.scaleout import RoutingQueue
from adapters.telegram.webhook import WebhookEndpoint
from bot.access import NotAdmitted, Tell
from bot.commands.table import command_menu
from bot.delivery.sender import OutboxSender
from bot.delivery.stream import LiveAnswer
from bot.dialog import Dialog
from bot.groups import GROUP_NOTICE, IGNORE, LEAVE, READ, GroupMessage, group_verdict, private_pointer
from bot.health import Liveness
from bot.inbound import Inbound
from bot.inbox import Inbox, Posted
from bot.ordering import lane_kind
from bot.presses import screen_press
from bot.settings import ConfigurationError, masked
from bot.updates import DATABASE_DOWN, TokenState, UpdateClaim, forget_old_updates
from brain.core import Brain
from brain.i18n import DEFAULT_LOCALE, SUPPORTED_LOCALES, Renderer, normalize_locale, tr

log = logging.getLogger(__name__)

# Channel posts and the bot's own membership changes are taken only to leave where it does not belong (`bot.groups`).
# An edited message is answered with how to fix the entry (edits are not applied).
ALLOWED_UPDATES = [Update.MESSAGE, Update.EDITED_MESSAGE, Update.CALLBACK_QUERY, Update.CHANNEL_POST,
                   Update.MY_CHAT_MEMBER]
TYPING_REPEAT_S = 4.5  # Telegram shows "typing" for 5 s per chat action
PRUNE_EVERY_S = 3600.0
WEBHOOK_CHECK_EVERY_S = 20.0  # a few times within the health window (bot.health)
MAX_COMMAND_DESCRIPTION = 256  # Telegram's limit for a command's description in the menu


@dataclass(frozen=True)
class Incoming:
    """An update as this adapter acts on it: the dialog's `inbound` (in a group it is read, moved to the sender's
    private chat), the press it came from, and for a chat with more than one person the group policy's `verdict`
    and the group's chat id."""

    inbound: Inbound | None
    press: Press | None = None
    verdict: str | None = None
    group: str | None = None
    language_code: str | None = None


class TelegramAdapter:
    """Serves one Telegram bot as `config` describes it (see the module docstring)."""

    def __init__(self, brain: Brain, dialog: Dialog, config: TelegramConfig) -> None:
        self.brain = brain
        self.dialog = dialog
        self.config = config
        self.webhook = config.webhook
        self._concurrency = config.concurrency  # updates handled at once in this process
        self._max_rate = config.max_rate  # this process's part of Telegram's overall send rate
        self.processor = ChatOrderedUpdates(config.concurrency, self._lane)
        # Connected once polling (or the webhook) runs; each answered getUpdates, or a check that Telegram still
        # posts to our webhook, is a sign of life (`/healthz`).
        self.liveness = Liveness("telegram")
        # aiohttp under PTB, not httpx: it costs less CPU per Bot API call (see `request`).
        self._requests = (AiohttpRequest(connection_pool_size=256), AiohttpRequest(answered=self.liveness.progressed))
        builder = (Application.builder().token(config.token).concurrent_updates(self.processor)
                   .request(self._requests[0]).get_updates_request(self._requests[1]))
        if config.shares is not None:
            builder = builder.update_queue(RoutingQueue(config.shares))
        base_url = config.base_url
        if base_url:
            # A self-hosted Bot API server (or the tests' fake): PTB appends the token to these.
            builder = builder.base_url(f"{base_url.rstrip('/')}/bot").base_file_url(f"{base_url.rstrip('/')}/file/bot")
        self.application = builder.build()
        self.application.add_handler(TypeHandler(Update, self._on_update))
        self.application.add_error_handler(self._on_error)
        self._sender: OutboxSender | None = None
        self._stop = asyncio.Event()
        self._background: list[asyncio.Task[None]] = []
        self.inbox: Inbox | None = None  # webhook mode
        self._left: set[str] = set()  # groups this process said goodbye to and left
        self._spawned: set[asyncio.Task[None]] = set()
        self._endpoint: WebhookEndpoint | None = None

    @property
    def sender(self) -> OutboxSender:
        if self._sender is None:
            raise RuntimeError("the Telegram adapter is not started")
        return self._sender

    # ---- life cycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        config = self.config
        try:
            await self.application.initialize()  # getMe: checks the token
        except Exception as problem:
            for request in self._requests:  # PTB leaves them open when getMe fails
                await request.shutdown()
            if isinstance(problem, InvalidToken):
                # PTB's message quotes the whole token: this one names the setting and shows 4 characters.
                raise ConfigurationError(f"TELEGRAM_TOKEN {masked(config.token)} was refused by Telegram "
                                         "(getMe: unauthorized); check the token @BotFather gave you") from None
            raise
        self._sender = telegram_sender(self.brain, self.application.bot, max_rate=config.max_rate,
                                       concurrency=config.send_concurrency, poll_interval=config.sender_poll_interval,
                                       other_platforms=config.other_platforms)
        await self.application.start()
        self._stop.clear()
        self._background = []
        if config.fed:
            log.info("Telegram worker started as @%s", self.application.bot.username)
            return
        if config.webhook is not None:
            await self._start_webhook(config.webhook)
        else:
            if config.shares is not None:
                try:
                    await config.shares.start()  # before the first update can be passed on
                except Exception:
                    await config.shares.stop()
                    await self.application.stop()
                    await self.application.shutdown()
                    raise
            updater = self.application.updater
            assert updater is not None
            await updater.start_polling(poll_interval=0.0, timeout=int(config.poll_timeout),
                                        allowed_updates=ALLOWED_UPDATES)
        self._background += [asyncio.create_task(self.sender.run(self._stop, self._handling)),
                             asyncio.create_task(self._prune_old_updates()),
                             asyncio.create_task(self._set_command_menu())]  # not in the way of the first update
        self.liveness.connected()
        processes = f", {config.shares.processes} processes" if config.shares is not None else ""
        log.info("Telegram adapter started as @%s (%s%s)", self.application.bot.username,
                 "webhook" if config.webhook else "long polling", processes)

    async def _set_command_menu(self) -> None:
        """Telegram's "/" menu in private chats: the commands in English (also the default) and German. A failure
        costs only the menu."""
        scope = BotCommandScopeAllPrivateChats()
        try:
            for language in (None, *SUPPORTED_LOCALES):
                menu = [BotCommand(name, description[:MAX_COMMAND_DESCRIPTION])
                        for name, description in command_menu(language or DEFAULT_LOCALE)]
                await self.application.bot.set_my_commands(menu, scope=scope, language_code=language)
        except TelegramError as error:
            log.warning("could not set the command menu: %s", error)

    async def take(self, payload: dict[str, object]) -> None:
        """An update passed on by the poller (a worker of `scaleout`): handled as if this process had polled it."""
        await self.application.update_queue.put(Update.de_json(payload, self.application.bot))

    async def _start_webhook(self, webhook: Webhook) -> None:
        """Listens first, then tells Telegram where to post; the inbox workers take what was stored."""
        self.inbox = Inbox(self.brain.db.engine, self.bot_id, self._handle_stored, workers=self._concurrency)
        secret = webhook.secret or secrets.token_urlsafe(32)
        self._endpoint = WebhookEndpoint(self.inbox, secret, self._route_posted)
        await self._endpoint.start(webhook.listen, webhook.port, webhook.path)
        await self.application.bot.set_webhook(url=webhook.url, secret_token=secret, allowed_updates=ALLOWED_UPDATES)
        self._background += [asyncio.create_task(self.inbox.run(self._stop)),
                             asyncio.create_task(self._watch_webhook(webhook))]

    def _route_posted(self, payload: dict[str, object]) -> Posted | None:
        update = Update.de_json(payload, self.application.bot)
        incoming = self._incoming(update)
        if update.my_chat_member is not None or (incoming is not None and incoming.verdict == LEAVE):
            self._spawn(self.handle_update(update))  # a goodbye needs no inbox: nobody's data is touched
            return None
        if incoming is None or incoming.inbound is None or incoming.verdict == IGNORE:
            return None
        found = incoming.inbound

        async def first_contact() -> uuid.UUID | None:
            if found.action is not None:  # an unknown account's press: refused as it is, and nobody is created
                await self.handle_update(update)
                return None
            try:
                return (await self.dialog.user_for(found)).id  # the person is created as the dialog would
            except NotAdmitted:  # nothing to store: told (or admitted by an invite code) here and now
                await self.handle_update(update)
                return None

        return Posted(found, lane_kind(self.dialog, found), first_contact)

    def _spawn(self, work: Coroutine[Any, Any, None]) -> None:
        task = asyncio.create_task(work)
        self._spawned.add(task)
        task.add_done_callback(self._spawned.discard)

    async def _handle_stored(self, payload: dict[str, object]) -> None:
        """An update claimed from the inbox."""
        update = Update.de_json(payload, self.application.bot)
        try:
            await self.handle_update(update)
        except Exception:
            log.error("telegram update %s failed", update.update_id, exc_info=True)

    async def _watch_webhook(self, webhook: Webhook) -> None:
        """Webhook mode's sign of life: Telegram posts only when there is news, so ask now and then whether it
        still posts to our URL (another install may have set its own)."""
        while not self._stop.is_set():
            try:
                info = await self.application.bot.get_webhook_info()
                if info.url == webhook.url:
                    self.liveness.progressed()
                else:
                    log.warning("Telegram posts to another webhook (%s), not to %s", info.url or "none", webhook.url)
            except TelegramError as problem:
                log.info("asking Telegram for the webhook failed: %s", problem)
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=WEBHOOK_CHECK_EVERY_S)

    async def stop(self) -> None:
        """Stops taking updates, finishes the ones taken, sends what they answered, then shuts down."""
        self.liveness.disconnected()
        if self._endpoint is not None:
            await self._endpoint.stop()
            self._endpoint = None
        updater = self.application.updater
        if updater is not None and updater.running:
            await updater.stop()
        finishing = [self.application.stop()] if self.application.running else []
        if self.config.shares is not None:
            finishing.append(self.config.shares.stop())  # the workers finish their updates while this one does
        await asyncio.gather(*finishing)
        self._stop.set()
        if self._spawned:
            await asyncio.gather(*self._spawned, return_exceptions=True)
        if self._background:
            await asyncio.gather(*self._background, return_exceptions=True)
            self._background = []
        await self.application.shutdown()

    async def __aenter__(self) -> TelegramAdapter:
        await self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None,
                        tb: TracebackType | None) -> None:
        await self.stop()

    @property
    def bot_id(self) -> int:
        return self.application.bot.id

    def wake_sender(self) -> None:
        """New pushes may be in the outbox (the pulse ticked)."""
        if self._sender is not None:
            self._sender.wake()

    async def _prune_old_updates(self) -> None:
        while not self._stop.is_set():
            try:
                await forget_old_updates(self.brain)
            except Exception:
                log.exception("pruning processed telegram update ids failed")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._stop.wait(), timeout=PRUNE_EVERY_S)

    def _handling(self, chat_id: str) -> bool:
        return self.processor.lanes.chat_busy(chat_id) or (self.inbox is not None and self.inbox.handling(chat_id))

    # ---- the one update handler ----------------------------------------------------------------------
    async def handle_update(self, update: Update) -> None:
        """Handles one update, however it arrived: a message or a button press becomes an `Inbound`, is claimed
        once and answered by the dialog, and the chat's pending rows are sent. In a group the policy decides first
        (`bot.groups`): leave, ignore, or read it and answer in the sender's private chat. Other updates are
        ignored."""
        if update.my_chat_member is not None:
            await self._membership(update.my_chat_member)
            return
        incoming = self._incoming(update)
        query = update.callback_query
        if incoming is None:
            if query is not None:
                await self._answer(query)
            return
        if incoming.verdict in (LEAVE, IGNORE) or (query is not None and incoming.press is None):
            if query is not None:
                await self._answer(query)
            if incoming.verdict == LEAVE and incoming.group is not None:
                await self._leave(incoming.group, incoming.language_code)
            return
        press = incoming.press
        if query is not None and press is not None and not await self._screen(query, press):
            return
        inbound = incoming.inbound
        if inbound is None:
            return
        claim = UpdateClaim(self.brain, self.bot_id, update.update_id, inbound)
        # One shared scope for the dialog and the reply's delivery: the delivery's in-flight mark uses the
        # connection the dialog's last statements used, instead of a checkout of its own.
        async with self.brain.db.sharing():
            try:
                tell = self._teller(inbound.chat_id)
                if is_free_text(inbound):
                    async with self._typing(inbound.chat_id, claim):
                        await self.dialog.handle(inbound, take=claim, tell=tell, live=self._live(inbound.chat_id))
                else:
                    await self.dialog.handle(inbound, take=claim, tell=tell)
            except DATABASE_DOWN:
                await self._say_database_down(inbound)
                raise
            if not claim.taken:
                log.info("telegram update %s was handled before, or its sender is not admitted; ignored",
                         update.update_id)
                return
            if press is not None and keyboard_is_spent(claim.token_before, press):
                async with self.brain.db.unshared():  # no connection held during the request
                    await self._remove_keyboard(press)
            await self.sender.deliver(inbound.chat_id)
        if incoming.verdict == READ and incoming.group is not None and press is None:
            await self._point_to_private(incoming.group, inbound)

    def _live(self, chat_id: str) -> LiveAnswer | None:
        """A companion answer is shown while the model writes it (`bot.delivery.stream`); not in a group, whose 20
        messages a minute drafts would use up."""
        editing = self.sender.editing
        if self.config.stream is None or editing is None or self.brain.companion is None or chat_id.startswith("-"):
            return None
        return LiveAnswer(editing, chat_id, pace=self.config.stream)

    async def _on_update(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """PTB's one handler (polling, and the updates a worker process is passed): `handle_update`."""
        await self.handle_update(update)

    def _lane(self, update: object) -> tuple[str, str] | None:
        """A chat's updates wait for each other in order, except those the dialog must take at once (button
        presses, /stop, /approve, /reject, text that steers a running companion turn): those have a lane of
        their own, so they are never stuck behind a long turn of the same chat."""
        incoming = self._incoming(update)
        inbound = incoming.inbound if incoming is not None and incoming.verdict in (None, READ) else None
        return None if inbound is None else (lane_kind(self.dialog, inbound), inbound.chat_id)

    def _incoming(self, update: object) -> Incoming | None:
        """What the update is for this adapter (`Incoming`); None for an update it does not act on."""
        if not isinstance(update, Update):
            return None
        press: Press | None = None
        if update.callback_query is not None:
            query = update.callback_query
            press = press_inbound(query)
            inbound = press.inbound if press is not None else None
            chat = query.message.chat if query.message is not None else None
            language = query.from_user.language_code if query.from_user is not None else None
            # A press on the bot's own message is addressed to it.
            group = GroupMessage(channel=chat is not None and chat.type == ChatType.CHANNEL, replies_to_bot=True)
        elif update.message is not None or update.edited_message is not None:
            message = update.message or update.edited_message
            assert message is not None
            inbound, chat = message_inbound(message, edited=update.message is None), message.chat
            language = message.from_user.language_code if message.from_user is not None else None
            group = group_message(message, self.bot_id)
        elif update.channel_post is not None:
            inbound, chat, language = None, update.channel_post.chat, None
            group = GroupMessage(channel=True)
        else:
            return None
        if is_private(chat):
            return Incoming(inbound, press, language_code=language)
        assert chat is not None
        verdict = group_verdict(group, allow_groups=self.config.allow_groups,
                                bot_username=self.application.bot.username or "")
        if verdict == READ and inbound is not None:
            # Read, and answered where only the sender sees it: their private chat, whose id is theirs.
            inbound = replace(inbound, chat_id=inbound.platform_user_id)
        return Incoming(inbound, press, verdict, str(chat.id), language)

    # ---- groups ----------------------------------------------------------------------------------------
    async def _membership(self, change: ChatMemberUpdated) -> None:
        """The bot was added to a group or channel: it stays only where groups are allowed (never in a channel)."""
        chat = change.chat
        if chat.type == ChatType.PRIVATE:
            return
        status = change.new_chat_member.status
        if status not in (ChatMemberStatus.MEMBER, ChatMemberStatus.ADMINISTRATOR, ChatMemberStatus.OWNER):
            return
        self._left.discard(str(chat.id))  # added (again): a new goodbye is due if it cannot stay
        verdict = group_verdict(GroupMessage(channel=chat.type == ChatType.CHANNEL),
                                allow_groups=self.config.allow_groups,
                                bot_username=self.application.bot.username or "")
        if verdict == LEAVE:
            await self._leave(str(chat.id), change.from_user.language_code if change.from_user else None)

    async def _leave(self, chat_id: str, language_code: str | None) -> None:
        """Says once why, in the language of the person who brought the bot there, and leaves the chat."""
        if chat_id in self._left:
            return
        self._left.add(chat_id)
        render = Renderer(normalize_locale(language_code) or self.dialog.default_locale)
        bot = self.application.bot
        try:
            await bot.send_message(chat_id, render(GROUP_NOTICE))
        except TelegramError as problem:  # a channel where it may not post, say
            log.info("telegram: could not say goodbye in %s: %s", chat_id, problem)
        try:
            await bot.leave_chat(chat_id)
        except TelegramError as problem:
            log.warning("telegram: could not leave %s: %s", chat_id, problem)
            return
        log.info("telegram: left %s (a personal companion talks with one person at a time)", chat_id)

    async def _point_to_private(self, group: str, inbound: Inbound) -> None:
        """One line in the group: the answer is in the sender's private chat."""
        render = Renderer(normalize_locale(inbound.language_code) or self.dialog.default_locale)
        address = f"t.me/{self.application.bot.username}"
        try:
            await self.application.bot.send_message(group, render(private_pointer(address)))
        except TelegramError as problem:
            log.info("telegram: the pointer in %s failed: %s", group, problem)

    async def _screen(self, query: CallbackQuery, press: Press) -> bool:
        """Whether the press may act (`bot.presses`). The callback answer stops the spinner at once; a refused press
        is told there only (a toast for the presser) and changes nothing. The owner's keyboard goes when its button
        cannot act any more; another account's press leaves it alone."""
        try:
            check = await screen_press(self.brain, press.inbound, press.question)
        except DATABASE_DOWN:
            await self._answer(query)
            await self._say_database_down(press.inbound)
            raise
        if check.text is None:
            await self._answer(query)
            return True
        locale = check.locale or normalize_locale(press.inbound.language_code) or self.dialog.default_locale
        await self._answer(query, Renderer(locale)(check.text))
        if check.owner_pressed or (not check.state.exists and press.chat_type == ChatType.PRIVATE):
            await self._remove_keyboard(press)
        return False

    @staticmethod
    async def _answer(query: CallbackQuery, text: str | None = None) -> None:
        try:
            await query.answer(text)  # at once: the spinner on the button stops
        except TelegramError as problem:
            log.debug("answering callback query %s failed: %s", query.id, problem)

    async def _remove_keyboard(self, press: Press) -> None:
        if press.message_id is None:
            return
        try:
            await self.application.bot.edit_message_reply_markup(
                chat_id=press.inbound.chat_id, message_id=press.message_id, reply_markup=None)
        except TelegramError as problem:  # already edited, or too old to edit: nothing to do
            log.debug("removing the keyboard of %s:%s failed: %s", press.inbound.chat_id, press.message_id, problem)

    def _teller(self, chat_id: str) -> Tell:
        """Sends a text straight to the chat (for someone without a person: no outbox)."""
        async def tell(text: str) -> None:
            await self.application.bot.send_message(chat_id, text)

        return tell

    async def _say_database_down(self, inbound: Inbound) -> None:
        """Without the database the reply cannot go through the outbox: told straight away, in the language
        Telegram reports for the person (their stored one cannot be read), instead of leaving them unanswered.
        Whether the message took effect is unknown when the database went away in the middle of it."""
        render = Renderer(normalize_locale(inbound.language_code) or self.dialog.default_locale)
        text = render(tr("Sorry, I can't reach my database right now, so I may not have handled that. Please "
                         "check again in a minute and send it once more if needed."))
        try:
            await self.application.bot.send_message(inbound.chat_id, text)
        except TelegramError as problem:
            log.warning("telling chat %s that the database is down failed: %s", inbound.chat_id, problem)

    async def _on_error(self, update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
        log.error("telegram update %s failed", getattr(update, "update_id", "?"), exc_info=context.error)

    # ---- typing ----------------------------------------------------------------------------------------
    @contextlib.asynccontextmanager
    async def _typing(self, chat_id: str, claim: UpdateClaim) -> AsyncIterator[None]:
        """"typing…" in the chat while the body runs: from `typing_after` on (at once when it is 0), renewed
        every 4.5 s, and only once the update is claimed (a replay shows nothing). A chat action on its way when
        the body ends is waited for, never cut off, so it cannot land after the reply (Telegram would show
        "typing" for five more seconds)."""
        done = asyncio.Event()

        async def keep_typing() -> None:
            await claim.decided.wait()
            if not claim.taken:
                return
            if self.config.typing_after <= 0:
                await self._chat_action(chat_id)
            delay = self.config.typing_after if self.config.typing_after > 0 else TYPING_REPEAT_S
            while True:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(done.wait(), timeout=delay)
                if done.is_set():
                    return
                await self._chat_action(chat_id)
                delay = TYPING_REPEAT_S

        typing = asyncio.create_task(keep_typing())
        try:
            yield
        finally:
            done.set()
            if not claim.decided.is_set():  # the body failed before the update was taken: nothing to show
                typing.cancel()
            await asyncio.gather(typing, return_exceptions=True)

    async def _chat_action(self, chat_id: str) -> None:
        try:
            await self.application.bot.send_chat_action(chat_id, ChatAction.TYPING)
        except TelegramError as problem:
            log.debug("chat action for %s failed: %s", chat_id, problem)


def keyboard_is_spent(before: TokenState, press: Press) -> bool:
    """Whether the pressed message's keyboard should go: its buttons are one-shot answers (the token was
    single-use), or the pressed one could not act (unknown, used, expired). Another person's press leaves
    the keyboard of a group message alone, so a stranger cannot take the owner's buttons away."""
    if not before.exists:
        return True
    if not before.owned:
        return press.chat_type == ChatType.PRIVATE
    return before.single_use or not before.open


def is_free_text(inbound: Inbound) -> bool:
    """Free text, or a voice note or photo (which becomes words for the model): "typing" while it is handled."""
    return inbound.media is not None or (inbound.text is not None and not inbound.is_command)
