"""Sending the reminders that are due: the scheduler calls `send_due_reminders` every minute (the terminal chat's
ticker too). One transaction per batch locks the due rows (SKIP LOCKED: two runs never take one row), decides each,
writes the outbox rows and their buttons' tokens in two statements and the reminders' new state in a third.

Each reminder goes out at its time in the person's zone, once per occurrence (and once more per snooze): the outbox
key is the reminder, its occurrence's wall time and the delivery. Quiet hours hold a reminder until they end, a
pause until it ends; the message then says so. The feedback loop does not hold reminders back, nor does a running
conversation: the person asked for this time."""

from __future__ import annotations

import functools
import json
import logging
import secrets
import uuid
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import DateTime, Integer, bindparam, select, text
from sqlalchemy.ext.asyncio import AsyncSession

from brain.actions.service import DEFAULT_TTL
from brain.i18n import Renderer, Text, tr
from brain.modules.todo.models import Task
from brain.outbox.models import PENDING
from brain.people.models import User
from brain.pulse.activity import in_quiet_hours, quiet_hours_end
from brain.pulse.models import PulseState
from brain.reminders.models import DONE, HELD_PAUSED, HELD_QUIET, SENT, SNOOZED, WAITING, Reminder
from brain.reminders.service import following, occurrence_key

log = logging.getLogger(__name__)

REMINDER_KIND = "reminder"  # the outbox kind, and the kind of the buttons' action tokens
BATCH = 2000
# A pause without an end is looked at again this often (it ends with /resume).
OPEN_PAUSE_RECHECK = timedelta(minutes=5)
# Later than this after its time, a reminder says when it was due (the scheduler was down, or it was held).
LATE_AFTER = timedelta(minutes=10)
# ZoneInfo keeps only a few zones it was asked for lately: a batch of people in many zones would read a zone file
# again for most reminders.
_zone = functools.lru_cache(maxsize=1024)(ZoneInfo)


@dataclass
class ReminderReport:
    at: datetime
    sent: int = 0
    already_sent: int = 0  # the outbox had it (the bookkeeping of an earlier run was lost)
    held: Counter[str] = field(default_factory=Counter)
    ended: int = 0  # a task's reminder whose task is done
    sent_to: set[uuid.UUID] = field(default_factory=set)


@dataclass(frozen=True)
class _Due:
    """One locked due reminder with what deciding it needs."""

    id: uuid.UUID
    user_id: uuid.UUID
    text: str
    zone: str
    occurrence_at: datetime
    rrule: str | None
    starts_at: datetime | None
    held: str | None
    deliveries: int
    minutes_before: int | None
    task_done: bool
    locale: str
    user_zone: str
    quiet: tuple[time, time]
    paused: bool
    paused_from: datetime | None
    paused_until: datetime | None


@dataclass
class _Change:
    """The reminder's row after this run."""

    id: uuid.UUID
    user_id: uuid.UUID
    status: str
    due_at: datetime | None
    held: str | None
    deliveries: int
    sent_at: datetime | None
    occurrence_at: datetime
    sends: bool = False  # this run sends it (its current occurrence)


async def send_due_reminders(brain: Any, now: datetime, *, batch: int = BATCH) -> ReminderReport:
    """Sends every reminder due at `now`, in batches of `batch` rows, one transaction each."""
    report = ReminderReport(at=now)
    while True:
        async with brain.transactions.begin() as uow:
            taken = await _run_batch(uow.session, now, batch, report)
        if taken < batch:
            return report


_DUE = (
    select(Reminder.id, Reminder.user_id, Reminder.text, Reminder.timezone, Reminder.occurrence_at, Reminder.rrule,
           Reminder.starts_at, Reminder.held,
           Reminder.deliveries, Reminder.minutes_before, Task.completed_at.is_not(None).label("task_done"),
           User.locale, User.timezone.label("user_zone"), User.quiet_start, User.quiet_end,
           PulseState.paused, PulseState.paused_from, PulseState.paused_until)
    .join(User, User.id == Reminder.user_id)
    .outerjoin(Task, Task.id == Reminder.task_id)
    .outerjoin(PulseState, PulseState.user_id == Reminder.user_id)
    .where(Reminder.status == WAITING, Reminder.due_at <= bindparam("now", type_=DateTime(timezone=True)))
    .order_by(Reminder.due_at)
    .limit(bindparam("batch", type_=Integer))
    .with_for_update(of=Reminder, skip_locked=True)
)


async def _run_batch(session: AsyncSession, now: datetime, batch: int, report: ReminderReport) -> int:
    found = (await session.execute(_DUE, {"now": now, "batch": batch})).all()
    if not found:
        return 0
    due = [_Due(r.id, r.user_id, r.text, r.timezone, r.occurrence_at, r.rrule, r.starts_at, r.held, r.deliveries,
                r.minutes_before,
                bool(r.task_done), r.locale, r.user_zone, (r.quiet_start, r.quiet_end), bool(r.paused),
                r.paused_from, r.paused_until)
           for r in found]
    changes: list[_Change] = []
    sends: list[_Due] = []
    for item in due:
        change = _decide(item, now, report)
        changes.append(change)
        if change.sends:
            sends.append(item)
    await _enqueue(session, sends, now, report)
    await _store(session, changes, now)
    return len(found)


def _decide(item: _Due, now: datetime, report: ReminderReport) -> _Change:
    """Send it now, hold it (quiet hours, a pause), or end it (its task is done). A repeating reminder that is sent
    waits for its next occurrence (occurrences missed meanwhile are not sent one by one)."""
    if item.task_done:
        report.ended += 1
        return _Change(item.id, item.user_id, DONE, None, None, item.deliveries, None, item.occurrence_at)
    if item.paused and (item.paused_from is None or now >= item.paused_from) \
            and (item.paused_until is None or now < item.paused_until):
        report.held[HELD_PAUSED] += 1
        return _Change(item.id, item.user_id, WAITING, item.paused_until or now + OPEN_PAUSE_RECHECK,
                       _kept_hold(item, HELD_PAUSED), item.deliveries, None, item.occurrence_at)
    local = now.astimezone(_zone(item.user_zone))
    if in_quiet_hours(local.time(), *item.quiet):
        report.held[HELD_QUIET] += 1
        return _Change(item.id, item.user_id, WAITING, quiet_hours_end(local, *item.quiet).astimezone(UTC),
                       _kept_hold(item, HELD_QUIET), item.deliveries, None, item.occurrence_at)
    if item.rrule is not None and item.starts_at is not None:
        upcoming = following(item.rrule, item.starts_at, item.zone, max(item.occurrence_at, now))
        if upcoming is not None:
            return _Change(item.id, item.user_id, WAITING, upcoming, None, 0, now, upcoming, sends=True)
    return _Change(item.id, item.user_id, SENT, None, item.held, item.deliveries + 1, now, item.occurrence_at,
                   sends=True)


def _kept_hold(item: _Due, reason: str) -> str:
    # A snoozed reminder held again is still said to be snoozed: the person chose its new time.
    return item.held if item.held == SNOOZED else reason


def reminder_lines(item: _Due, now: datetime) -> list[Text]:
    """What the message says: the reminder, and why it comes later than its time if it does."""
    zone = _zone(item.user_zone)
    lines = [tr("⏰ {text}", text=item.text)]
    if item.minutes_before:  # at the due time itself the reminder says enough
        lines.append(tr("Your task is due at {time}.", time=_when(item.occurrence_at + timedelta(
            minutes=item.minutes_before), now, zone)))
    due = _when(item.occurrence_at, now, zone)
    if item.held == HELD_QUIET:
        lines.append(tr("It was due at {time}; I held it back during your quiet hours.", time=due))
    elif item.held == HELD_PAUSED:
        lines.append(tr("It was due at {time}; I held it back while your reminders were paused.", time=due))
    elif item.held != SNOOZED and now - item.occurrence_at >= LATE_AFTER:
        lines.append(tr("It was due at {time}.", time=due))
    return lines


def _when(at: datetime, now: datetime, zone: ZoneInfo) -> Any:
    """A time of today as a clock time, another day's with its date."""
    local = at.astimezone(zone)
    return local.time() if local.date() == now.astimezone(zone).date() else local


_BUTTONS: tuple[tuple[tuple[Text, dict[str, Any]], ...], ...] = (
    ((tr("✓ Done"), {"op": "done"}),),
    ((tr("Snooze 15 min"), {"op": "snooze", "minutes": 15}), (tr("1 h"), {"op": "snooze", "minutes": 60}),
     (tr("Tomorrow"), {"op": "tomorrow"})),
)


# The batch's outbox rows in one statement: a row already in the outbox (the bookkeeping of an earlier run was lost)
# is left as it is and not returned, so it gets no second set of tokens. The rows travel as one JSON array, which
# costs less to send than an array parameter per column.
_OUTBOX = text("""
    INSERT INTO outbox (user_id, kind, slot, text, buttons, status, attempts)
    SELECT v.user_id, :kind, v.slot, v.text, v.buttons, :pending, 0
    FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS v(user_id uuid, slot text, text text, buttons jsonb)
    ON CONFLICT (user_id, kind, slot) DO NOTHING
    RETURNING user_id, slot
""")
_TOKENS = text("""
    INSERT INTO action_tokens (token, user_id, kind, payload, single_use, expires_at)
    SELECT v.token, v.user_id, :kind, v.payload, true, :expires
    FROM jsonb_to_recordset(CAST(:rows AS jsonb)) AS v(token text, user_id uuid, payload jsonb)
""")


async def _enqueue(session: AsyncSession, sends: Sequence[_Due], now: datetime, report: ReminderReport) -> None:
    """The outbox rows of this batch in one statement, and the tokens of the rows that were new in another: two
    round trips for the whole batch, whatever its size."""
    if not sends:
        return
    renderers: dict[tuple[str, str], Renderer] = {}
    rows: list[dict[str, Any]] = []
    tokens: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for item in sends:
        render = renderers.get((item.locale, item.user_zone))
        if render is None:
            render = renderers[(item.locale, item.user_zone)] = Renderer(item.locale, item.user_zone)
        key = occurrence_key(item.occurrence_at, item.zone)
        slot = f"{item.id}:{key}" + (f":{item.deliveries}" if item.deliveries else "")
        user_id = str(item.user_id)
        buttons, mine = [], []
        for row in _BUTTONS:
            rendered = []
            for label, op in row:
                token = secrets.token_urlsafe(8)
                rendered.append({"label": render(label), "token": token})
                mine.append({"token": token, "user_id": user_id,
                             "payload": {"reminder_id": str(item.id), "key": key, "n": item.deliveries, **op}})
            buttons.append(rendered)
        tokens[(user_id, slot)] = mine
        rows.append({"user_id": user_id, "slot": slot, "buttons": buttons,
                     "text": "\n".join(render(line) for line in reminder_lines(item, now))})
    inserted = (await session.execute(_OUTBOX, {"kind": REMINDER_KIND, "pending": PENDING,
                                                "rows": json.dumps(rows)})).all()
    new_tokens = [t for user_id, slot in inserted for t in tokens[(str(user_id), slot)]]
    if new_tokens:
        await session.execute(_TOKENS, {"kind": REMINDER_KIND, "expires": now + DEFAULT_TTL,
                                        "rows": json.dumps(new_tokens)})
    report.sent += len(inserted)
    report.already_sent += len(sends) - len(inserted)
    report.sent_to.update(user_id for user_id, _ in inserted)


_STORE = text("""
    UPDATE reminders AS r
    SET status = v.status, due_at = v.due_at, held = v.held, deliveries = v.deliveries,
        sent_at = COALESCE(v.sent_at, r.sent_at), occurrence_at = v.occurrence_at, updated_at = :now
    FROM unnest(CAST(:users AS uuid[]), CAST(:ids AS uuid[]), CAST(:statuses AS text[]),
                CAST(:due AS timestamptz[]), CAST(:held AS text[]), CAST(:deliveries AS smallint[]),
                CAST(:sent AS timestamptz[]), CAST(:occurrences AS timestamptz[]))
         AS v(user_id, id, status, due_at, held, deliveries, sent_at, occurrence_at)
    WHERE r.user_id = v.user_id AND r.id = v.id
""")


async def _store(session: AsyncSession, changes: Sequence[_Change], now: datetime) -> None:
    """The batch's new states in one statement (the rows are locked by this transaction)."""
    await session.execute(_STORE, {
        "now": now, "users": [c.user_id for c in changes], "ids": [c.id for c in changes],
        "statuses": [c.status for c in changes],
        "due": [c.due_at for c in changes], "held": [c.held for c in changes],
        "deliveries": [c.deliveries for c in changes], "sent": [c.sent_at for c in changes],
        "occurrences": [c.occurrence_at for c in changes],
    })
