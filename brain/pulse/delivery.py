"""Sending a nudge: render it in the person's language, attach its buttons (act now, snooze 15 min / 1 h /
tomorrow, dismiss) as single-use action tokens of kind "nudge", and write it to the outbox, the only
way it leaves. Outbox slot: "{rule}:{slot}", plus ":snooze{n}" when it comes back after a snooze."""

from __future__ import annotations

import secrets
from typing import Any

from brain.actions.models import ActionToken
from brain.actions.service import DEFAULT_TTL
from brain.events.actor import system
from brain.events.catalog import NudgeSent
from brain.i18n import Renderer, Text, tr
from brain.outbox.models import Button, Outbound
from brain.outbox.service import enqueue
from brain.people.local_time import local_now
from brain.people.models import User
from brain.pulse.models import SENT, Nudge
from brain.pulse.nudges import NudgeContent, content_from_json
from brain.store.unit_of_work import UnitOfWork

NUDGE_ACTION = "nudge"
NUDGE_KIND, NOTICE_KIND = "nudge", "pulse_notice"


def nudge_text(render: Renderer, content: NudgeContent) -> str:
    lines = [render(content.title), render(content.body), *(render(line) for line in content.details)]
    return "\n".join(line for line in lines if line)


def outbox_slot(nudge: Nudge) -> str:
    return f"{nudge.rule}:{nudge.slot}" + (f":snooze{nudge.snoozes}" if nudge.snoozes else "")


def _button_rows(render: Renderer, content: NudgeContent) -> list[list[tuple[str, dict[str, Any]]]]:
    acts: list[tuple[str, dict[str, Any]]] = [(render(a.label), {"op": "act", "index": i})
                                              for i, a in enumerate(content.actions)]
    snoozes: list[tuple[str, dict[str, Any]]] = [
        (render(tr("Snooze 15 min")), {"op": "snooze", "minutes": 15}),
        (render(tr("1 h")), {"op": "snooze", "minutes": 60}),
        (render(tr("Tomorrow")), {"op": "tomorrow"}),
    ]
    dismiss: list[tuple[str, dict[str, Any]]] = [(render(tr("Dismiss")), {"op": "dismiss"})]
    return [row for row in (acts, snoozes, dismiss) if row]


async def send_nudge(uow: UnitOfWork, nudge: Nudge, user: User, content: dict[str, Any]) -> int | None:
    """Send `nudge` with `content` (its latest draft as JSON); returns the outbox row id."""
    render = Renderer(user.locale, user.timezone)
    decoded = content_from_json(content)
    tokens: list[ActionToken] = []
    rows: list[list[Button]] = []
    for row in _button_rows(render, decoded):
        buttons = []
        for label, op in row:
            token = secrets.token_urlsafe(8)
            # `n` ties the button to this delivery: after a snooze the old buttons count as answered.
            payload = {"nudge_id": str(nudge.id), "n": nudge.snoozes, **op}
            tokens.append(ActionToken(token=token, user_id=user.id, kind=NUDGE_ACTION, payload=payload,
                                      single_use=True, expires_at=uow.now + DEFAULT_TTL))
            buttons.append(Button(label=label, token=token))
        rows.append(buttons)
    slot = outbox_slot(nudge)
    row_id = await enqueue(uow.session, user.id, Outbound(text=nudge_text(render, decoded), buttons=rows),
                           kind=NUDGE_KIND, slot=slot)
    if row_id is not None:
        uow.session.add_all(tokens)
    nudge.status = SENT
    nudge.sent_at = uow.now
    nudge.local_hour = local_now(user, uow.now).hour
    nudge.content = content
    uow.emit(NudgeSent(nudge_id=nudge.id, rule=nudge.rule, slot=slot, priority=nudge.priority),
             user_id=user.id, record_id=nudge.id, actor=system("rule"))
    return row_id


async def send_notice(uow: UnitOfWork, user: User, text: Text, slot: str) -> int | None:
    """A plain message from the pulse (no nudge, no buttons), at most once per slot."""
    render = Renderer(user.locale, user.timezone)
    return await enqueue(uow.session, user.id, Outbound(text=render(text)), kind=NOTICE_KIND, slot=slot)
