"""Matrix, against a real Synapse with real matrix-nio clients: only the bot's own choice reactions count (👍 is a
reaction, not an answer), a question is answered once (a second choice on the same message is "already answered"
and changes nothing), a typed number answers the message it replies to or else the newest open question, an edit is
not applied and says how to fix the entry, and group rooms joined while they were allowed are left at the next start
without the setting."""

from __future__ import annotations

import pytest
from nio import RoomCreateResponse
from sqlalchemy import func, select

from brain.core import Brain
from brain.goals.models import Goal
from brain.modules.drink.models import DrinkEntry
from tests.matrix.people import MatrixPerson, numbered
from tests.matrix.test_matrix_bot import greeted
from tests.personal_rows import personal_rows

pytestmark = pytest.mark.slow


async def water_ml(brain: Brain) -> int:
    async with brain.transactions.read() as session:
        return int(await session.scalar(select(func.coalesce(func.sum(DrinkEntry.quantity_ml), 0))) or 0)


async def answered(alice: MatrixPerson, bot: str, room: str, mark: int) -> None:
    """Everything sent before `mark` was handled: a command sent now is answered after it (one room, in order)."""
    await alice.say(bot, room, "!help", contains="What I understand")


async def test_only_the_bots_own_reactions_count_and_a_question_is_answered_once(matrix_bot, matrix_people,
                                                                                 brain: Brain) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    water = await alice.say(bot, room, "!water 250", contains="Logged 250 ml water")
    choices = numbered(water)
    await alice.reactions_on(bot, water.event_id, len(choices))
    before = await personal_rows(brain)
    mark = alice.mark()
    await alice.react(room, water.event_id, "👍")  # Element's first quick reaction: not an answer
    await answered(alice, bot, room, mark)
    assert len(alice.messages_from(bot, room, after=mark)) == 1
    assert await water_ml(brain) == 250
    after = await personal_rows(brain)
    assert {table for table, count in after.items() if count != before[table]} <= {"outbox", "action_tokens"}
    assert after["outbox"] == before["outbox"] + 1  # the help's reply, nothing for the 👍

    mark = alice.mark()
    await alice.react(room, water.event_id, "1️⃣")
    await alice.message_from(bot, room, after=mark, contains="Logged")
    logged = await water_ml(brain)
    assert logged > 250
    mark = alice.mark()
    await alice.react(room, water.event_id, "3️⃣")  # the same question, answered already
    await alice.message_from(bot, room, after=mark, contains="already answered")
    await answered(alice, bot, room, mark)
    assert await water_ml(brain) == logged  # the second choice (Undo) changed nothing


async def test_a_typed_number_answers_its_reply_target_or_the_newest_open_question(matrix_bot, matrix_people,
                                                                                   brain: Brain) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    overview = await alice.say(bot, room, "!goal", contains="No goals yet")
    water = await alice.say(bot, room, "!water 250", contains="Logged 250 ml water")
    undone = await alice.say(bot, room, str(numbered(water)["Undo"]), contains="")  # the newest question: water
    assert "250" in undone.body and await water_ml(brain) == 0
    # The water question is settled now: a number without a reply answers the newest open one, the goals.
    await alice.say(bot, room, str(numbered(overview)["Custom goal…"]), contains="What should the goal count?")
    mark = alice.mark()
    await alice.send(room, "1", reply_to=water.event_id)  # a reply to the settled question
    await alice.message_from(bot, room, after=mark, contains="already")
    assert await water_ml(brain) == 0
    async with brain.transactions.read() as session:
        assert await session.scalar(select(func.count()).select_from(Goal)) == 0


async def test_an_edit_is_not_applied_and_says_how_to_fix_the_entry(matrix_bot, matrix_people, brain: Brain) -> None:
    alice = await matrix_people()
    bot = matrix_bot.user_id
    room = await greeted(alice, bot)
    mark = alice.mark()
    sent = await alice.send(room, "!water 300")
    await alice.message_from(bot, room, after=mark, contains="Logged 300 ml water")
    mark = alice.mark()
    await alice.edit(room, sent, "!water 500")
    note = await alice.message_from(bot, room, after=mark, contains="Edits aren't applied")
    assert "!undo" in note.body
    assert await water_ml(brain) == 300


async def test_group_rooms_joined_while_allowed_are_left_at_the_next_start_without_it(bot_runner, matrix_people,
                                                                                     brain: Brain) -> None:
    await bot_runner.start(allow_group_rooms=True)
    bot = bot_runner.user_id
    alice, bob = await matrix_people(), await matrix_people()
    mark = alice.mark()
    created = await alice.client.room_create(invite=[bot, bob.user_id])
    assert isinstance(created, RoomCreateResponse)
    group = created.room_id
    await bob.client.join(group)
    await alice.message_from(bot, group, after=mark, contains="Hello")
    await bot_runner.stop()

    mark = alice.mark()
    await bot_runner.start(allow_group_rooms=False)
    notice = await alice.message_from(bot, group, after=mark, contains="one person at a time")
    assert "direct chat" in notice.body
    await alice.left(bot, group, after=mark)
    before = await personal_rows(brain)
    await alice.send(group, "!today")  # nobody there to read it
    mark_direct = alice.mark()
    room = await alice.open_direct_room(bot)
    await alice.message_from(bot, room, after=mark_direct, contains="Welcome back")
    await alice.say(bot, room, "!today", contains="Today")
    assert alice.messages_from(bot, group, after=mark) == [notice]
    assert before["matrix_rooms"] == (await personal_rows(brain))["matrix_rooms"] - 1  # the direct room only
