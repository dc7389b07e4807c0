"""The push of a scheduled ritual: "Time for your morning routine" with Start and Not today buttons, read for
a batch of (person, ritual) pairs as the scheduler sends them."""

from __future__ import annotations

import uuid
from collections.abc import Sequence

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from brain.i18n import Renderer, ntr, tr
from brain.rituals.models import ACTIVE, Ritual
from brain.rituals.service import ritual_title
from brain.schedules.message import PushButton, PushMessage


def ritual_push(ritual: Ritual, render: Renderer) -> PushMessage:
    return PushMessage(
        lines=[render(tr("Time for your ritual: {title}", title=ritual_title(ritual, render))),
               render(ntr("{count} step", "{count} steps", len(ritual.steps)))],
        buttons=[[PushButton(tr("Start"), "ritual", {"op": "start", "ritual_id": str(ritual.id)}),
                  PushButton(tr("Not today"), "ritual", {"op": "later"})]],
    )


async def active_rituals(session: AsyncSession, pairs: Sequence[tuple[uuid.UUID, str]]) -> dict[str, Ritual]:
    """The active rituals among (user_id, ritual id) pairs, by id; ids that are gone or archived are missing."""
    wanted: dict[uuid.UUID, uuid.UUID] = {}
    for user_id, ref in pairs:
        try:
            wanted[uuid.UUID(ref)] = user_id
        except ValueError:
            continue
    if not wanted:
        return {}
    rows = (await session.scalars(select(Ritual).where(Ritual.id.in_(list(wanted)), Ritual.status == ACTIVE))).all()
    return {str(r.id): r for r in rows if wanted.get(r.id) == r.user_id}
