"""The dialog: turns one `Inbound` (command, free text or button press) into replies, written to the
delivery outbox. Platform-neutral; every adapter calls `Dialog.handle` and then drains the outbox.

Free text goes to the companion (the language model with the person's tools) when one is attached to the
brain, else to the rule-based parser; the parser also answers when the model cannot be reached. While a
person's companion turn runs, their next free text steers it (taken in before the next model call; no reply
of its own), /stop ends it, and buttons, /approve and /reject are handled as usual. Adapters that serialize
a chat's updates ask `bypasses_queue` which updates must not wait behind a running turn. An edit of an earlier message
gets one line and changes nothing (EDIT_NOT_APPLIED). A forwarded message is someone else's words: with a model it is
talked about (marked as forwarded, with read tools only), without one it gets one line (FORWARD_NOT_RUN); it is never
run as a command, logged as an entry or remembered as the person's own words."""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import re
import time
import uuid
from collections.abc import Awaitable
from dataclasses import replace
from datetime import date, datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import bindparam, func, select
from sqlalchemy.dialects.postgresql import UUID
from sqlalchemy.ext.asyncio import AsyncConnection

from bot.access import Access, AccessPolicy, NotAdmitted, Sender, Tell
from bot.commands import ActionHandler, Command
from bot.commands.agenda import day_agenda, next_event
from bot.commands.basics import follow_written_language
from bot.commands.companion import model_down_text, say_outcome
from bot.commands.data import DELETE_CONFIRMED
from bot.commands.deleting import delete_in_words
from bot.commands.drinks import after_drink_buttons, amount_of_what, more_water
from bot.commands.food import after_meal_buttons, meals_today, past_day
from bot.commands.goals import less_coffee
from bot.commands.memory import about_me, answer_from_memory, forget_said
from bot.commands.onboarding import step_question, take_typed_answer, waiting_step
from bot.commands.places import place_in_words, place_offer_answered, places_today, shared_location
from bot.commands.proposals import take_reason, waits_for_reason
from bot.commands.reminders import (
    DayPlan,
    ask_when,
    move_reminder_in_words,
    offer_day_plan,
    offer_plan,
    plan_answered,
    read_day_plan,
    read_plan,
    remind_before,
    set_reminder,
    when_answered,
)
from bot.commands.rituals import answer_free_text
from bot.commands.table import action_handlers, command_table, waiting_handlers
from bot.commands.tasks import done_in_words, say_task, time_note
from bot.delivery.keyboards import take_off_keyboards
from bot.delivery.stream import AnswerStream
from bot.inbound import MAX_TEXT_LENGTH, Inbound, Media, split_command
from bot.metrics import message_received, replied
from bot.parsing.freetext import (
    ReminderMove,
    ToolCall,
    amount_alone,
    delete_target,
    done_said,
    less_coffee_wished,
    more_water_wished,
    parse_free_text,
    past_day_log_said,
    place_said,
    reminder_moved,
    water_goal_said,
)
from bot.parsing.hints import Topic, request_said, topic_of
from bot.parsing.questions import (
    View,
    about_me_asked,
    asked_about,
    command_prefixed,
    command_word,
    is_question,
    name_asked,
    untracked_said,
)
from bot.parsing.reminders import (
    ReminderRequest,
    before_event_said,
    free_text_reminder,
    reminder_of_nothing,
    reminder_without_when,
)
from bot.parsing.settings import setting_said
from bot.parsing.smalltalk import Smalltalk, name_said, smalltalk_of, smalltalk_reply
from bot.photos import Photos
from bot.turn import NO_REASON, Turn
from bot.voice import VoiceNotes
from brain import log_context
from brain.actions.models import ActionToken
from brain.actions.service import redeem_action
from brain.companion.llm import PacedSink
from brain.companion.loop import TextSink
from brain.companion.prompt import MARKDOWN, PLAIN
from brain.core import Brain
from brain.errors import DomainError
from brain.i18n import Renderer, Text, normalize_locale, tr
from brain.memory.capture import Message
from brain.onboarding.models import OnboardingState
from brain.outbox.models import Outbound
from brain.people.local_time import local_date, local_now
from brain.people.models import User
from brain.people.service import find_identity, resolve_identity, set_display_name
from brain.pulse.activity import note_inbound_in
from brain.rituals.runner import has_running_run
from brain.store.lean import Lean
from brain.summaries import day_lines, day_opening
from brain.tools.coercion import UNSTORABLE

if TYPE_CHECKING:
    from bot.updates import UpdateClaim

log = logging.getLogger(__name__)

# An edit of an earlier message is not applied (what it changed may have been acted on already): one line says how
# to fix the entry. A forwarded message is someone else's words: never run as a command or logged as an entry.
EDIT_NOT_APPLIED = tr("Edits aren't applied: the entry stays as first sent. To fix it, use /undo and send it again.")
FORWARD_NOT_RUN = tr("That's a forwarded message, so I didn't run or log anything from it. If you want me to note "
                     "something, tell me in your own words.")

# Commands that must be handled at once, even while the person's companion turn runs.
UNQUEUED_COMMANDS = frozenset({"stop", "approve", "reject"})
# Platforms whose adapter shows the model's Markdown as formatting (`bot.render.markdown`).
FORMATTED_PLATFORMS = frozenset({"telegram", "matrix"})

# Built once (every free text asks it): what may take free text before the parser does, in one read: the
# setup's step and since when (it may wait for a city) and whether a ritual runs (it may wait for an answer).
_PERSON = bindparam("person", type_=UUID(as_uuid=True))
_FLOWS = Lean(select(
    select(OnboardingState.step).where(OnboardingState.user_id == _PERSON).scalar_subquery().label("step"),
    select(OnboardingState.updated_at).where(OnboardingState.user_id == _PERSON).scalar_subquery()
    .label("updated_at"),
    has_running_run(_PERSON).label("ritual"),
    # A rejection's "Why? (optional)": its "No reason" button, not pressed yet, takes the next message as the reason.
    select(func.json_build_array(ActionToken.token, ActionToken.payload))
    .where(ActionToken.user_id == _PERSON, ActionToken.kind == NO_REASON, ActionToken.used_at.is_(None))
    .order_by(ActionToken.expires_at.desc()).limit(1).scalar_subquery().label("reason"),
))  # run lean (`Lean`)

class Dialog:
    def __init__(self, brain: Brain, *, default_locale: str = "en", default_timezone: str = "UTC",
                 access: Access | AccessPolicy | None = None, voice: VoiceNotes | None = None,
                 photos: Photos | None = None) -> None:
        """`access`: who may talk (`bot.access`); by default the closed one, where only invited accounts do."""
        self.brain = brain
        self.access = access if isinstance(access, Access) else Access(brain, access)
        self.default_locale = default_locale
        self.default_timezone = default_timezone
        self.voice = voice or VoiceNotes()  # without a speech-to-text server: voice notes are answered with why not
        self.photos = photos or Photos()  # without a vision model: photos are answered with "tell me what you ate"
        self.commands: dict[str, Command] = command_table()
        # Button kinds: those of the command modules (`ACTIONS`), and "command", which runs a command of this
        # dialog's table as if typed.
        self.actions: dict[str, ActionHandler] = {**action_handlers(), "command": self._command_pressed}
        self.waiting: frozenset[str] = waiting_handlers()  # run `unshared`: they wait on a model
        self._captures: set[asyncio.Task[None]] = set()
        self._conversing: set[str] = set()  # "platform:id" of people whose companion turn runs
        # Who was told today that without a model nothing more is done with what they tell (once a day is enough).
        self._told_no_model: dict[uuid.UUID, date] = {}

    async def user_for(self, inbound: Inbound, *, writing: bool = False) -> User:
        """The person behind the update, created on first contact. `writing`: they are writing now, which
        is noted in the same transaction (the idle hold: no nudge while the person is writing). NotAdmitted for
        an account that may not talk to the companion (nothing is created)."""
        if not await self.access.admits(Sender.of(inbound)):
            raise NotAdmitted(f"{inbound.platform}:{inbound.platform_user_id}")
        user = await self._person(inbound, writing=writing)
        assert user is not None
        return user

    async def _person(self, inbound: Inbound, *, writing: bool, take: UpdateClaim | None = None) -> User | None:
        """`user_for`, with the adapter's claim of the update (`take`); None when it dropped the update. Someone
        known (every message but a first contact) needs no transaction: the lookup, the claim and the note are one
        statement (a dropped update notes nothing). A first contact creates the person, claims and notes in one
        transaction."""
        async with self.brain.db.autocommit() as connection:  # lean statements: no session needed
            noting = self.brain.clock.now() if writing else None
            if take is not None:
                known = await take.known(connection, noting)
                if known is not None:
                    user, kept = known
                    return user if kept else None
            else:
                found = await find_identity(connection, inbound.platform, inbound.platform_user_id, noting=noting)
                if found is not None:
                    return found
        async with self.brain.transactions.begin() as uow:
            user = await resolve_identity(
                uow.session, inbound.platform, inbound.platform_user_id,
                default_locale=inbound.language_code or self.default_locale,
                default_timezone=self.default_timezone,
                display_name=_readable(inbound.display_name) if inbound.display_name else None,
            )
            return await self._admit(await uow.session.connection(), user, uow.now, writing=writing, take=take)

    @staticmethod
    async def _admit(connection: AsyncConnection, user: User, now: datetime, *, writing: bool,
                     take: UpdateClaim | None) -> User | None:
        if take is not None:
            return user if await take(connection, user, now if writing else None) else None
        if writing:
            await note_inbound_in(connection, user.id, now)
        return user

    def bypasses_queue(self, inbound: Inbound) -> bool:
        """True for updates an adapter must hand over at once rather than queue behind the chat's running
        update: button presses, /stop, /approve, /reject, and free text while the person's companion turn
        runs (it steers that turn)."""
        if inbound.action is not None:
            return True
        text = (inbound.text or "").strip()
        if not inbound.is_own_words:
            return False
        if inbound.is_command:
            command = self.commands.get(split_command(text)[0])
            return command is not None and command.name in UNQUEUED_COMMANDS
        return bool(text) and inbound.location is None and _identity(inbound) in self._conversing

    async def handle(self, inbound: Inbound, *, on_text: TextSink | None = None, live: AnswerStream | None = None,
                     take: UpdateClaim | None = None, tell: Tell | None = None) -> list[Outbound]:
        """Answer one update. `on_text` gets the companion's answer piece by piece as the model writes it; the full
        reply is in the outbox as always. `live` (for adapters that show an answer while it is written,
        `bot.delivery.stream`) gets the first answer's pieces too, and the outbox row of that answer is written with
        the messages that showed it, so the delivery finishes them instead of sending it again. `take`: see
        `bot.updates.UpdateClaim` (recording the update's id, so a replay has no second effect); an update it drops
        gets no answer and changes nothing. `tell` sends a text straight to the chat: how someone who may not talk to
        the companion is told so (`bot.access`; they have no outbox). The glances of one update, one after another,
        share a pooled connection (`Database.sharing`); the memory capture starts after that scope."""
        started = time.perf_counter()
        with log_context.update_scope():  # log lines name this update's person once known, never another's
            async with self.brain.db.sharing():
                handled = await self._handle(inbound, on_text, live, take, tell)
            if handled is None:
                return []
            turn, sent = handled
            message_received(inbound.platform)
            if sent:
                replied(inbound.platform, time.perf_counter() - started)
            self._capture(turn, turn.inbound, sent)  # a voice note's inbound carries its transcript by now
            return sent

    async def _handle(self, inbound: Inbound, on_text: TextSink | None, live: AnswerStream | None,
                      take: UpdateClaim | None, tell: Tell | None) -> tuple[Turn, list[Outbound]] | None:
        verdict = await self.access.gate(inbound)
        if not verdict.admitted:
            if take is not None:
                take.decided.set()  # nothing taken: nobody waits for the claim
            if verdict.notice is not None and tell is not None:
                await self._tell(inbound, verdict.notice, tell)
            return None
        if verdict.welcome:  # an invite code admitted the sender just now: their /start follows
            inbound = replace(inbound, text="/start")
        user = await self._person(inbound, writing=True, take=take)
        if user is None:
            return None
        log_context.concerns(user.id)
        turn = Turn(self.brain, user, inbound)
        if verdict.welcome:
            turn.say(*verdict.welcome)
        if inbound.media is None and self._steer(turn, inbound):
            return turn, []
        try:
            if inbound.media is not None and inbound.media.kind == "voice":
                heard = await self._heard(turn, inbound.media)
                if heard is not None:
                    if not self._steer(turn, heard):
                        await self._route(turn, heard, on_text, live)
                    self.voice.show(turn, str(heard.text))
            elif inbound.media is not None:
                await self.photos.look(turn, inbound.media)
            else:
                await self._route(turn, inbound, on_text, live)
        except Exception:
            log.exception("turn failed for %s:%s", inbound.platform, inbound.platform_user_id)
            turn.replies.clear()
            turn.say(tr("Sorry, something went wrong on my side. Nothing was changed by this message."))
        for reply in turn.replies:  # a model's answer may carry a NUL byte: the outbox cannot store one
            reply.text = _readable(reply.text)
        return turn, await turn.flush()

    async def _tell(self, inbound: Inbound, text: Text, tell: Tell) -> None:
        """A notice for someone the companion does not know: in the language their app reports, else the default."""
        render = Renderer(normalize_locale(inbound.language_code) or self.default_locale, self.default_timezone)
        try:
            async with self.brain.db.unshared():  # no connection held while the platform is asked
                await tell(render(text))
        except Exception as problem:
            log.warning("telling %s:%s about access failed: %s", inbound.platform, inbound.platform_user_id,
                        type(problem).__name__)
    async def _heard(self, turn: Turn, media: Media) -> Inbound | None:
        """A voice note's words as the inbound the dialog handles from here on, exactly as if typed (and kept as
        the turn's, so memory capture sees the person's words); None when there are none (the person was told)."""
        heard = await self.voice.listen(turn, media)
        if heard is None:
            return None
        turn.inbound = dataclasses.replace(turn.inbound, text=heard, media=None)
        return turn.inbound

    def _capture(self, turn: Turn, inbound: Inbound, sent: list[Outbound]) -> None:
        """Every conversational message, and the model's answer to it, go to the short-term memory after the reply
        is out (capture embeds and parses, which the person should not wait for). Commands and button presses are
        not conversation: what they change is in the life logs already. Nor is a canned reply (a logged drink, "I
        didn't understand that"): remembered, it would come back in /recall and in the model's context as if said."""
        memory = self.brain.memory
        text = (inbound.text or "").strip()
        if memory is None or inbound.action is not None or inbound.is_command or not inbound.is_own_words or not text \
                or len(text) > MAX_TEXT_LENGTH or not _can_store(text) or turn.ran_as_entry \
                or smalltalk_of(text) in _SAYS_NOTHING:
            return
        at = turn.now
        answer = "\n".join(m.text for m in sent if m.text).strip() if turn.model_answered else ""
        if turn.heard_line is not None:
            answer = answer.removeprefix(turn.heard_line).strip()
        key = f"{inbound.platform}:{inbound.chat_id}:{inbound.message_id}"

        said = [Message(text, "user", key)]
        if answer:
            said.append(Message(answer, "assistant", f"{key}:answer"))
        zone = turn.user.timezone

        async def capture() -> None:
            try:
                await memory.remember_many(turn.user.id, said, at, zone=zone)
            except Exception:
                log.exception("memory capture failed for %s", key)

        task = asyncio.get_running_loop().create_task(capture())
        self._captures.add(task)
        task.add_done_callback(self._captures.discard)

    async def settle(self) -> None:
        """Waits for the memory captures still running (on shutdown, and in tests)."""
        while self._captures:
            await asyncio.gather(*list(self._captures), return_exceptions=True)

    async def _route(self, turn: Turn, inbound: Inbound, on_text: TextSink | None = None,
                     live: AnswerStream | None = None) -> None:
        if inbound.action is not None:
            await self._press(turn, inbound.action)
            return
        if inbound.edited:
            turn.say(EDIT_NOT_APPLIED)
            return
        if inbound.forwarded and (self.brain.companion is None or inbound.location is not None):
            turn.say(FORWARD_NOT_RUN)
            return
        if inbound.location is not None:
            await shared_location(turn, *inbound.location)
            return
        text = (inbound.text or "").strip()
        if not text:
            turn.say(tr("I can only read text messages so far. /help shows what I understand."))
            return
        if len(text) > MAX_TEXT_LENGTH:
            turn.say(tr("That message is too long ({length} characters; at most {max}). Nothing was saved.",
                        length=len(text), max=MAX_TEXT_LENGTH))
            return
        if not _can_store(text):
            turn.say(tr("That message contains characters I can't read (a NUL byte or broken Unicode). "
                        "Nothing was saved."))
            return
        if inbound.forwarded:  # someone else's words, to talk about: the companion sees them marked as such
            async with self.brain.db.unshared():
                await self._converse(turn, text, on_text, live, forwarded=True)
        elif inbound.is_command:
            await self._command(turn, text)
        else:
            await follow_written_language(turn, text)  # before anything is said, so all of it is in that language
            if await self._typed_answer(turn, text):  # the city the onboarding asked for, a ritual step's answer
                return
            if self.brain.companion is not None:
                async with self.brain.db.unshared():  # no connection held while the model thinks
                    await self._converse(turn, text, on_text, live)
            else:
                await self._free_text(turn, text)

    async def _typed_answer(self, turn: Turn, text: str) -> bool:
        """Free text as the answer the setup (a city) or a running ritual waits for; True when taken."""
        async with self.brain.db.autocommit() as connection:  # one Core read for both: no session
            flows = await _FLOWS.one(connection, {"person": turn.user.id})
        if flows.reason is not None and waits_for_reason(flows.reason[1], turn.now) \
                and await take_reason(turn, flows.reason[0], text):
            return True
        waiting = waiting_step(turn, flows.step, flows.updated_at)
        if await take_typed_answer(turn, text, waiting=waiting, asked_at=flows.updated_at):
            assert waiting is not None
            async with self.brain.transactions.begin() as uow:  # the step's buttons: answered by typing
                await take_off_keyboards(await uow.session.connection(), turn.user.id, step_question(waiting))
            return True
        if await plan_answered(turn, text) or await place_offer_answered(turn, text) or await when_answered(turn, text):
            return True  # "Kalender" to "Should I put it in your calendar, …?", "ja" to "Save it and check in?"
        return await answer_free_text(turn, text, running=bool(flows.ritual))

    async def _command(self, turn: Turn, text: str) -> None:
        name, args = split_command(text)
        command = self.commands.get(name)
        if command is None:
            # The prefix the person typed: on Matrix '/…' may be their client's, '!…' always reaches the bot.
            prefix = text.strip()[:1]
            turn.say(tr("I don't know the command {prefix}{name}. {prefix}help lists what I understand.",
                        prefix=prefix, name=name[:32]))
            return
        if name in self.waiting:
            async with self.brain.db.unshared():
                await command.handler(turn, args)
        else:
            await command.handler(turn, args)

    def _steer(self, turn: Turn, inbound: Inbound) -> bool:
        """Free text while the person's companion turn runs goes into that turn."""
        companion = self.brain.companion
        text = (inbound.text or "").strip()
        if companion is None or inbound.action is not None or inbound.location is not None or inbound.is_command \
                or not inbound.is_own_words \
                or not text or len(text) > MAX_TEXT_LENGTH or not _can_store(text):
            return False
        control = companion.turns.get(turn.user.id)
        return control is not None and control.steer(text)

    async def _converse(self, turn: Turn, text: str, on_text: TextSink | None, live: AnswerStream | None, *,
                        forwarded: bool = False) -> None:
        """A companion turn; messages that arrived after it took its last look are answered by another. Only the
        first answer goes to `live`. `forwarded`: someone else's message the person passed on (see
        `Companion.respond`); without the model it gets FORWARD_NOT_RUN, never the rule-based parser."""
        companion = self.brain.companion
        assert companion is not None
        key = _identity(turn.inbound)
        self._conversing.add(key)
        try:
            await self._converse_in(turn, text, on_text, live, forwarded)
        finally:
            self._conversing.discard(key)
            if live is not None:
                await live.close()  # a failed turn leaves what was shown as it is

    async def _converse_in(self, turn: Turn, text: str, on_text: TextSink | None, live: AnswerStream | None,
                           forwarded: bool) -> None:
        companion = self.brain.companion
        assert companion is not None
        texts = [text]
        while texts:
            message = "\n".join(texts)
            control = companion.turns.begin(turn.user.id)
            if control is None:  # another update of this person started a turn: steer it instead
                running = companion.turns.get(turn.user.id)
                if forwarded:
                    turn.say(FORWARD_NOT_RUN)
                elif running is None or not running.steer(message):
                    await self._free_text(turn, message)
                return
            # A live answer paces the model's stream (`PacedSink`); the terminal's printer takes every piece.
            sink = live if isinstance(live, PacedSink) else live.piece if live is not None else on_text
            try:
                outcome = await companion.respond(turn.user, message, control=control, on_text=sink,
                                                  formatting=formatting_of(turn.inbound.platform),
                                                  forwarded=forwarded)
            finally:
                texts = companion.turns.end(turn.user.id, control)
            shown = await live.close() if live is not None else None
            live = None
            if outcome.answered or outcome.calls or outcome.stopped:
                answer = len(turn.replies)
                say_outcome(turn, outcome)
                if shown is not None and not outcome.stopped and outcome.text.strip():
                    turn.replies[answer].shown = shown.ids  # the answer's reply: finished where it was shown
                turn.model_answered = turn.model_answered or outcome.answered
                if outcome.tell_model_down:
                    turn.say(model_down_text())
            elif forwarded:  # no model for someone else's words: nothing of them is run
                if outcome.tell_model_down:
                    turn.say(model_down_text())
                turn.say(FORWARD_NOT_RUN)
            else:  # no model: the rule-based parser does what it can, and says so once
                await self._free_text(turn, message, model_down=outcome.tell_model_down)
            forwarded = False  # what steered the turn meanwhile is the person's own words

    async def _free_text(self, turn: Turn, text: str, *, model_down: bool = False) -> None:
        """What the rule-based parser makes of a free text. `model_down`: the model could not be reached and the
        person has not been told yet; one message says both when the parser cannot help either."""
        answer = self._read_free_text(turn, text)
        done = done_said(text) if answer is None else None
        if done is not None and await done_in_words(turn, done, model_down_text() if model_down else None):
            return  # "Hab Milch gekauft" and the task "Milch kaufen" is open: it is done
        if answer is None and is_question(text) and self.brain.memory is not None:
            await self._captured()  # what was just said is stored before it is asked about ("Wie heiße ich?")
            if await answer_from_memory(turn, text, model_down_text() if model_down else None):
                return  # "Wann hat Anna Geburtstag?": what the person told the memory
        if answer is None and past_day_log_said(text):  # "had 2 beers last night": the logs keep today's
            told = self.brain.memory is not None
            answer = _say(turn, tr("My logs keep today's drinks and meals, so I can't log that for an earlier day, but "
                                   "I'll remember what you told me.") if told
                          else tr("My logs keep today's drinks and meals, so I can't log that for an earlier day."))
        if answer is None and untracked_said(text):  # "I slept 8 hours": no log keeps that, which is worth saying
            told = self.brain.memory is not None and not is_question(text)
            answer = _say(turn, tr("I don't keep a log of sleep, steps, weight or workouts yet, but I'll remember what "
                                   "you told me. My logs are tasks, calendar, drinks, meals and places.") if told
                          else tr("I don't keep a log of sleep, steps, weight or workouts yet. My logs are tasks, "
                                  "calendar, drinks, meals and places."))
        if answer is None:
            self._not_understood(turn, text, model_down)
            return
        if model_down:
            turn.say(model_down_text())
        await answer

    def _not_understood(self, turn: Turn, text: str, model_down: bool) -> None:
        """What a free text no reader understood gets: with the memory on, a statement is said to be remembered (it
        is: see _capture); one about a log, a reminder or a place also shows how to write that, as does a request
        for a reminder; anything else gets the general examples."""
        topic = topic_of(text)
        hint = _HINTS[topic] if topic is not None else None
        # "I'm vegetarian" is three words, as "I am vegetarian" and "ich bin Vegetarierin" are
        words = len(re.sub(r"(?i)\b(i|you|we|they|he|she|it)['’](m|re|s|ve|ll|d)\b", r"\1 \2", text).split())
        told = self.brain.memory is not None and not is_question(text) and words >= REMEMBERED_WORDS \
            and topic is not Topic.REMINDER and not request_said(text)  # "delete the gym thing" asks, it tells nothing
        if told:  # "Anna hat am 12. Mai Geburtstag", "I love coffee": no entry to make, but the memory keeps it
            if hint is None and not model_down and self._told_no_model.get(turn.user.id) == turn.today:
                turn.say(tr("I'll remember that."))  # why nothing more happens was said today already
                return
            if len(self._told_no_model) > TOLD_NO_MODEL_KEPT:
                self._told_no_model.clear()
            self._told_no_model[turn.user.id] = turn.today
            turn.say(tr("I can't reach my language model right now, but I'll remember that.") if model_down
                     else tr("I'll remember that."),
                     hint or (tr("Commands and buttons still work.") if model_down
                              else tr("Without a language model I can't do more with it; /help shows what I "
                                      "understand.")))
        elif hint is not None:  # what it was about is clear: how to write that
            turn.say(tr("I can't reach my language model right now, and I didn't understand that on my own.")
                     if model_down else tr("I didn't understand that, and no language model is connected to help."),
                     hint)
        else:
            turn.say(tr("I can't reach my language model right now, and I didn't understand that on my own. "
                        "Try \"250 ml water\", \"two coffees\", \"Buy milk by Friday\" or /help.") if model_down
                     else tr("I didn't understand that, and no language model is connected to help. "
                             "Try \"250 ml water\", \"two coffees\", \"Buy milk by Friday\" or /help."))

    def _read_entry(self, turn: Turn, text: str, now: datetime) -> Awaitable[None] | None:
        """The command or the entry a free text says in words, or None."""
        word = command_word(text)
        if word is not None and word in self.commands:  # "help", "undo", "Aufgaben": the command without its slash
            return self.commands[word].handler(turn, "")
        prefixed = command_prefixed(text) or setting_said(text)
        if prefixed is not None and prefixed[0] in self.commands:
            # "Termin: Zahnarzt Montag 10 Uhr" as /termin, "sprich Deutsch" as /lang de, "ich wohne in Berlin" as /tz
            return self.commands[prefixed[0]].handler(turn, prefixed[1])
        goal_ml = water_goal_said(text)
        if goal_ml is not None:  # "Mein Wasserziel ist 2,5 Liter": the day's water target (what /today measures)
            return _said_result(turn, "set_drink_goal", {"daily_ml": goal_ml})
        forgetting = forget_said(text)
        if forgetting is not None and "forget" in self.commands:  # "forget the bike lock code": which memories
            return self._forget_in_words(turn, forgetting)
        before = before_event_said(text)
        if before is not None:  # "remind me 10 minutes before (the dentist)"
            return remind_before(turn, *before)
        reminder = free_text_reminder(text, now)
        if reminder is not None:  # set, or asked when: a request to the companion either way
            if isinstance(reminder, Text):
                what = reminder_without_when(text, now)  # "remind me to call mom": when, with buttons
                if what is not None:
                    return ask_when(turn, what)
                if reminder_of_nothing(text):  # "remind me later": of what, and when
                    return _say(turn, tr("What should I remind you of, and when? For example \"remind me at 6 pm "
                                         "to call mom\" or \"remind me tomorrow at 9 about the dentist\"."))
                return _say(turn, reminder)
            return set_reminder(turn, reminder)
        moved = reminder_moved(text, now)
        if moved is not None:  # "move the stretch reminder to 8pm": no appointment of that name is meant
            return move_reminder_in_words(turn, moved) if isinstance(moved, ReminderMove) else _say(turn, moved)
        calls = parse_free_text(text, turn.today, now=now.time())
        return _run_calls(turn, calls) if calls else None

    def _read_free_text(self, turn: Turn, text: str) -> Awaitable[None] | None:
        """The answer the rule-based readers have for a free text, in the order they are asked, or None. Only the
        first that reads the text answers (each reader is pure: nothing happens until the answer is awaited)."""
        now = local_now(turn.user, turn.now)
        entry = self._read_entry(turn, text, now)
        if entry is not None:  # a command or an entry said in words: what it changes is in the logs
            turn.ran_as_entry = True
            return entry
        if more_water_wished(text):  # "I want to drink more water": the day's water, the goal, the reminders
            return more_water(turn)
        if less_coffee_wished(text):  # "ich möchte weniger Kaffee trinken": the day's coffee and a limit to keep
            return less_coffee(turn)
        place = place_said(text)
        if place is not None:  # "ich bin im Café Luna", "I'm at the gym"
            return place_in_words(turn, place)
        if about_me_asked(text):  # "What do you know about me?", "who am I?": what the person told about themselves
            return self._about_me(turn, name=name_asked(text))
        asked = asked_about(text, turn.today)
        if asked is not None:  # "Wie viel Wasser habe ich heute getrunken?", "Was steht morgen an?"
            if asked.view is View.AGENDA and asked.day is not None:
                return day_agenda(turn, asked.day, asked.last)
            if asked.view is View.MEALS:
                return meals_today(turn)
            if asked.view is View.PAST_DAY and asked.day is not None:
                return past_day(turn, asked.day)
            if asked.view is View.NEXT_EVENT:
                return next_event(turn)
            if asked.view is View.PLACES_TODAY:
                return places_today(turn)
            if asked.view is View.CLOCK:
                return _say(turn, tr("It is {time} on {date}.", time=now.time(),
                                     date=turn.render.long_date_of(now.date())))
            return self.commands[_QUESTION_VIEWS[asked.view]].handler(turn, "")
        alone = amount_alone(text)
        if alone is not None:  # "250": which drink, a button each
            return amount_of_what(turn, alone)
        deleting = delete_target(text)
        if deleting is not None:  # "lösche die Pizza": what it may be among the entries, a button each
            return delete_in_words(turn, deleting)
        # A question with a day and a time ("Habe ich morgen um 9 einen Termin?") is no plan to offer.
        plan = None if is_question(text) else read_plan(text, now)
        if plan is not None:  # a day and a time for something: an appointment, a reminder or a task?
            return _offer(turn, plan)
        day_plan = None if is_question(text) else read_day_plan(text, turn.today)
        if day_plan is not None:  # a coming day without a time: a day in the calendar or a task?
            return _offer_day(turn, day_plan)
        name = name_said(text)
        if name is not None:  # "my name is Tom", "Hallo, ich bin Jana"
            return _call_me(turn, name)
        kind = smalltalk_of(text)
        if kind is Smalltalk.GREETING and _came_before_today(turn):  # "Guten Morgen" from someone who knows the way
            return _greet_again(turn)
        if kind is not None:  # "hi", "danke", "gute Nacht"
            return _say(turn, smalltalk_reply(kind, turn.user.display_name))
        return None

    async def _captured(self) -> None:
        """Waits (at most CAPTURE_WAIT_S) for the captures of the messages just said."""
        if self._captures:
            await asyncio.wait(list(self._captures), timeout=CAPTURE_WAIT_S)

    async def _forget_in_words(self, turn: Turn, words: str) -> None:
        await self._captured()  # what was just said is stored before it is searched for
        await self.commands["forget"].handler(turn, words)

    async def _about_me(self, turn: Turn, *, name: bool) -> None:
        await self._captured()  # what was just said is stored before it is listed
        await about_me(turn, name=name)

    async def _press(self, turn: Turn, token: str) -> None:
        try:
            async with self.brain.transactions.begin() as uow:
                action = await redeem_action(uow.session, turn.user.id, token, now=uow.now)
        except DomainError as refused:
            turn.say(refused.text)
            return
        payload: dict[str, Any] = action.payload
        handler = self.actions.get(action.kind)
        if handler is None:
            log.warning("unknown action kind %s", action.kind)
            turn.say(tr("That button is not valid."))
        elif action.kind in self.waiting:
            async with self.brain.db.unshared():
                await handler(turn, payload)
        else:
            await handler(turn, payload)
        if action.kind == DELETE_CONFIRMED:
            self.access.forget()  # their grants went with their data: their next message is a stranger's

    async def _command_pressed(self, turn: Turn, payload: dict[str, Any]) -> None:
        """A "command" button: its command runs as if typed (a command that waits on a model, unshared)."""
        await self._command(turn, str(payload["text"]))


# Smalltalk that tells nothing about the person ("hey", "danke", "ok"): not remembered, or "hey" would come back as
# what they said about something. How they feel ("I'm tired") is kept.
_SAYS_NOTHING = frozenset({Smalltalk.GREETING, Smalltalk.THANKS, Smalltalk.GOODBYE, Smalltalk.GOOD_NIGHT,
                           Smalltalk.HOW_ARE_YOU, Smalltalk.ABOUT, Smalltalk.ACK, Smalltalk.NEVER_MIND})
# How long a question answered from the memory waits for the captures still running (a message said just before).
CAPTURE_WAIT_S = 2.0
# A statement of at least this many words that no reader understood is said to be remembered (with the memory on):
# shorter ones ("bla bla") are more likely noise than something told.
REMEMBERED_WORDS = 3
TOLD_NO_MODEL_KEPT = 10_000  # people the once-a-day note is kept for in this process
# How to write what a message the reader did not understand was about (bot.parsing.hints).
_HINTS = {
    Topic.REMINDER: tr("For a reminder, say when: \"remind me tomorrow at 9 to call the dentist\", \"in 20 minutes: "
                       "tea\" or /remind."),
    Topic.APPOINTMENT: tr("For an appointment, give a day and a time: \"appointment: dentist tomorrow 14:00\" or "
                          "/event."),
    Topic.TASK: tr("For a task, write it like \"todo: buy milk by Friday\"; /tasks lists them, /done 1 completes one."),
    Topic.DRINK: tr("For a drink, write it like \"250 ml water\", \"two coffees\" or /drink tea 300."),
    Topic.MEAL: tr("For a meal, write it like \"lunch: pasta 650 kcal\" or /meal."),
    Topic.PLACE: tr("For a place, write \"I'm at Café Luna\" or /place Café Luna."),
    Topic.DELETE: tr("To delete something: /undo takes back your last entry, /meal delete your last meal, and "
                     "/task delete, /event delete, /remind delete or /place delete with its name or number."),
}


# The command whose view answers a question about the logs (bot.parsing.questions); the agenda, the meals and the
# clock are answered by functions of their own.
_QUESTION_VIEWS = {View.DAY: "today", View.TASKS: "tasks", View.REMINDERS: "remind", View.GOALS: "goal",
                   View.STREAKS: "streaks", View.EVENTS: "event", View.PLACES: "place", View.WEEK: "week"}


async def _say(turn: Turn, text: Text) -> None:
    turn.say(text)


def _came_before_today(turn: Turn) -> bool:
    arrived = turn.user.created_at
    return arrived is not None and local_date(turn.user, arrived) < turn.today


async def _greet_again(turn: Turn) -> None:
    """A greeting from someone who has been here before: their day at a glance instead of the first day's how-to."""
    snap = await turn.brain.snapshots.get(turn.user)
    name = turn.user.display_name
    hello = tr("Hi {name}!", name=name) if name else tr("Hi!")
    lines = [f"{turn.t(hello)} {turn.t(day_opening(snap))}"]
    lines.extend(turn.t(line) for line in day_lines(snap, turn.render.tz)[:-1])  # the water goal: /today has it
    lines.append(turn.t(tr("/today shows your day.")))
    turn.say("\n".join(lines))


async def _call_me(turn: Turn, name: str) -> None:
    async with turn.brain.transactions.begin() as uow:
        await set_display_name(uow, turn.user.id, name)
    turn.user.display_name = name
    turn.say(tr("Nice to meet you, {name}! Tell me what you drank, ate or want to get done, or ask me what's on "
                "tomorrow.", name=name))


async def _said_result(turn: Turn, tool: str, args: dict[str, Any]) -> None:
    turn.say_result(await turn.tool(tool, args))


async def _offer(turn: Turn, plan: ReminderRequest) -> None:
    offer_plan(turn, plan)


async def _offer_day(turn: Turn, plan: DayPlan) -> None:
    offer_day_plan(turn, plan)


async def _run_calls(turn: Turn, calls: list[ToolCall]) -> None:
    """The calls a free text asked for, in order, each said ("2 Kaffee und ein Wasser": both); the first that fails
    says why and stops the rest."""
    for call in calls[:-1]:
        result = await turn.tool(call.name, call.args)
        turn.say_result(result)
        if not result.ok:
            return
    last = calls[-1]
    result = await turn.tool(last.name, last.args)
    if last.name == "move_event" and result.error_code == "not_found" and last.args.get("date"):
        # "push the report to Friday": no appointment by that name, but a task may be one; its due day moves
        moved = await turn.tool("reschedule_task", {"task": last.args["event"], "due_date": last.args["date"]})
        if moved.ok:
            result = moved
    if last.name == "create_task":
        say_task(turn, result, time_note(last.at_time, turn.today) if last.at_time is not None else None)
        return
    # A drink written as text gets the same quick buttons as /water: the next glass, and undo; a meal, undo.
    drink = last.name == "log_drink" or (last.name == "correct_last_drink" and result.ok)
    meal = last.name == "log_meal" or (last.name == "correct_last_meal" and result.ok)
    turn.say_result(result, after_drink_buttons(turn, result) if drink
                    else after_meal_buttons(turn, result) if meal else None)


def formatting_of(platform: str) -> str:
    """What a platform's chat shows of the model's Markdown: Telegram and Matrix render it, others show text."""
    return MARKDOWN if platform in FORMATTED_PLATFORMS else PLAIN


def _can_store(text: str) -> bool:
    """False for text PostgreSQL cannot store (a NUL byte, a lone surrogate): refused, never half-written."""
    return UNSTORABLE.search(text) is None


def _readable(text: str) -> str:
    """`text` with what PostgreSQL cannot store replaced by U+FFFD (for names, which are not refused)."""
    return UNSTORABLE.sub("\ufffd", text)


def _identity(inbound: Inbound) -> str:
    return f"{inbound.platform}:{inbound.platform_user_id}"
