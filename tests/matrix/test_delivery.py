"""The Matrix outbox consumer over the real database with a scripted stand-in for the nio client (the real
client against Synapse is in test_matrix_bot.py): which rows Matrix takes, the outbox id as transaction
id, reactions and recorded choices, 429 backoff without spending an attempt, failure after the last
attempt, and the edit of a message whose choices were used or expired."""

from __future__ import annotations

import uuid
from datetime import timedelta
from typing import Any

from nio import RoomSendError, RoomSendResponse
from sqlalchemy import select

from adapters.matrix.outbound import MatrixDelivery as Delivery
from bot.dialog import Dialog
from bot.inbound import Inbound
from bot.models import DECIDED, EXPIRED, OPEN, MatrixMessage
from bot.rooms import register_room
from brain.core import Brain
from brain.outbox.models import FAILED, PENDING, SENT, Outbound, OutboxMessage
from brain.outbox.service import enqueue
from brain.people.service import resolve_identity


class FakeClient:
    """Answers room_send like a homeserver would; `refuse` holds error responses to give first."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, dict[str, Any], str]] = []
        self.refuse: list[RoomSendError] = []
        self.rooms: dict[str, Any] = {}

    async def room_send(self, room_id: str, event_type: str, content: dict[str, Any], tx_id: str | None = None,
                        ignore_unverified_devices: bool = False) -> RoomSendResponse | RoomSendError:
        if self.refuse:
            return self.refuse.pop(0)
        self.sent.append((room_id, event_type, content, str(tx_id)))
        return RoomSendResponse(f"$event-{tx_id}", room_id)

    def of_type(self, event_type: str) -> list[tuple[str, str, dict[str, Any], str]]:
        return [s for s in self.sent if s[1] == event_type]


async def matrix_person(brain: Brain, mxid: str, room_id: str | None = "!dm:hs") -> uuid.UUID:
    async with brain.transactions.begin() as uow:
        user = await resolve_identity(uow.session, "matrix", mxid, default_locale="en",
                                      default_timezone="Europe/Berlin")
        if room_id is not None:
            await register_room(uow.session, user.id, room_id, mxid, direct=True, now=uow.now)
    return user.id


async def reminder(brain: Brain, user_id: uuid.UUID, text: str, *, kind: str = "pulse_notice",
                   platform: str | None = None) -> int:
    async with brain.transactions.begin() as uow:
        row_id = await enqueue(uow.session, user_id, Outbound(text=text), kind=kind, slot=uuid.uuid4().hex,
                               platform=platform, chat_id="elsewhere" if platform else None)
    assert row_id is not None
    return row_id


async def rows(brain: Brain) -> dict[int, OutboxMessage]:
    async with brain.transactions.read() as session:
        return {r.id: r for r in (await session.scalars(select(OutboxMessage))).all()}


async def say(dialog: Dialog, mxid: str, text: str | None = None, action: str | None = None) -> None:
    await dialog.handle(Inbound(platform="matrix", platform_user_id=mxid, chat_id="!dm:hs",
                                message_id=uuid.uuid4().hex, text=text, action=action))


async def test_reminders_go_to_the_direct_room_of_matrix_people_who_last_talked_here(brain) -> None:
    here = await matrix_person(brain, "@here:hs")
    roomless = await matrix_person(brain, "@roomless:hs", room_id=None)
    elsewhere = await matrix_person(brain, "@elsewhere:hs", room_id="!other:hs")
    for user_id in (here, roomless, elsewhere):
        await reminder(brain, user_id, "Drink water")
    await reminder(brain, elsewhere, "an answer on Telegram", kind="reply", platform="telegram")
    alone = {r.user_id for r in await Delivery(brain, FakeClient()).sender.due_rows()}  # type: ignore[arg-type]
    with_telegram = {r.user_id for r in await Delivery(brain, FakeClient(),  # type: ignore[arg-type]
                                                       other_platforms=("telegram",)).sender.due_rows()
                     if r.platform is None}
    assert alone == {here, elsewhere}  # only Matrix runs: it takes every reminder it can deliver
    assert with_telegram == {here}  # Telegram runs too: the person who talked there last gets it there


async def test_a_reply_is_sent_once_with_its_outbox_id_as_transaction_and_its_choices_kept(brain, dialog) -> None:
    await matrix_person(brain, "@alice:hs")
    await say(dialog, "@alice:hs", "/goal")
    client = FakeClient()
    delivery = Delivery(brain, client)  # type: ignore[arg-type]
    assert await delivery.pass_once() == 0
    [(row_id, row)] = (await rows(brain)).items()
    assert row.status == SENT
    [(room, _, content, txn)] = client.of_type("m.room.message")
    assert (room, txn) == ("!dm:hs", f"companion-{row_id}")
    assert "No goals yet" in content["body"] and "<ol>" in content["formatted_body"]
    reactions = client.of_type("m.reaction")
    assert [r[3] for r in reactions] == [f"companion-{row_id}-r{i}" for i in range(len(reactions))]
    assert all(r[2]["m.relates_to"]["event_id"] == f"$event-companion-{row_id}" for r in reactions)
    async with brain.transactions.read() as session:
        message = await session.scalar(select(MatrixMessage))
    assert message is not None and message.state == OPEN and message.outbox_id == row_id
    assert [c["label"] for c in message.choices][-1] == "Custom goal…"
    await delivery.pass_once()
    assert len(client.of_type("m.room.message")) == 1  # sent is sent


async def test_a_rate_limit_pauses_delivery_as_asked_without_spending_an_attempt(brain) -> None:
    user_id = await matrix_person(brain, "@alice:hs")
    row_id = await reminder(brain, user_id, "Drink water")
    client = FakeClient()
    client.refuse = [RoomSendError("Too many requests", "M_LIMIT_EXCEEDED", 1500)]
    delivery = Delivery(brain, client)  # type: ignore[arg-type]
    assert await delivery.pass_once() == 1.5
    row = (await rows(brain))[row_id]
    assert (row.status, row.attempts) == (PENDING, 0)
    assert await delivery.pass_once() == 0
    assert (await rows(brain))[row_id].status == SENT
    assert [s[3] for s in client.sent] == [f"companion-{row_id}"]


async def test_a_refused_message_fails_after_the_last_attempt(brain) -> None:
    user_id = await matrix_person(brain, "@alice:hs")
    row_id = await reminder(brain, user_id, "Drink water")
    client = FakeClient()
    client.refuse = [RoomSendError("not in room", "M_FORBIDDEN") for _ in range(3)]
    delivery = Delivery(brain, client, max_attempts=3)  # type: ignore[arg-type]
    for attempt in (1, 2):
        await delivery.pass_once()
        row = (await rows(brain))[row_id]
        assert (row.status, row.attempts) == (PENDING, attempt) and "M_FORBIDDEN" in (row.last_error or "")
    await delivery.pass_once()
    assert (await rows(brain))[row_id].status == FAILED
    assert client.sent == []


async def test_used_and_expired_choices_are_edited_to_say_so(brain, dialog, clock) -> None:
    await matrix_person(brain, "@alice:hs")
    await say(dialog, "@alice:hs", "/goal")
    await say(dialog, "@alice:hs", "/lang")
    client = FakeClient()
    delivery = Delivery(brain, client)  # type: ignore[arg-type]
    await delivery.pass_once()
    async with brain.transactions.read() as session:
        goal, lang = (await session.scalars(select(MatrixMessage).order_by(MatrixMessage.outbox_id))).all()
    await say(dialog, "@alice:hs", action=goal.choices[0]["token"])
    await delivery.pass_once()
    edits = [s[2] for s in client.of_type("m.room.message") if "m.new_content" in s[2]]
    assert [e["m.relates_to"]["event_id"] for e in edits] == [goal.event_id]
    assert edits[0]["m.new_content"]["body"].endswith(f"Chosen: {goal.choices[0]['label']}")
    assert "<ol>" not in edits[0]["m.new_content"]["formatted_body"]

    clock.advance(timedelta(days=3))
    await delivery.pass_once()
    edits = [s[2] for s in client.of_type("m.room.message") if "m.new_content" in s[2]]
    assert edits[-1]["m.relates_to"]["event_id"] == lang.event_id
    assert edits[-1]["m.new_content"]["body"].endswith("These choices have expired.")
    async with brain.transactions.read() as session:
        states = dict((await session.execute(select(MatrixMessage.event_id, MatrixMessage.state))).all())
    assert states == {goal.event_id: DECIDED, lang.event_id: EXPIRED}
    await delivery.pass_once()
    assert len([s for s in client.of_type("m.room.message") if "m.new_content" in s[2]]) == 2  # edited once
