"""Where a push goes. A push is an outbox row without a platform (a nudge, a reminder, a morning summary): each
running platform's sender may take it, to the person's address there (`PushAddress`), and the mirror rule decides
which one does (`push_is_for`): a person on two platforms gets each push once, where they last talked."""

from __future__ import annotations

from typing import Any, Protocol

from sqlalchemy import ColumnElement, func, select
from sqlalchemy.orm import aliased
from sqlalchemy.sql.elements import BindParameter

from bot.models import MatrixRoom
from brain.outbox.models import OutboxMessage
from brain.people.models import Identity


class PushAddress(Protocol):
    """The chat of a platform that a person's pushes go to, as SQL for the sender's statements."""

    def chat_of(self) -> Any:
        """A scalar subquery correlated to `OutboxMessage`: the chat its person's pushes go to (NULL: none)."""

    def person_of(self, chat: BindParameter[str]) -> Any:
        """A scalar subquery: the person whose pushes go to `chat` (NULL: nobody's), at most one."""


class PrivateChat:
    """The person's private chat, whose id is their id on the platform (Telegram, the terminal)."""

    def __init__(self, platform: str) -> None:
        self.platform = platform

    def chat_of(self) -> Any:
        return (select(Identity.platform_id)
                .where(Identity.user_id == OutboxMessage.user_id, Identity.platform == self.platform)
                .order_by(Identity.created_at).limit(1).scalar_subquery())

    def person_of(self, chat: BindParameter[str]) -> Any:
        # At most one person has this chat as their private chat (identities are unique per platform id).
        return (select(Identity.user_id).where(Identity.platform == self.platform, Identity.platform_id == chat)
                .scalar_subquery())


class DirectRoom:
    """The person's direct Matrix room (the person and the bot only) that the bot is still in, the one they wrote in
    last; never a group room."""

    def chat_of(self) -> Any:
        return self._latest(OutboxMessage.user_id)

    def person_of(self, chat: BindParameter[str]) -> Any:
        room = aliased(MatrixRoom)
        return (select(room.user_id)
                .where(room.room_id == chat, room.direct, room.left_at.is_(None),
                       room.room_id == self._latest(room.user_id))
                .limit(1).scalar_subquery())

    @staticmethod
    def _latest(user_id: Any) -> Any:
        """The direct room of the person `user_id` (a correlated column) that their pushes go to."""
        return (select(MatrixRoom.room_id)
                .where(MatrixRoom.user_id == user_id, MatrixRoom.direct, MatrixRoom.left_at.is_(None))
                .order_by(MatrixRoom.last_inbound_at.desc().nulls_last(), MatrixRoom.created_at.desc())
                .limit(1).scalar_subquery())


def push_is_for(platform: str, other_platforms: tuple[str, ...]) -> ColumnElement[bool]:
    """For a row without a platform: no other platform runs, or the person last talked on `platform` (their latest
    reply went there). Someone who has talked on none of them yet gets it from the sender that claims it first."""
    if not other_platforms:
        return OutboxMessage.platform.is_(None)
    earlier = aliased(OutboxMessage)
    last_platform = (
        select(earlier.platform)
        .where(earlier.user_id == OutboxMessage.user_id, earlier.kind == "reply",
               earlier.platform.in_((platform, *other_platforms)))
        .order_by(earlier.id.desc()).limit(1).correlate(OutboxMessage).scalar_subquery()
    )
    return OutboxMessage.platform.is_(None) & (func.coalesce(last_platform, platform) == platform)
