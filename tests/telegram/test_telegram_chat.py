"""The real python-telegram-bot against the fake Bot API: commands and free text get replies, a shared
location logs a place visit, /week arrives as a photo, HTML is escaped (with a plain-text fallback), a long
reply is split with the buttons on its last part, a replayed update has no second effect, one chat's
messages are handled in order, and expired and used buttons are refused."""

from __future__ import annotations

import asyncio
from datetime import datetime, timedelta

from sqlalchemy import func, select

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.inbound import PLATFORM
from bot.commands import Command
from bot.dialog import Dialog
from bot.inbound import Inbound
from bot.turn import Turn
from bot.updates import UpdateClaim
from brain.clock import FixedClock
from brain.core import Brain
from brain.events.actor import USER
from brain.modules.drink.models import DrinkEntry
from brain.modules.places.models import PlaceVisit
from brain.people.models import Identity
from brain.pulse.models import PulseState
from tests.conftest import checkouts
from tests.telegram.conftest import make_adapter, press, replies_after, send, toast, user_id_of
from tests.telegram.fake_bot_api import FakeBotAPI


async def drinks(brain: Brain) -> int:
    async with brain.transactions.read() as session:
        return int(await session.scalar(select(func.count()).select_from(DrinkEntry)) or 0)


async def test_command_gets_a_reply_in_html(telegram: TelegramAdapter, api: FakeBotAPI, person) -> None:
    alice = person()
    (reply,) = await send(api, alice, "/help")
    assert "What I understand" in reply.text and "/water" in reply.text
    assert reply.params["parse_mode"] == "HTML"
    assert [c.method for c in api.calls][:2] == ["getMe", "deleteWebhook"]  # polling mode clears a webhook


async def test_free_text_runs_a_tool_while_typing_is_shown(telegram: TelegramAdapter, api: FakeBotAPI, person,
                                                           brain: Brain) -> None:
    alice = person()
    (reply,) = await send(api, alice, "250 ml water")
    assert "Logged 250 ml water" in reply.text
    assert await drinks(brain) == 1
    (typing,) = api.calls_of("sendChatAction", alice.id)
    assert typing.params["action"] == "typing" and typing.at <= reply.at
    await send(api, alice, "/today")
    assert len(api.calls_of("sendChatAction", alice.id)) == 1  # commands need no "typing"


async def test_a_shared_location_logs_a_visit_of_the_place_nearby(telegram: TelegramAdapter, api: FakeBotAPI,
                                                                  person, brain: Brain) -> None:
    alice = person()
    await send(api, alice, "/help")
    user_id = await user_id_of(brain, alice)
    created = await brain.tools.execute(user_id, "create_place", {"name": "Café Luna", "lat": 52.52, "lng": 13.405},
                                        USER)
    assert created.ok
    before = len(api.calls_of("sendMessage", alice.id))
    api.push(api.location(alice, 52.5201, 13.4051))
    (reply,) = await replies_after(api, alice.id, before, 1)
    assert "Café Luna" in reply.text
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(PlaceVisit)) == 1


async def test_week_chart_arrives_as_a_photo_with_its_caption(telegram: TelegramAdapter, api: FakeBotAPI,
                                                              person) -> None:
    alice = person()
    api.push(api.text(alice, "/week"))
    (photo,) = await api.wait_for("sendPhoto", chat_id=alice.id)
    assert photo.params["caption"] == "Your last 7 days\nNothing logged in these seven days yet."
    assert photo.params["photo_bytes"] > 1000
    assert api.calls_of("sendMessage", alice.id) == []


async def test_html_is_escaped_and_a_rejected_markup_is_sent_as_plain_text(
        telegram: TelegramAdapter, api: FakeBotAPI, person) -> None:
    alice = person()
    (reply,) = await send(api, alice, "/task Buy <milk> & eggs")
    assert "Buy &lt;milk&gt; &amp; eggs" in reply.text
    api.fail("sendMessage", status=400, description="Bad Request: can't parse entities: unsupported start tag",
             when=lambda params: params.get("parse_mode") == "HTML")
    (refused, plain) = await send(api, alice, "/task Call <Bob>", replies=2)
    assert refused.params.get("parse_mode") == "HTML"
    assert "parse_mode" not in plain.params and "Call <Bob>" in plain.text


async def test_a_9000_character_reply_is_split_in_three_with_the_buttons_on_the_last(
        telegram: TelegramAdapter, api: FakeBotAPI, person, dialog: Dialog) -> None:
    paragraph = "All work and no play makes Jack a dull boy. " * 20 + "\n"  # 881 characters
    text = (paragraph * 11)[:9000]

    async def long(turn: Turn, args: str) -> None:
        turn.say(text, buttons=[[turn.button("More", "goal_flow")]])

    dialog.commands["long"] = Command("long", "/long", "A long reply", long)
    alice = person()
    parts = await send(api, alice, "/long", replies=3)
    assert [len(p.text) <= 4096 for p in parts] == [True, True, True]
    assert "".join(p.text for p in parts).replace("\n", "") == text.replace("\n", "")
    assert [bool(p.keyboard) for p in parts] == [False, False, True]
    assert parts[0].text.endswith("dull boy. ")  # cut at a line break, not inside a word


async def test_the_same_update_twice_has_one_effect(telegram: TelegramAdapter, api: FakeBotAPI, person,
                                                    brain: Brain) -> None:
    alice = person()
    update = api.text(alice, "250 ml water")
    update_id = api.push(update)
    await replies_after(api, alice.id, 0, 1)
    api.replay(update_id, update)
    await send(api, alice, "/help")  # handled after the replay: one chat's updates keep their order
    assert await drinks(brain) == 1
    assert len(api.calls_of("sendMessage", alice.id)) == 2


async def test_taking_an_update_notes_the_message_and_a_replay_notes_nothing(brain: Brain, dialog: Dialog,
                                                                              clock: FixedClock) -> None:
    inbound = Inbound(platform=PLATFORM, platform_user_id="9001", chat_id="9001", message_id="1", text="/help")

    async def noted_at() -> datetime | None:
        async with brain.transactions.read() as session:
            return await session.scalar(
                select(PulseState.last_inbound_at).join(Identity, Identity.user_id == PulseState.user_id)
                .where(Identity.platform == PLATFORM, Identity.platform_id == "9001"))

    first = UpdateClaim(brain, 42, 555, inbound)
    await dialog.handle(inbound, take=first)  # first contact: the person is created in that transaction
    await dialog.handle(inbound, take=UpdateClaim(brain, 42, 556, inbound))  # known: the claim and the note at once
    assert await noted_at() == clock.now()
    clock.advance(timedelta(minutes=5))
    replay = UpdateClaim(brain, 42, 556, inbound)
    assert await dialog.handle(inbound, take=replay) == []
    assert first.taken and not replay.taken and replay.decided.is_set()
    assert await noted_at() == clock.now() - timedelta(minutes=5)
    await dialog.handle(inbound, take=UpdateClaim(brain, 42, 557, inbound))
    assert await noted_at() == clock.now()


async def test_one_chats_messages_are_handled_in_order(telegram: TelegramAdapter, api: FakeBotAPI, person) -> None:
    alice = person()
    for amount in (100, 200, 300, 400, 500):
        api.push(api.text(alice, f"/water {amount}"))
    replies = await api.wait_for("sendMessage", chat_id=alice.id, count=5)
    totals = ["100 of", "300 of", "600 of", "1,000 of", "1,500 of"]
    assert [total in reply.text for reply, total in zip(replies, totals, strict=True)] == [True] * 5


async def test_an_expired_button_says_so_in_the_callback_answer_and_its_keyboard_is_removed(
        telegram: TelegramAdapter, api: FakeBotAPI, person, clock: FixedClock) -> None:
    alice = person()
    (menu,) = await send(api, alice, "/goal")
    clock.advance(timedelta(days=3))  # buttons live two days
    assert "expired" in await toast(api, alice, "Custom goal…", menu)
    (edit,) = await api.wait_for("editMessageReplyMarkup", chat_id=alice.id)
    assert len(api.calls_of("sendMessage", alice.id)) == 1  # the callback answer says it, not a new message
    assert edit.params["message_id"] == menu.params["_message_id"]


async def test_a_used_button_of_a_flow_step_loses_its_keyboard_and_the_flow_goes_on(
        telegram: TelegramAdapter, api: FakeBotAPI, person) -> None:
    alice = person()
    (menu,) = await send(api, alice, "/goal")
    (question,) = await press(api, alice, "Custom goal…", menu)
    assert "What should the goal count?" in question.text
    await api.wait_for("editMessageReplyMarkup", chat_id=alice.id)
    sent = len(api.calls_of("sendMessage", alice.id))
    # a client that still shows the old keyboard
    assert "already used" in await toast(api, alice, "Custom goal…", menu)
    # another button of the same, settled message
    assert "already answered" in await toast(api, alice, "+ 8 glasses of water a day", menu)
    assert len(api.calls_of("sendMessage", alice.id)) == sent


async def test_a_button_is_handled_while_a_long_turn_of_the_same_chat_runs(
        telegram: TelegramAdapter, api: FakeBotAPI, person, dialog: Dialog) -> None:
    release = asyncio.Event()

    async def slow(turn: Turn, args: str) -> None:
        await release.wait()  # a companion turn waiting for the model
        turn.say("done thinking")

    dialog.commands["slow"] = Command("slow", "/slow", "A slow turn", slow)
    alice = person()
    (menu,) = await send(api, alice, "/goal")
    api.push(api.text(alice, "/slow"))
    (question,) = await press(api, alice, "Custom goal…", menu)  # answered while /slow still runs
    assert "What should the goal count?" in question.text
    release.set()
    (done,) = await replies_after(api, alice.id, 2, 1)
    assert done.text == "done thinking"


async def test_the_goal_flow_to_its_end_by_buttons(telegram: TelegramAdapter, api: FakeBotAPI, person) -> None:
    alice = person()
    (menu,) = await send(api, alice, "/goal")
    (what,) = await press(api, alice, "Custom goal…", menu)
    (how,) = await press(api, alice, "Water glasses", what)
    (many,) = await press(api, alice, "At least", how)
    (period,) = await press(api, alice, "8 glasses of water", many)
    (made,) = await press(api, alice, "Per day", period)
    assert "8 glasses of water" in made.text and not made.keyboard
    (listing,) = await send(api, alice, "/goal")
    assert "Your goals:" in listing.text and "0/8 today" in listing.text


async def test_a_replayed_free_text_shows_no_typing_and_gets_no_reply(telegram: TelegramAdapter, api: FakeBotAPI,
                                                                      person, brain: Brain) -> None:
    alice = person()
    update = api.text(alice, "250 ml water")
    update_id = api.push(update)
    await replies_after(api, alice.id, 0, 1)
    assert len(api.calls_of("sendChatAction", alice.id)) == 1
    api.replay(update_id, update)
    await send(api, alice, "/help")  # handled after the replay
    assert len(api.calls_of("sendChatAction", alice.id)) == 1  # "typing" waits until the update is taken
    assert len(api.calls_of("sendMessage", alice.id)) == 2
    assert await drinks(brain) == 1


async def test_a_known_persons_command_takes_two_connections_from_the_pool(
        brain: Brain, dialog: Dialog, api: FakeBotAPI, person) -> None:
    """One for the dialog's glances, which the delivery's in-flight mark shares, and one for the claiming
    transaction; the mark no longer takes one of its own (it did: three)."""
    adapter = make_adapter(brain, dialog, api, sender_poll_interval=3600.0)  # no background pass meanwhile
    await adapter.start()
    try:
        alice = person()
        await send(api, alice, "/today")  # first contact
        with checkouts(brain) as taken:
            (reply,) = await send(api, alice, "/today")
        assert reply.text and len(taken) == 2
    finally:
        await adapter.stop()
