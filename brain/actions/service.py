"""Create and redeem action tokens. Redeeming checks owner, expiry and single use in one locked
row read, so a double click or a concurrent press acts once."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import select
from sqlalchemy.ext.asyncio import AsyncSession

from brain.actions.models import ActionToken
from brain.errors import DomainError
from brain.i18n import tr

DEFAULT_TTL = timedelta(days=2)
TOKEN_BYTES = 8  # 16 base32-ish chars with urlsafe encoding; well under 64 bytes with a prefix


@dataclass(frozen=True)
class Action:
    token: str
    kind: str
    payload: dict[str, Any]


async def create_action(
    session: AsyncSession,
    user_id: uuid.UUID,
    kind: str,
    payload: dict[str, Any],
    *,
    now: datetime,
    ttl: timedelta = DEFAULT_TTL,
    single_use: bool = True,
) -> str:
    token = secrets.token_urlsafe(TOKEN_BYTES)
    session.add(ActionToken(token=token, user_id=user_id, kind=kind, payload=payload, single_use=single_use,
                            expires_at=now + ttl))
    return token


def looks_like_token(value: str) -> bool:
    return 8 <= len(value) <= 24 and all(c.isalnum() or c in "-_" for c in value)


async def redeem_action(session: AsyncSession, user_id: uuid.UUID, token: str, *, now: datetime) -> Action:
    """The action behind `token` for its owner; consumed if single-use. Raises DomainError for an
    unknown, foreign, expired or already used token (the same answer for unknown and foreign, so a
    token's existence is not revealed to others)."""
    if not looks_like_token(token):
        raise DomainError(tr("That button is not valid."), code="unknown_action")
    row = await session.scalar(select(ActionToken).where(ActionToken.token == token).with_for_update())
    if row is None or row.user_id != user_id:
        raise DomainError(tr("That button is not valid."), code="unknown_action")
    if row.used_at is not None:
        raise DomainError(tr("That button was already used."), code="action_used")
    if row.expires_at <= now:
        raise DomainError(tr("That button has expired."), code="action_expired")
    if row.single_use:
        row.used_at = now
    return Action(token=row.token, kind=row.kind, payload=dict(row.payload))
