"""What voice notes and photos share on the bot side: whether a person allowed sensitive content (audio, images)
to go to a server that does not run on their own hardware."""

from __future__ import annotations

from sqlalchemy import select

from bot.turn import Turn
from brain.companion.models import CompanionSettings


async def remote_allowed(turn: Turn, *, local: bool) -> bool:
    """True when the server is local, or the person consented to remote models (/settings)."""
    if local:
        return True
    async with turn.brain.db.autocommit() as connection:
        consent = await connection.scalar(select(CompanionSettings.remote_consent)
                                          .where(CompanionSettings.user_id == turn.user.id))
    return bool(consent)
