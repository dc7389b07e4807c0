"""An offer's answer typed instead of pressed ("Kalender" to the calendar / reminder / task question, "ja" to "Save it
and check in?"): the person's latest unused button of that kind, made within a short window, taken as pressed (used
up in the same transaction, so a later press of it finds it used)."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from sqlalchemy import select

from bot.turn import Turn
from brain.actions.models import ActionToken
from brain.actions.service import DEFAULT_TTL


async def take_fresh_offer(turn: Turn, kind: str, window: timedelta, **payload: str) -> dict[str, Any] | None:
    """The payload of the person's latest unused `kind` button whose payload holds `payload`, offered at most
    `window` ago, now used up; None when none waits."""
    async with turn.brain.transactions.begin() as uow:
        # offered within the window: the buttons were made to expire DEFAULT_TTL after the offer
        query = select(ActionToken).where(
            ActionToken.user_id == turn.user.id, ActionToken.kind == kind, ActionToken.used_at.is_(None),
            ActionToken.expires_at > turn.now + DEFAULT_TTL - window,
            *(ActionToken.payload[key].astext == value for key, value in payload.items()))
        token = await uow.session.scalar(
            query.order_by(ActionToken.expires_at.desc()).limit(1).with_for_update(skip_locked=True))
        if token is None:
            return None
        token.used_at = uow.now
        return dict(token.payload)
