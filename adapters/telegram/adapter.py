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
while free text is handled, let the dialog answer, then send this chat's pending rows. A button press is
answered at once (the spinner stops), handled in a lane of its own so it never waits behind a long turn of the
same chat, and a pressed message whose buttons cannot act any more loses its keyboard."""

from __future__ import annotations

import asyncio
import contextlib
import logging
import secrets
import uuid
from collections.abc import AsyncIterator
from types import TracebackType

from telegram import BotCommand, BotCommandScopeAllPrivateChats, CallbackQuery, Update
from telegram.constants import ChatAction, ChatType
from telegram.error import TelegramError
from telegram.ext import Application, ContextTypes, TypeHandler

from adapters.telegram.config import TelegramConfig, Webhook
from adapters.telegram.inbound import Press, message_inbound, press_inbound
from adapters.telegram.ordering import ChatOrderedUpdates
from adapters.telegram.outbound import telegram_sender
from adapters.telegram.request import AiohttpRequest
from adapters.telegram.scaleout import RoutingQueue
from adapters.telegram.webhook import WebhookEndpoint
from bot.commands.table import command_menu
from bot.delivery.sender import OutboxSender
from bot.dialog import Dialog
from bot.inbound import Inbound
from bot.inbox import Inbox, Posted
from bot.ordering import lane_kind
from bot.updates import DATABASE_DOWN, TokenState, UpdateClaim, forget_old_updates
from brain.core import Brain
from brain.i18n import DEFAULT_LOCALE, SUPPORTED_LOCALES, Renderer, normalize_locale, tr

log = logging.getLogger(__name__)

ALLOWED_UPDATES = [Update.MESSAGE, Update.CALLBACK_QUERY]
TYPING_REPEAT_S = 4.5  # Telegram shows "typing" for 5 s per chat action
PRUNE_EVERY_S = 3600.0
MAX_COMMAND_DESCRIPTION = 256  # Telegram's limit for a command's description in the menu


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
        # aiohttp under PTB, not httpx: it costs less CPU per Bot API call (see `request`).
        builder = (Application.builder().token(config.token).concurrent_updates(self.processor)
                   .request(AiohttpRequest(connection_pool_size=256)).get_updates_request(AiohttpRequest()))
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
        self._endpoint: WebhookEndpoint | None = None

    @property
    def sender(self) -> OutboxSender:
        if self._sender is None:
            raise RuntimeError("the Telegram adapter is not started")
        return self._sender

    # ---- life cycle ------------------------------------------------------------------------------------
    async def start(self) -> None:
        config = self.config
        await self.application.initialize()  # getMe: checks the token
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
        self._background.append(asyncio.create_task(self.inbox.run(self._stop)))

    def _route_posted(self, payload: dict[str, object]) -> Posted | None:
        inbound = self._inbound_of(Update.de_json(payload, self.application.bot))
        if inbound is None:
            return None
        found = inbound

        async def first_contact() -> uuid.UUID:
            return (await self.dialog.user_for(found)).id  # the person is created as the dialog would

        return Posted(inbound, lane_kind(self.dialog, inbound), first_contact)

    async def _handle_stored(self, payload: dict[str, object]) -> None:
        """An update claimed from the inbox."""
        update = Update.de_json(payload, self.application.bot)
        try:
            await self.handle_update(update)
        except Exception:
            log.error("telegram update %s failed", update.update_id, exc_info=True)

    async def stop(self) -> None:
        """Stops taking updates, finishes the ones taken, sends what they answered, then shuts down."""
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
        once and answered by the dialog, and the chat's pending rows are sent. Other updates are ignored."""
        press: Press | None = None
        if update.callback_query is not None:
            await self._answer(update.callback_query)
            press = press_inbound(update.callback_query)
            inbound = press.inbound if press is not None else None
        elif update.message is not None:
            inbound = message_inbound(update.message)
        else:
            return
        if inbound is None:
            return
        claim = UpdateClaim(self.brain, self.bot_id, update.update_id, inbound)
        # One shared scope for the dialog and the reply's delivery: the delivery's in-flight mark uses the
        # connection the dialog's last statements used, instead of a checkout of its own.
        async with self.brain.db.sharing():
            try:
                if is_free_text(inbound):
                    async with self._typing(inbound.chat_id, claim):
                        await self.dialog.handle(inbound, take=claim)
                else:
                    await self.dialog.handle(inbound, take=claim)
            except DATABASE_DOWN:
                await self._say_database_down(inbound)
                raise
            if not claim.taken:
                log.info("telegram update %s was handled before; ignored", update.update_id)
                return
            if press is not None and keyboard_is_spent(claim.token_before, press):
                async with self.brain.db.unshared():  # no connection held during the request
                    await self._remove_keyboard(press)
            await self.sender.deliver(inbound.chat_id)

    async def _on_update(self, update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
        """PTB's one handler (polling, and the updates a worker process is passed): `handle_update`."""
        await self.handle_update(update)

    def _lane(self, update: object) -> tuple[str, str] | None:
        """A chat's updates wait for each other in order, except those the dialog must take at once (button
        presses, /stop, /approve, /reject, text that steers a running companion turn): those have a lane of
        their own, so they are never stuck behind a long turn of the same chat."""
        inbound = self._inbound_of(update)
        return None if inbound is None else (lane_kind(self.dialog, inbound), inbound.chat_id)

    @staticmethod
    def _inbound_of(update: object) -> Inbound | None:
        if not isinstance(update, Update):
            return None
        if update.callback_query is not None:
            press = press_inbound(update.callback_query)
            return press.inbound if press is not None else None
        if update.message is not None:
            return message_inbound(update.message)
        return None

    @staticmethod
    async def _answer(query: CallbackQuery) -> None:
        try:
            await query.answer()  # at once: the spinner on the button stops
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
    return inbound.text is not None and not inbound.is_command
