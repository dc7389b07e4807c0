"""Nudges: the draft a rule decides on (title, body, act-now actions, expiry) and the life of a stored
nudge after that — created once per (user, rule, slot), then sent, snoozed, acted on, dismissed,
expired or auto-resolved. Every decided state is recorded as an outcome for the feedback loop."""

from __future__ import annotations

import uuid
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime, time, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from brain.events.actor import system
from brain.events.catalog import ActorT
from brain.feedback.outcomes import record_outcome
from brain.i18n import Percent, Text, tr
from brain.pulse.activity import in_quiet_hours, quiet_hours_end
from brain.pulse.models import EXPIRED, PENDING, SENT, Nudge
from brain.store.unit_of_work import UnitOfWork

LOW, MEDIUM, HIGH = 1, 2, 3


@dataclass(frozen=True)
class NudgeAction:
    """An "act now" button: either a tool call run as the person, or a command as if they typed it."""

    label: Text
    tool: str | None = None
    args: Mapping[str, Any] = field(default_factory=dict)
    command: str | None = None


@dataclass(frozen=True)
class NudgeDraft:
    """What a rule wants to say. `slot` makes it unique per person and rule (a day, a 90-minute bucket,
    an ISO week or the triggering event's id); `details` are extra lines under the body."""

    type: str
    priority: int
    title: Text
    body: Text
    slot: str
    actions: tuple[NudgeAction, ...] = ()
    details: tuple[Text, ...] = ()
    expires_after: timedelta = timedelta(hours=2)
    data: Mapping[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class NudgeContent:
    title: Text
    body: Text
    details: tuple[Text, ...]
    actions: tuple[NudgeAction, ...]


# ---- Text <-> JSON (the stored draft is rendered in the person's locale only when it is sent) ---------
def text_from_json(data: Mapping[str, Any]) -> Text:
    params = {k: _param_from_json(v) for k, v in dict(data.get("params", {})).items()}
    return Text(str(data["msgid"]), params, plural=data.get("plural"), count=data.get("count"))


def _param_from_json(value: Any) -> Any:
    if isinstance(value, dict) and "__text__" in value:
        return text_from_json(value["__text__"])
    if isinstance(value, dict) and "__percent__" in value:
        return Percent(int(value["__percent__"]))
    if isinstance(value, dict) and "__dt__" in value:
        raw, kind = str(value["__dt__"]), value["__kind__"]
        if kind == "datetime":
            return datetime.fromisoformat(raw)
        return date.fromisoformat(raw) if kind == "date" else time.fromisoformat(raw)
    return value


def content_to_json(draft: NudgeDraft) -> dict[str, Any]:
    return {
        "title": draft.title.to_json(),
        "body": draft.body.to_json(),
        "details": [d.to_json() for d in draft.details],
        "actions": [
            {"label": a.label.to_json(), "tool": a.tool, "args": dict(a.args), "command": a.command}
            for a in draft.actions
        ],
    }


def content_from_json(data: Mapping[str, Any]) -> NudgeContent:
    return NudgeContent(
        title=text_from_json(data["title"]),
        body=text_from_json(data["body"]),
        details=tuple(text_from_json(d) for d in data.get("details", ())),
        actions=tuple(
            NudgeAction(label=text_from_json(a["label"]), tool=a.get("tool"), args=dict(a.get("args") or {}),
                        command=a.get("command"))
            for a in data.get("actions", ())
        ),
    )


# ---- creating ------------------------------------------------------------------------------------------
@dataclass(frozen=True)
class NewNudge:
    user_id: uuid.UUID
    rule: str
    draft: NudgeDraft
    due_at: datetime
    local_hour: int
    data: Mapping[str, Any] = field(default_factory=dict)


async def insert_nudges(session: AsyncSession, nudges: Sequence[NewNudge], now: datetime) -> list[uuid.UUID]:
    """One statement for all; a (user, rule, slot) that already exists is skipped, so a restart or a
    second tick at the same minute never produces a nudge twice. Returns the ids actually created."""
    if not nudges:
        return []
    rows = [
        {
            "id": uuid.uuid4(), "user_id": n.user_id, "rule": n.rule, "slot": n.draft.slot, "type": n.draft.type,
            "priority": n.draft.priority, "status": PENDING, "content": content_to_json(n.draft),
            "data": {**dict(n.draft.data), **dict(n.data),
                     "expires_after_s": int(n.draft.expires_after.total_seconds())},
            "due_at": n.due_at, "expires_at": n.due_at + n.draft.expires_after, "local_hour": n.local_hour,
            "snoozes": 0, "created_at": now,
        }
        for n in nudges
    ]
    result = await session.scalars(
        insert(Nudge).values(rows).on_conflict_do_nothing(index_elements=["user_id", "rule", "slot"])
        .returning(Nudge.id)
    )
    return list(result.all())


# ---- deciding ------------------------------------------------------------------------------------------
def latency_s(nudge: Nudge, now: datetime) -> int | None:
    return max(0, int((now - nudge.sent_at).total_seconds())) if nudge.sent_at is not None else None


async def decide_nudge(uow: UnitOfWork, nudge: Nudge, outcome: str, actor: ActorT) -> None:
    """Close an open nudge with `outcome` (acted, dismissed, expired, auto_resolved) and record it."""
    nudge.status = outcome
    nudge.decided_at = uow.now
    await record_outcome(uow, nudge, outcome, actor, latency_s=latency_s(nudge, uow.now))


async def snooze_nudge(uow: UnitOfWork, nudge: Nudge, until: datetime, actor: ActorT, *, local_hour: int) -> None:
    """Put a sent nudge back to pending until `until`; it comes back once, with fresh buttons."""
    await record_outcome(uow, nudge, "snoozed", actor, latency_s=latency_s(nudge, uow.now))
    expires_after = timedelta(seconds=int(nudge.data.get("expires_after_s", 7200)))
    nudge.status = PENDING
    nudge.snoozes += 1
    nudge.due_at = until
    nudge.expires_at = until + expires_after
    nudge.local_hour = local_hour


async def lock_nudge(session: AsyncSession, user_id: uuid.UUID, nudge_id: uuid.UUID) -> Nudge | None:
    return await session.scalar(
        select(Nudge).where(Nudge.user_id == user_id, Nudge.id == nudge_id).with_for_update()
    )


async def open_for_press(uow: UnitOfWork, user_id: uuid.UUID, nudge_id: uuid.UUID, delivery: int) -> Nudge | Text:
    """The nudge behind a pressed button if it still waits for the person's answer, else why not.
    A button of an earlier delivery (before a snooze) counts as already answered."""
    nudge = await lock_nudge(uow.session, user_id, nudge_id)
    if nudge is None:
        return tr("That button is not valid.")
    if nudge.status == SENT and nudge.expires_at <= uow.now:
        # The expiry job has not come round yet: settle it now, so the answer and the record agree.
        await decide_nudge(uow, nudge, EXPIRED, system("rule"))
    if nudge.status == EXPIRED:
        return tr("This reminder has expired.")
    if nudge.status != SENT or nudge.snoozes != delivery:
        return tr("This reminder was already answered.")
    return nudge


def snooze_until(local: datetime, *, minutes: int | None, quiet: tuple[time, time]) -> datetime:
    """When a snoozed nudge comes back: `minutes` from now, or tomorrow at this time (`minutes` None);
    never inside quiet hours (then at the first minute after them). `local` is aware, in the person's zone."""
    if minutes is not None:
        until = local + timedelta(minutes=minutes)
    else:
        until = datetime.combine(local.date() + timedelta(days=1), local.time().replace(second=0, microsecond=0),
                                 tzinfo=local.tzinfo)
    if in_quiet_hours(until.time(), *quiet):
        until = quiet_hours_end(until, *quiet)
    return until
