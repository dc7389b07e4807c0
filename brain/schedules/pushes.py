"""One run of the scheduled pushes (the scheduler calls it every minute): make sure everyone has their daily
pushes, lock the schedule rows that are due (SKIP LOCKED: two runs never plan one row), plan each with
`slots.plan`, render what is to be sent in one batch per kind, enqueue it in the outbox under (person, kind,
slot) and store the bookkeeping — one transaction per batch of rows, so a crash leaves either all of a batch or
none of it. Even if the bookkeeping were lost, the outbox key keeps a slot from going out twice.

Missed slots (late beyond the grace window, older ones coalesced, inside quiet hours, while paused) are dropped
and logged; nothing is ever sent as a backlog. A push never interrupts a conversation: while the person has written
within the idle hold, a due slot waits until they have been quiet that long (at most until its grace window ends,
then it goes anyway), and goes out once."""

from __future__ import annotations

import logging
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING
from zoneinfo import ZoneInfo

from sqlalchemy import or_, select, text
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from brain.actions.models import ActionToken
from brain.actions.service import DEFAULT_TTL
from brain.i18n import Renderer
from brain.outbox.models import PENDING, OutboxMessage
from brain.people.models import User
from brain.pulse.activity import is_mid_conversation, is_paused, pulse_states, vacation_of
from brain.rituals.pushes import active_rituals, ritual_push
from brain.schedules.message import PushMessage, RenderedPush, render_push
from brain.schedules.models import EVENING_REFLECTION, MORNING_SUMMARY, RITUAL, PushSchedule
from brain.schedules.service import DEFAULT_LOOKBACK, ensure_daily_pushes, replan_moved_people
from brain.schedules.slots import LocalSchedule, Slot, SlotPlan, plan, wait_for_quiet
from brain.summaries import evening_data, evening_reflection, morning_data, morning_summary

if TYPE_CHECKING:
    from brain.core import Brain

log = logging.getLogger(__name__)

DEFAULT_GRACE = timedelta(hours=2)
# A push held for a conversation goes this long before its grace window ends: the job runs once a minute, and a run
# a moment after the window's end would drop it as late.
LAST_CALL = timedelta(minutes=1)
BATCH = 500


@dataclass
class PushReport:
    at: datetime
    planned: int = 0  # schedule rows looked at
    sent: int = 0
    already_sent: int = 0  # the outbox had the slot already (e.g. the bookkeeping was lost)
    missed: Counter[str] = field(default_factory=Counter)  # dropped slots by reason
    held: int = 0  # due, but waiting for the person to finish their conversation
    sent_to: set[uuid.UUID] = field(default_factory=set)


@dataclass(frozen=True)
class _Send:
    row: PushSchedule
    user: User
    slot: Slot

    @property
    def outbox_slot(self) -> str:
        return f"{self.row.ref}:{self.slot.key}" if self.row.ref else self.slot.key


async def send_due_pushes(brain: Brain, now: datetime, *, grace: timedelta = DEFAULT_GRACE, batch: int = BATCH,
                          upkeep: bool = True, lookback: timedelta = DEFAULT_LOOKBACK,
                          idle_hold: timedelta = timedelta(0)) -> PushReport:
    """Sends what is due at `now`. With `upkeep` it first gives everyone without them their daily pushes (looking
    back `lookback` for their first slot: the time since the last upkeep) and replans the schedules of people
    whose time zone changed; the scheduler does that every few minutes, not every minute."""
    report = PushReport(at=now)
    if upkeep:
        async with brain.transactions.begin() as uow:
            await ensure_daily_pushes(uow.session, now, lookback)
            await replan_moved_people(uow.session)
    while True:
        async with brain.transactions.begin() as uow:
            planned = await _run_batch(uow.session, now, grace, batch, report, idle_hold)
        if planned < batch:
            return report


async def _run_batch(session: AsyncSession, now: datetime, grace: timedelta, batch: int, report: PushReport,
                     idle_hold: timedelta = timedelta(0)) -> int:
    rows = (await session.execute(
        select(PushSchedule, User).join(User, User.id == PushSchedule.user_id)
        .where(PushSchedule.enabled, or_(PushSchedule.next_due_at.is_(None), PushSchedule.next_due_at <= now))
        .limit(batch).with_for_update(of=PushSchedule, skip_locked=True)
    )).all()
    if not rows:
        return 0
    report.planned += len(rows)
    states = await pulse_states(session, list({user.id for _, user in rows}))
    plans: list[tuple[PushSchedule, User, SlotPlan]] = []
    for row, user in rows:
        state = states.get(user.id)
        # On vacation (a pause with an end) the morning summary still comes, to say when the vacation ends.
        paused = is_paused(state, now) and not (row.kind == MORNING_SUMMARY and vacation_of(state, now) is not None)
        decided = plan(LocalSchedule(row.at, row.weekdays), ZoneInfo(user.timezone), since=row.last_slot_at,
                       now=now, grace=grace, quiet=(user.quiet_start, user.quiet_end), paused=paused)
        if decided.send is not None and state is not None and state.last_inbound_at is not None \
                and is_mid_conversation(state, now, idle_hold) and now - decided.send.due < grace - LAST_CALL:
            decided = wait_for_quiet(decided, decided.send, state.last_inbound_at + idle_hold, grace - LAST_CALL)
            report.held += 1
        plans.append((row, user, decided))
        for missed in decided.missed:
            report.missed[missed.reason] += 1
            level = logging.WARNING if missed.reason in ("late", "coalesced") else logging.INFO
            log.log(level, "dropped %s slot %s of %s (%s)", row.kind, missed.slot.key, user.id, missed.reason)
    sends = [_Send(row, user, p.send) for row, user, p in plans if p.send is not None]
    inserted = await _enqueue(session, sends, now)
    await _store_plans(session, plans, now)
    report.sent += len(inserted)
    report.already_sent += len(sends) - len(inserted)
    report.sent_to.update(user_id for user_id, _, _ in inserted)
    return len(rows)


_STORE_PLANS = text("""
    UPDATE push_schedules AS s
    SET last_slot_at = GREATEST(s.last_slot_at, v.decided), next_due_at = v.next_due, timezone = v.zone,
        last_sent_slot = COALESCE(v.sent, s.last_sent_slot), updated_at = :now
    FROM unnest(CAST(:users AS uuid[]), CAST(:kinds AS text[]), CAST(:refs AS text[]),
                CAST(:decided AS timestamptz[]), CAST(:next_due AS timestamptz[]), CAST(:zones AS text[]),
                CAST(:sent AS text[])) AS v(user_id, kind, ref, decided, next_due, zone, sent)
    WHERE s.user_id = v.user_id AND s.kind = v.kind AND s.ref = v.ref
""")


async def _store_plans(session: AsyncSession, plans: Sequence[tuple[PushSchedule, User, SlotPlan]],
                       now: datetime) -> None:
    """The bookkeeping of a batch in one statement (the rows are locked by this transaction)."""
    await session.execute(_STORE_PLANS, {
        "now": now, "users": [row.user_id for row, _, _ in plans], "kinds": [row.kind for row, _, _ in plans],
        "refs": [row.ref for row, _, _ in plans], "decided": [p.decided_until for _, _, p in plans],
        "next_due": [p.next_due for _, _, p in plans], "zones": [user.timezone for _, user, _ in plans],
        "sent": [p.send.key if p.send is not None else None for _, _, p in plans],
    })


class _Renderers(dict[tuple[str, str], Renderer]):
    """One Renderer per (locale, zone) in a batch."""

    def of(self, user: User) -> Renderer:
        key = (user.locale, user.timezone)
        if key not in self:
            self[key] = Renderer(user.locale, user.timezone)
        return self[key]


async def _messages(session: AsyncSession, sends: Sequence[_Send], now: datetime,
                    renderers: _Renderers) -> dict[int, PushMessage]:
    """The message for each send (by position); a ritual that is gone has none."""
    messages: dict[int, PushMessage] = {}
    by_kind: dict[str, list[int]] = {}
    for i, send in enumerate(sends):
        by_kind.setdefault(send.row.kind, []).append(i)
    if MORNING_SUMMARY in by_kind:
        data = await morning_data(session, [sends[i].user for i in by_kind[MORNING_SUMMARY]], now)
        for i in by_kind[MORNING_SUMMARY]:
            messages[i] = morning_summary(data[sends[i].user.id], renderers.of(sends[i].user))
    if EVENING_REFLECTION in by_kind:
        snapshots = await evening_data(session, [sends[i].user for i in by_kind[EVENING_REFLECTION]], now)
        for i in by_kind[EVENING_REFLECTION]:
            messages[i] = evening_reflection(snapshots[sends[i].user.id])
    if RITUAL in by_kind:
        rituals = await active_rituals(session, [(sends[i].user.id, sends[i].row.ref) for i in by_kind[RITUAL]])
        for i in by_kind[RITUAL]:
            ritual = rituals.get(sends[i].row.ref)
            if ritual is None:
                log.info("scheduled ritual %s of %s is gone; nothing sent", sends[i].row.ref, sends[i].user.id)
                continue
            messages[i] = ritual_push(ritual, renderers.of(sends[i].user))
    for kind in set(by_kind) - {MORNING_SUMMARY, EVENING_REFLECTION, RITUAL}:
        log.warning("no message for scheduled push kind %s", kind)
    return messages


async def _enqueue(session: AsyncSession, sends: Sequence[_Send], now: datetime) -> list[tuple[uuid.UUID, str, str]]:
    """Writes the outbox rows (and their buttons' tokens) in two statements; returns (user, kind, slot) of the
    rows that were new."""
    if not sends:
        return []
    renderers = _Renderers()
    messages = await _messages(session, sends, now, renderers)
    rendered: dict[tuple[uuid.UUID, str, str], RenderedPush] = {}
    for i, message in messages.items():
        send = sends[i]
        rendered[(send.user.id, send.row.kind, send.outbox_slot)] = render_push(message, renderers.of(send.user))
    if not rendered:
        return []
    inserted = (await session.execute(
        insert(OutboxMessage).values([
            {"user_id": user_id, "kind": kind, "slot": slot, "platform": None, "chat_id": None,
             "text": push.outbound.text, "buttons": [[b.model_dump() for b in row] for row in push.outbound.buttons],
             "image_png": None, "document": None, "document_name": None, "status": PENDING, "attempts": 0}
            for (user_id, kind, slot), push in rendered.items()
        ]).on_conflict_do_nothing(index_elements=["user_id", "kind", "slot"])
        .returning(OutboxMessage.user_id, OutboxMessage.kind, OutboxMessage.slot)
    )).all()
    tokens = [
        {"token": token, "user_id": key[0], "kind": button.kind, "payload": dict(button.payload),
         "single_use": button.single_use, "expires_at": now + DEFAULT_TTL}
        for key in inserted for token, button in rendered[key].tokens
    ]
    if tokens:
        await session.execute(insert(ActionToken), tokens)
    return list(inserted)
