"""The Matrix bot against a real Synapse, with real matrix-nio clients on both sides: an invitation is
accepted and greeted, commands and free text are answered in HTML, choices are numbered and picked by a
number or a reaction (the message is then edited to say what was chosen), proposals are approved by
reaction and by `!approve`, another member's reaction does nothing, a nudge is snoozed by 💤 and the
outcome recorded, a ritual runs to its end, a group room is refused (and an encrypted one told so without
MATRIX_E2E), a restart neither repeats nor loses messages, login by token works and a wrong password is a
clear error, and `/link` joins a Matrix person and a person of another platform."""

from __future__ import annotations

from datetime import timedelta

import pytest
from nio import RoomCreateResponse
from sqlalchemy import func, select

from adapters.matrix.choices import KEYCAPS
from adapters.matrix.session import MatrixLoginError
from bot.models import MatrixRoom, MatrixUnreadableRoom
from brain.companion.models import Proposal
from brain.events.actor import ai
from brain.goals.models import Goal
from brain.modules.todo.models import Task
from brain.people.models import Identity, User
from brain.rituals.models import RitualLog
from rules.engine import RuleEngine
from tests.e2e.test_nudges import berlin, outcomes
from tests.matrix.people import MatrixPerson, numbered

pytestmark = pytest.mark.slow


async def greeted(alice: MatrixPerson, bot: str) -> str:
    """Alice opens a direct room with the bot and gets its greeting; returns the room id."""
    mark = alice.mark()
    room = await alice.open_direct_room(bot)
    await alice.message_from(bot, room, after=mark, contains="Hello")
    return room


async def matrix_user(brain, mxid: str) -> User:  # type: ignore[no-untyped-def]
    async with brain.transactions.read() as session:
        user = await session.scalar(select(User).join(Identity, Identity.user_id == User.id).where(
            Identity.platform == "matrix", Identity.platform_id == mxid))
    assert user is not None
    return user


async def test_an_invitation_is_accepted_and_answered_with_the_greeting(matrix_bot, matrix_people, brain) -> None:
    alice = await matrix_people()
    mark = alice.mark()
    room = await alice.open_direct_room(matrix_bot.user_id)
    await alice.message_from(matrix_bot.user_id, room, after=mark, contains="Hello")
    step = await alice.message_from(matrix_bot.user_id, room, after=mark, contains="which language")
    assert numbered(step) == {"English ✓": 1, "Deutsch": 2, "Skip": 3}  # the buttons as numbered choices
    assert "<ol><li>English ✓</li><li>Deutsch</li><li>Skip</li></ol>" in step.source["content"]["formatted_body"]
    assert await alice.reactions_on(matrix_bot.user_id, step.event_id, 3) == list(KEYCAPS[:3])
    user = await matrix_user(brain, alice.user_id)
    async with brain.transactions.read() as session:
        rooms = (await session.scalars(select(MatrixRoom).where(MatrixRoom.user_id == user.id))).all()
    assert [(r.room_id, r.direct) for r in rooms] == [(room, True)]


async def test_commands_with_either_prefix_and_free_text_are_answered_in_html(matrix_bot, matrix_people) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    reply = await alice.say(bot, room, "!task <b>Einkaufen</b> & mehr", contains="Added the task")
    content = reply.source["content"]
    assert content["msgtype"] == "m.text" and content["format"] == "org.matrix.custom.html"
    assert "&lt;b&gt;Einkaufen&lt;/b&gt; &amp; mehr" in content["formatted_body"]
    assert "<b>Einkaufen</b> & mehr" in reply.body
    assert "Logged 250 ml water" in (await alice.say(bot, room, "/water 250", contains="Logged")).body
    assert "Logged" in (await alice.say(bot, room, "250 ml water", contains="Logged")).body
    today = await alice.say(bot, room, "!today", contains="Today")
    assert "Water: 500 ml" in today.body and "<br>" in today.source["content"]["formatted_body"]


async def test_the_goal_flow_runs_to_the_end_by_numbers_and_reactions(matrix_bot, matrix_people, brain) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    overview = await alice.say(bot, room, "!goal", contains="No goals yet")
    choices = numbered(overview)
    await alice.reactions_on(bot, overview.event_id, min(len(choices), len(KEYCAPS)))
    mark = alice.mark()
    step = await alice.say(bot, room, str(choices["Custom goal…"]), contains="What should the goal count?")
    assert (await alice.edit_of(bot, overview.event_id, after=mark)).endswith("Chosen: Custom goal…")
    await alice.reactions_on(bot, step.event_id, min(len(numbered(step)), len(KEYCAPS)))
    mark = alice.mark()
    await alice.react(room, step.event_id, KEYCAPS[numbered(step)["Coffees"] - 1])
    step = await alice.message_from(bot, room, after=mark, contains="at least or at most")
    step = await alice.say(bot, room, str(numbered(step)["At most"]), contains="how many")
    step = await alice.say(bot, room, str(numbered(step)["2 coffees"]), contains="Per day, per week or per month?")
    await alice.reactions_on(bot, step.event_id, min(len(numbered(step)), len(KEYCAPS)))
    mark = alice.mark()
    await alice.react(room, step.event_id, KEYCAPS[numbered(step)["Per day"] - 1])
    await alice.message_from(bot, room, after=mark, contains="New goal: At most 2 coffees a day.")
    async with brain.transactions.read() as session:
        goals = (await session.scalars(select(Goal))).all()
    assert [(g.comparison, g.target, g.period) for g in goals] == [("<=", 2, "day")]
    # A used choice answers once: its number typed afterwards in reply to it is refused, not run twice.
    mark = alice.mark()
    await alice.send(room, str(numbered(step)["Per day"]), reply_to=step.event_id)
    await alice.message_from(bot, room, after=mark, contains="already used")


async def test_a_proposal_is_approved_by_reaction_and_another_by_command(matrix_bot, matrix_people, brain) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    user = await matrix_user(brain, alice.user_id)
    for title in ("Buy milk", "Water the plants"):
        result = await brain.tools.execute(user.id, "create_task", {"title": title}, ai(rationale="x"))
        assert result.ok and result.data["status"] == "proposed"
    mark = alice.mark()
    await alice.send(room, "!proposals")
    milk = await alice.message_from(bot, room, after=mark, contains="Buy milk")
    plants = await alice.message_from(bot, room, after=mark, contains="Water the plants")
    assert numbered(milk) == {"Approve": 1, "Reject": 2}
    assert await alice.reactions_on(bot, milk.event_id, 2, after=mark) == ["✅", "❌"]  # no numbers needed

    mark = alice.mark()
    await alice.react(room, milk.event_id, "✅")
    assert "Approved" in (await alice.message_from(bot, room, after=mark, contains="Approved")).body
    assert (await alice.edit_of(bot, milk.event_id, after=mark)).endswith("Chosen: Approve")

    async with brain.transactions.read() as session:
        waiting = await session.scalar(select(Proposal).where(Proposal.status == "pending"))
    assert waiting is not None and "Water the plants" in plants.body
    mark = alice.mark()
    reply = await alice.say(bot, room, f"!approve {str(waiting.id)[:8]}", contains="Approved")
    assert "Water the plants" in reply.body
    # Approved by typing: the message that asked is closed as if its choice had been picked.
    assert (await alice.edit_of(bot, plants.event_id, after=mark)).endswith("Chosen: Approve")
    async with brain.transactions.read() as session:
        assert sorted((await session.scalars(select(Task.title))).all()) == ["Buy milk", "Water the plants"]


async def test_reject_asks_why_in_reply_to_the_proposal_and_a_reply_to_that_is_the_reason(
        matrix_bot, matrix_people, brain) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    user = await matrix_user(brain, alice.user_id)
    assert (await brain.tools.execute(user.id, "create_task", {"title": "Buy milk"}, ai(rationale="x"))).ok
    mark = alice.mark()
    await alice.send(room, "!proposals")
    milk = await alice.message_from(bot, room, after=mark, contains="Buy milk")
    mark = alice.mark()
    await alice.react(room, milk.event_id, "❌")
    why = await alice.message_from(bot, room, after=mark, contains="Why? (optional)")
    assert why.source["content"]["m.relates_to"] == {"m.in_reply_to": {"event_id": milk.event_id}}
    mark = alice.mark()
    await alice.send(room, "not this week", reply_to=why.event_id)
    noted = await alice.message_from(bot, room, after=mark, contains="Noted why")
    assert "not this week" in noted.body
    async with brain.transactions.read() as session:
        proposal = await session.scalar(select(Proposal))
    assert proposal is not None and (proposal.status, proposal.reason) == ("rejected", "not this week")


async def test_a_reaction_by_another_member_is_ignored(bot_runner, matrix_people, brain) -> None:
    await bot_runner.start(allow_group_rooms=True)
    bot = bot_runner.user_id
    alice, mallory = await matrix_people(), await matrix_people()
    mark = alice.mark()
    created = await alice.client.room_create(invite=[bot, mallory.user_id])
    assert isinstance(created, RoomCreateResponse)
    room = created.room_id
    await mallory.client.join(room)
    await alice.message_from(bot, room, after=mark, contains="Hello")
    overview = await alice.say(bot, room, "!goal", contains="No goals yet")
    await alice.reactions_on(bot, overview.event_id, min(len(numbered(overview)), len(KEYCAPS)))

    mark = alice.mark()
    await mallory.react(room, overview.event_id, "1️⃣")  # not hers: nothing happens
    await alice.react(room, overview.event_id, "2️⃣")
    answer = await alice.message_from(bot, room, after=mark, contains="New goal")
    assert alice.messages_from(bot, room, after=mark) == [answer]  # only Alice's reaction was answered
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(Goal)) == 1
        strangers = await session.scalar(select(func.count()).select_from(Identity).where(
            Identity.platform_id == mallory.user_id))
    assert strangers == 0  # a stranger's reaction does not even create a user


async def test_a_room_with_several_people_is_refused_politely_and_left(matrix_bot, matrix_people, brain) -> None:
    alice, bob = await matrix_people(), await matrix_people()
    bot = matrix_bot.user_id
    mark = alice.mark()
    created = await alice.client.room_create(invite=[bot, bob.user_id])
    assert isinstance(created, RoomCreateResponse)
    refusal = await alice.message_from(bot, created.room_id, after=mark, contains="one person at a time")
    assert "direct chat" in refusal.body
    await alice.left(bot, created.room_id, after=mark)
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(MatrixRoom)) == 0


async def test_a_nudge_is_snoozed_by_reaction_and_the_outcome_recorded(matrix_bot, matrix_people, brain,
                                                                      clock) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    clock.set(berlin(8, 0))
    room = await greeted(alice, bot)
    user = await matrix_user(brain, alice.user_id)
    clock.set(berlin(9, 30))
    mark = alice.mark()
    report = await RuleEngine(brain).tick(berlin(9, 30))
    assert user.id in report.sent_to
    matrix_bot.bot.delivery.wake()
    nudge = await alice.message_from(bot, room, after=mark, contains="Still 2,000 ml to your goal today")
    assert list(numbered(nudge)) == ["Log 250 ml water", "💤 Snooze 15 min", "💤 1 h", "Tomorrow", "Dismiss"]
    assert await alice.reactions_on(bot, nudge.event_id, 5, after=mark) == ["✅", "❌", "💤", KEYCAPS[2], KEYCAPS[3]]

    clock.advance(timedelta(minutes=2))
    mark = alice.mark()
    await alice.react(room, nudge.event_id, "💤")
    snoozed = await alice.message_from(bot, room, after=mark, contains="Okay, I'll remind you again at")
    assert "9:47" in snoozed.body  # 15 minutes after the reaction
    assert (await alice.edit_of(bot, nudge.event_id, after=mark)).endswith("Chosen: Snooze 15 min")
    assert ("water", "snoozed") in await outcomes(brain, user.id)


async def test_a_restart_neither_repeats_old_messages_nor_loses_new_ones(bot_runner, matrix_people) -> None:
    first = await bot_runner.start()
    bot = bot_runner.user_id
    alice = await matrix_people()
    room = await greeted(alice, bot)
    await alice.say(bot, room, "!water 250", contains="Logged 250 ml water")
    device = first.session.device_id
    await bot_runner.stop()

    mark = alice.mark()
    await alice.send(room, "!water 100")  # written while the bot is away
    second = await bot_runner.start()
    assert second.session.device_id == device  # the same device, not a new login
    await alice.message_from(bot, room, after=mark, contains="Logged 100 ml water")
    today = await alice.say(bot, room, "!today", contains="Today")
    assert "Water: 350 ml" in today.body  # 250 + 100: the first message was not handled again
    assert len(alice.messages_from(bot, room, after=mark)) == 2  # no greeting or old answer repeated


async def test_link_joins_a_matrix_person_and_a_person_of_another_platform(matrix_bot, matrix_people, person,
                                                                           brain) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    elsewhere = person()
    await elsewhere.send("/water 300")
    answer = await elsewhere.send("/link")
    code = answer.split("Your link code: ", 1)[1].split()[0]
    reply = await alice.say(bot, room, f"!link {code}", contains="Linked")
    assert "same companion" in reply.body
    today = await alice.say(bot, room, "!today", contains="Today")
    assert "Water: 300 ml" in today.body  # the other platform's entries, reached from Matrix
    async with brain.transactions.read() as session:
        owners = set((await session.scalars(select(Identity.user_id).where(
            Identity.platform_id.in_([alice.user_id, elsewhere.handle])))).all())
        rooms = (await session.scalars(select(MatrixRoom.user_id))).all()
    assert len(owners) == 1 and list(rooms) == list(owners)  # the Matrix room now reaches the linked person


async def test_an_access_token_logs_in_and_a_wrong_password_is_a_clear_error(bot_runner, matrix_people) -> None:
    token = bot_runner.account.access_token
    with pytest.raises(MatrixLoginError, match=r"login as .* failed"):
        await bot_runner.start(password="wrong")
    started = await bot_runner.start(password=None, access_token=token)
    assert started.session.device_id == bot_runner.account.device_id and started.session.access_token is None
    alice = await matrix_people()
    await greeted(alice, bot_runner.user_id)


async def test_without_encryption_an_encrypted_room_is_told_so_and_nothing_else(matrix_bot, matrix_people) -> None:
    alice = await matrix_people()
    mark = alice.mark()
    room = await alice.open_direct_room(matrix_bot.user_id, encrypted=True)
    notice = await alice.message_from(matrix_bot.user_id, room, after=mark, contains="This chat is encrypted")
    assert "turn encryption off" in notice.body
    await greeted(alice, matrix_bot.user_id)  # a readable room is greeted, after the encrypted one was handled
    assert alice.messages_from(matrix_bot.user_id, room, after=mark) == [notice]  # no greeting in the unreadable one


async def test_an_encrypted_room_hears_nothing_more_after_its_notice_also_after_a_restart(
        bot_runner, matrix_people, brain) -> None:  # type: ignore[no-untyped-def]
    await bot_runner.start()
    alice = await matrix_people()
    mark = alice.mark()
    room = await alice.open_direct_room(bot_runner.user_id, encrypted=True)
    notice = await alice.message_from(bot_runner.user_id, room, after=mark, contains="This chat is encrypted")
    async with brain.transactions.read() as session:
        assert (await session.scalars(select(MatrixUnreadableRoom.room_id))).all() == [room]
    await bot_runner.stop()
    await bot_runner.start()  # a new process: what it told the room is read from the database
    await alice.send(room, "!water 250")  # Alice's client writes in the clear; still nothing is answered there
    await alice.send(room, "hello?")
    await greeted(alice, bot_runner.user_id)  # a readable room is answered, after the two messages were read
    assert alice.messages_from(bot_runner.user_id, room, after=mark) == [notice]
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(User)) == 1  # only the readable room's Alice


async def test_a_ritual_runs_to_the_end_by_reaction_and_number(matrix_bot, matrix_people, brain) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    overview = await alice.say(bot, room, "!ritual", contains="No rituals yet")
    first = await alice.say(bot, room, str(numbered(overview)["+ Morning routine"]), contains="step 1 of 5")
    assert list(numbered(first)) == ["Done", "Skip", "Stop the ritual"]
    await alice.reactions_on(bot, first.event_id, 1)
    mark = alice.mark()
    await alice.react(room, first.event_id, "1️⃣")  # Done: only the bot's own reactions count (no ✅ here)
    mood = await alice.message_from(bot, room, after=mark, contains="How do you feel this morning?")
    done = await alice.say(bot, room, str(numbered(mood)["4 🙂"]), contains="Morning routine done")
    assert "every step" in done.body
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(RitualLog)) == 1
