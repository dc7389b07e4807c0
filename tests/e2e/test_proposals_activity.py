"""Through the dialog: an AI proposal shows Approve / Reject buttons, pressing Approve runs it once, /reject
takes a reason, another person's button does nothing, /activity lists the AI's writes with an Undo that
works (and pages with More), and /settings toggles what the AI may do."""

from __future__ import annotations

import uuid
from datetime import timedelta

from sqlalchemy import select

from bot.inbound import Inbound
from bot.turn import Turn
from brain.clock import FixedClock
from brain.companion.models import CompanionSettings, Proposal
from brain.core import Brain
from brain.events.actor import USER, ai
from brain.events.store import EventRecord
from brain.modules.drink.models import DrinkEntry
from brain.modules.places.models import Place, PlaceVisit
from brain.modules.todo.models import Task
from brain.people.models import Identity, User
from brain.tools import proposals
from tests.e2e.conftest import Person


async def user_of(brain: Brain, who: Person) -> User:
    await who.send("/start")
    async with brain.transactions.read() as s:
        user = await s.scalar(select(User).join(Identity, Identity.user_id == User.id)
                              .where(Identity.platform == "test", Identity.platform_id == who.handle))
    assert user is not None
    return user


async def ai_proposes_task(brain: Brain, user: User, title: str = "Buy milk") -> str:
    result = await brain.tools.execute(user.id, "create_task", {"title": title}, ai("you ran out of milk"))
    assert result.ok and result.data["status"] == "proposed"
    return str(result.data["proposal_id"])


async def tasks(brain: Brain) -> list[str]:
    async with brain.transactions.read() as s:
        return list((await s.scalars(select(Task.title))).all())


# ---- proposals -----------------------------------------------------------------------------------------
async def test_a_proposal_result_gets_approve_and_reject_buttons_that_work_once(brain: Brain, person) -> None:
    alice = person()
    user = await user_of(brain, alice)
    result = await brain.tools.execute(user.id, "create_task", {"title": "Buy milk"}, ai("you ran out of milk"))
    # What a companion turn does with the result: say it.
    turn = Turn(brain, user, Inbound(platform="test", platform_user_id=alice.handle, chat_id=alice.handle,
                                     message_id="t-1"))
    turn.say_result(result)
    (message,) = await turn.flush()
    # the reason the model gave (not the person's own message) is shown
    assert message.text == "Create the task «Buy milk»?\nWhy: you ran out of milk"
    labels = {b.label: b.token for b in message.flat_buttons()}
    assert set(labels) == {"Approve", "Reject"}

    approved = await alice.press(labels["Approve"])
    assert "Approved" in approved and "Buy milk" in approved
    assert await tasks(brain) == ["Buy milk"]
    late = await alice.press(labels["Reject"])
    assert "already approved" in late
    assert await tasks(brain) == ["Buy milk"]


async def test_proposals_lists_the_waiting_ones_with_buttons_and_approve_by_command(brain: Brain, person) -> None:
    alice = person()
    user = await user_of(brain, alice)
    assert "Nothing is waiting" in await alice.send("/proposals")
    first = await ai_proposes_task(brain, user, "Buy milk")
    await ai_proposes_task(brain, user, "Water the plants")
    listing = await alice.send("/proposals")
    assert "2 proposals are waiting" in listing and first[:8] in listing and "Water the plants" in listing
    assert len([m for m in alice.last if m.flat_buttons()]) == 2
    answer = await alice.send(f"/approve {first[:8]}")
    assert "Approved" in answer and await tasks(brain) == ["Buy milk"]
    assert "already approved" in await alice.send(f"/approve {first[:8]}")
    listing = await alice.send("/proposals")
    assert "One proposal is waiting" in listing and "Water the plants" in listing and "Buy milk" not in listing


async def test_reject_button_asks_why_and_the_next_message_reaches_the_feedback(brain: Brain, person) -> None:
    alice = person()
    user = await user_of(brain, alice)
    await ai_proposes_task(brain, user)
    await alice.send("/proposals")
    answer = await alice.press(alice.buttons()["Reject"])
    assert answer.startswith("Rejected: Create the task") and answer.endswith("Why? (optional)")
    assert alice.last[-1].asks_reply and set(alice.buttons()) == {"No reason"}
    noted = await alice.send("I have oat milk at home")
    assert "I have oat milk at home" in noted
    async with brain.transactions.begin() as uow:
        (feedback,) = await proposals.take_feedback(uow.session, user.id)
    assert feedback.reason == "I have oat milk at home" and feedback.tool_name == "create_task"
    assert await tasks(brain) == []


async def test_reject_with_reason_in_one_command(brain: Brain, person) -> None:
    alice = person()
    user = await user_of(brain, alice)
    proposal_id = await ai_proposes_task(brain, user)
    answer = await alice.send(f"/reject {proposal_id[:8]} not this week")
    assert "Rejected" in answer and "not this week" in answer
    async with brain.transactions.read() as s:
        row = await s.get(Proposal, uuid.UUID(proposal_id))
    assert row is not None and row.status == "rejected" and row.reason == "not this week"


async def test_another_persons_button_and_id_are_refused(brain: Brain, person, db_state) -> None:
    alice, mallory = person(), person()
    user = await user_of(brain, alice)
    await user_of(brain, mallory)
    proposal_id = await ai_proposes_task(brain, user)
    await alice.send("/proposals")
    approve = alice.buttons()["Approve"]
    before = await db_state()
    assert "not valid" in await mallory.press(approve)
    assert "can't find" in await mallory.send(f"/approve {proposal_id[:8]}")
    assert "can't find" in await mallory.send(f"/reject {proposal_id} spam")
    assert await db_state() == before
    assert "Approved" in await alice.press(approve)  # the owner's button still works


async def test_pressing_approve_on_an_expired_proposal_says_so(brain: Brain, person, clock: FixedClock) -> None:
    alice = person()
    user = await user_of(brain, alice)
    await ai_proposes_task(brain, user)
    await alice.send("/proposals")
    clock.advance(timedelta(minutes=31))
    assert "expired" in await alice.press(alice.buttons()["Approve"])
    assert await tasks(brain) == []
    assert "Nothing is waiting" in await alice.send("/proposals")


# ---- /activity -----------------------------------------------------------------------------------------
async def test_activity_lists_the_ai_write_and_its_undo_reverts_it(
    brain: Brain, person, clock: FixedClock
) -> None:
    alice = person()
    user = await user_of(brain, alice)
    await alice.send("/water 300")  # the person's own write is not AI activity
    logged = await brain.tools.execute(user.id, "log_drink", {"drink_type": "water", "quantity_ml": 250},
                                       ai("you said you had a glass"))
    assert logged.ok
    clock.advance(timedelta(minutes=1))
    await ai_proposes_task(brain, user)
    listing = await alice.send("/activity")
    assert "logged 250 ml water" in listing
    assert "proposed: Create the task «Buy milk»" in listing and "waiting for you" in listing
    assert "create_task" not in listing  # in the person's words, not the tool's
    assert "300 ml" not in listing  # (a bare "300" can be part of a proposal's random short id)
    buttons = alice.buttons()
    assert list(buttons) == ["Undo 2"]  # only the write has one; the newer proposal is line 1
    assert listing.index("proposed: Create the task «Buy milk»") < listing.index("logged 250 ml water")

    assert "Removed 250 ml water. Water today: 300 of 2,000 ml." == await alice.press(buttons["Undo 2"])
    async with brain.transactions.read() as s:
        remaining = (await s.scalars(select(DrinkEntry.quantity_ml))).all()
        ai_event = await s.scalar(select(EventRecord).where(EventRecord.type == "DrinkLogged",
                                                            EventRecord.actor["kind"].astext == "ai"))
        assert ai_event is not None
        undo = await s.scalar(select(EventRecord).where(EventRecord.caused_by == ai_event.id))
    assert list(remaining) == [300]
    assert undo is not None and undo.type == "DrinkEntryUndone" and undo.actor["kind"] == "user"

    listing = await alice.send("/activity")
    assert "(undone)" in listing and alice.buttons() == {}
    assert "already used" in await alice.press(buttons["Undo 2"])
    async with brain.transactions.read() as s:
        assert list((await s.scalars(select(DrinkEntry.quantity_ml))).all()) == [300]


async def test_activity_undoes_an_ai_noted_visit(brain: Brain, person) -> None:
    alice = person()
    user = await user_of(brain, alice)
    assert (await brain.tools.execute(user.id, "create_place", {"name": "Gym"}, USER)).ok
    visited = await brain.tools.execute(user.id, "visit_place", {"place": "Gym"}, ai("you said you are at the gym"))
    assert visited.ok and visited.data["place"]["visit_count"] == 1
    listing = await alice.send("/activity")
    assert "noted a visit to Gym" in listing
    buttons = alice.buttons()
    assert list(buttons) == ["Undo 1"]

    assert "Removed a visit to Gym" in await alice.press(buttons["Undo 1"])
    async with brain.transactions.read() as s:
        place = await s.scalar(select(Place).where(Place.user_id == user.id))
        visits = (await s.scalars(select(PlaceVisit).where(PlaceVisit.user_id == user.id))).all()
        ai_event = await s.scalar(select(EventRecord).where(EventRecord.type == "PlaceVisited"))
        assert ai_event is not None
        undo = await s.scalar(select(EventRecord).where(EventRecord.caused_by == ai_event.id))
    assert place is not None and place.visit_count == 0 and place.last_visited_at is None and list(visits) == []
    assert undo is not None and undo.type == "PlaceVisitDeleted" and undo.actor["kind"] == "user"
    listing = await alice.send("/activity")
    assert "noted a visit to Gym (undone)" in listing and alice.buttons() == {}


async def test_activity_pages_with_more(brain: Brain, person, clock: FixedClock) -> None:
    alice = person()
    user = await user_of(brain, alice)
    for ml in range(101, 113):  # twelve AI drinks, one a minute
        assert (await brain.tools.execute(user.id, "log_drink", {"drink_type": "tea", "quantity_ml": ml}, ai())).ok
        clock.advance(timedelta(minutes=1))
    first = await alice.send("/activity")
    assert "1. " in first and "10. " in first and "11. " not in first
    assert "112 ml" in first and "101 ml" not in first  # newest first
    assert "More" in alice.buttons() and "Undo 10" in alice.buttons()
    second = await alice.press(alice.buttons()["More"])
    assert "11. " in second and "12. " in second and "101 ml" in second and "112 ml" not in second
    assert "More" not in alice.buttons() and set(alice.buttons()) == {"Undo 11", "Undo 12"}


async def test_activity_without_ai_writes(person) -> None:
    alice = person()
    assert "has not done or proposed anything" in await alice.send("/activity")


# ---- /settings -----------------------------------------------------------------------------------------
async def test_settings_toggle_lets_the_ai_propose_deletions(brain: Brain, person) -> None:
    alice = person()
    user = await user_of(brain, alice)
    await alice.send("/task Old task")
    denied = await brain.tools.execute(user.id, "delete_task", {"task": "Old"}, ai("cleanup"))
    assert denied.error_code == "policy_denied"

    shown = await alice.send("/settings")
    assert "The assistant may propose deleting things: off" in shown and "you still approve each one" in shown
    assert "Send sensitive content to remote models: off" in shown
    assert "and how to change one: /settings tool" in shown and "auto|propose" not in shown  # no syntax for all
    answer = await alice.press(alice.buttons()["Turn on: The assistant may propose deleting things"])
    assert "The assistant may propose deleting things is now on" in answer
    assert "Turn off: The assistant may propose deleting things" in alice.buttons()
    async with brain.transactions.read() as s:
        row = await s.get(CompanionSettings, user.id)
    assert row is not None and row.allow_destructive and not row.remote_consent

    proposed = await brain.tools.execute(user.id, "delete_task", {"task": "Old"}, ai("cleanup"))
    assert proposed.ok and proposed.data["status"] == "proposed"
    assert await tasks(brain) == ["Old task"]

    await alice.press(alice.buttons()["Turn on: Send sensitive content to remote models"])
    async with brain.transactions.read() as s:
        row = await s.get(CompanionSettings, user.id)
        assert row is not None
        await s.refresh(row)
    assert row.allow_destructive and row.remote_consent


async def test_settings_tool_override_lets_create_task_run_on_its_own(brain: Brain, person) -> None:
    alice = person()
    user = await user_of(brain, alice)
    assert "Usage" in await alice.send("/settings tool create_task sometimes")
    assert "don't know a tool" in await alice.send("/settings tool brew_coffee auto")
    answer = await alice.send("/settings tool create_task auto")
    assert "create_task: runs on its own" in answer
    result = await brain.tools.execute(user.id, "create_task", {"title": "Direct"}, ai())
    assert result.ok and "proposal_id" not in result.data
    assert await tasks(brain) == ["Direct"]
    await alice.send("/settings tool create_task default")
    again = await brain.tools.execute(user.id, "create_task", {"title": "Staged"}, ai())
    assert again.data["status"] == "proposed" and await tasks(brain) == ["Direct"]


async def test_settings_tool_alone_lists_the_tools_by_what_the_assistant_does_with_them(person) -> None:
    alice = person()
    listed = (await alice.send("/settings tool")).splitlines()
    groups = {line.split(":", 1)[0]: line.split(":", 1)[1].strip().split(", ") for line in listed if ": " in line}
    assert "log_drink" in groups["Runs on its own"] and "create_task" in groups["Asks you first"]
    assert "delete_task" in groups["Never"] and "until you allow them with the button in /settings" in listed[-2]
    await alice.send("/settings tool create_task auto")
    unknown = await alice.send("/settings tool brew_coffee auto")
    assert unknown.startswith("I don't know a tool called brew_coffee.")
    assert "create_task" in unknown.split("Runs on its own:")[1].splitlines()[0]  # the person's own choice shows
    assert "/settings tool alone lists the tools." in await alice.send("/settings tool create_task")
    german = person(language="de")
    assert "Fragt dich vorher:" in await german.send("/settings tool")


async def test_settings_list_a_deleting_tool_set_to_auto_as_what_really_happens(person) -> None:
    answer = await person().send("/settings tool delete_task auto")
    assert "delete_task deletes things, so it still always asks you first" in answer
    assert "• delete_task: asks you first (it deletes things)" in answer
    assert "delete_task: runs on its own" not in answer


async def test_a_deletion_proposed_before_the_opt_in_was_turned_off_is_withdrawn_not_run(brain: Brain, person) -> None:
    alice = person()
    user = await user_of(brain, alice)
    await alice.send("/task Old task")
    await alice.send("/settings")
    await alice.press(alice.buttons()["Turn on: The assistant may propose deleting things"])
    proposed = await brain.tools.execute(user.id, "delete_task", {"task": "Old"}, ai("cleanup"))
    assert proposed.ok and proposed.data["status"] == "proposed"
    assert "Delete the task «Old» and its subtasks?" in await alice.send("/proposals")
    approve_token = alice.buttons()["Approve"]

    await alice.send("/settings")
    await alice.press(alice.buttons()["Turn off: The assistant may propose deleting things"])
    answer = await alice.press(approve_token)
    assert "no longer let the assistant use delete_task" in answer and "nothing was done" in answer
    assert await tasks(brain) == ["Old task"]
    async with brain.transactions.read() as s:
        proposal = await s.get(Proposal, uuid.UUID(str(proposed.data["proposal_id"])))
    assert proposal is not None and proposal.status == "expired" and proposal.decided_by == "policy"
    # Turning the opt-in on again does not revive the withdrawn proposal.
    await alice.send("/settings")
    await alice.press(alice.buttons()["Turn on: The assistant may propose deleting things"])
    assert "expired" in await alice.send(f"/approve {str(proposal.id)[:8]}")
    assert await tasks(brain) == ["Old task"]
