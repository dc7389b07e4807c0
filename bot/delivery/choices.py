"""Buttons in a chat without buttons (Matrix): a message's buttons go out as numbered choices, each with the role
its action token gives it (approve, reject, snooze; `role_of`), so a reaction can stand for it. The messages that
carry choices are recorded when sent, looked up for a reaction or a typed number, and closed once a choice was
used (here or through any other way to the same token) or all of them expired. Roles are read from the action
token's kind and payload, so a new kind of button gets the shortcuts when its names say what it does
(`proposal_approve`, `{"op": "dismiss"}`).

The adapter calls the functions that take a `Brain`; those that take a session join a transaction of the
caller's."""

from __future__ import annotations

import uuid
from collections.abc import AsyncIterator, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import and_, any_, exists, or_, select
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from bot.models import DECIDED, EXPIRED, OPEN, MatrixMessage
from bot.rooms import user_of
from brain.actions.models import ActionToken
from brain.actions.service import DEFAULT_TTL
from brain.core import Brain
from brain.outbox.models import Outbound
from brain.people.models import User
from brain.store.base import constant

APPROVE, REJECT, SNOOZE = "approve", "reject", "snooze"
_APPROVE_OPS = {"approve", "yes", "confirm", "accept"}
_REJECT_OPS = {"reject", "dismiss", "no", "cancel", "decline"}


@dataclass(frozen=True)
class Choice:
    label: str
    token: str
    role: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"label": self.label, "token": self.token, "role": self.role}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Choice:
        return cls(label=str(data["label"]), token=str(data["token"]), role=data.get("role"))


def role_of(kind: str, payload: Mapping[str, Any]) -> str | None:
    """approve / reject / snooze for a button's action token, or None for an ordinary choice."""
    kind = kind.lower()
    op = str(payload.get("op") or payload.get("decision") or "").lower()
    if "approve" in kind or op in _APPROVE_OPS:
        return APPROVE
    if "reject" in kind or "dismiss" in kind or op in _REJECT_OPS:
        return REJECT
    if "snooze" in kind or op == "snooze":
        return SNOOZE
    return None


async def choices_for(brain: Brain, message: Outbound) -> tuple[list[Choice], datetime]:
    """The message's buttons as choices, with their roles, and when the last of their tokens expires."""
    now = brain.clock.now()
    buttons = message.flat_buttons()
    if not buttons:
        return [], now
    async with brain.transactions.read() as session:
        tokens = {t.token: t for t in (await session.scalars(
            select(ActionToken).where(ActionToken.token.in_([b.token for b in buttons])))).all()}
    choices = [Choice(b.label, b.token, role_of(tokens[b.token].kind, tokens[b.token].payload)
                      if b.token in tokens else None) for b in buttons]
    expires_at = max((t.expires_at for t in tokens.values()), default=now + DEFAULT_TTL)
    return choices, expires_at


async def record_sent(session: AsyncSession, *, user_id: uuid.UUID, event_id: str, room_id: str, outbox_id: int,
                      text: str, choices: Sequence[Choice], sent_at: datetime, expires_at: datetime) -> None:
    await session.execute(
        insert(MatrixMessage).values(
            user_id=user_id, event_id=event_id, room_id=room_id, outbox_id=outbox_id, text=text,
            choices=[c.to_json() for c in choices], tokens=[c.token for c in choices], state=OPEN,
            sent_at=sent_at, expires_at=expires_at,
        ).on_conflict_do_nothing(index_elements=["user_id", "event_id"])
    )


async def sent_with_choices(brain: Brain, *, user_id: uuid.UUID, event_id: str, room_id: str, outbox_id: int,
                            text: str, choices: Sequence[Choice], expires_at: datetime) -> None:
    """`record_sent`, committed at once, so a reaction that comes quickly finds its choices."""
    async with brain.transactions.begin() as uow:
        await record_sent(uow.session, user_id=user_id, event_id=event_id, room_id=room_id, outbox_id=outbox_id,
                          text=text, choices=choices, sent_at=uow.now, expires_at=expires_at)


def choices_of(message: MatrixMessage) -> list[Choice]:
    return [Choice.from_json(c) for c in message.choices]


def _settled() -> Any:
    """SQL: one of the message's single-use choices was used (here, or through any other way to its token)."""
    return exists().where(ActionToken.token == any_(MatrixMessage.tokens), ActionToken.used_at.is_not(None),
                          ActionToken.single_use)


async def latest_in_room(session: AsyncSession, user_id: uuid.UUID, room_id: str,
                         now: datetime) -> MatrixMessage | None:
    """The person's latest message in this room whose choices are still open (none used, not expired): a typed
    number without a reply answers that one, never a question that is settled already."""
    return await session.scalar(
        select(MatrixMessage).where(MatrixMessage.user_id == user_id, MatrixMessage.room_id == room_id,
                                    MatrixMessage.state == constant(OPEN), MatrixMessage.expires_at > now,
                                    ~_settled())
        .order_by(MatrixMessage.sent_at.desc(), MatrixMessage.outbox_id.desc()).limit(1)
    )


async def reacted_message(session: AsyncSession, user_id: uuid.UUID, event_id: str) -> MatrixMessage | None:
    """The message a reaction is on, if it is this person's: a reaction on someone else's is nobody's."""
    return await session.get(MatrixMessage, (user_id, event_id))


async def latest_choices(brain: Brain, mxid: str, room_id: str) -> list[Choice] | None:
    """The choices of the latest message with open choices that the person behind `mxid` got in this room (a typed
    number without a reply answers that one); None when there is none."""
    async with brain.transactions.read() as session:
        user = await user_of(session, mxid)
        message = await latest_in_room(session, user.id, room_id, brain.clock.now()) if user is not None else None
    return None if message is None else choices_of(message)


async def reacted_choices(brain: Brain, mxid: str, room_id: str, event_id: str) -> list[Choice] | None:
    """The choices of the message `event_id` if it is one that the person behind `mxid` got in this room; None for
    any other message (a reaction on someone else's message picks nothing)."""
    async with brain.transactions.read() as session:
        user = await user_of(session, mxid)
        message = await reacted_message(session, user.id, event_id) if user is not None else None
    return None if message is None or message.room_id != room_id else choices_of(message)


async def pressed_message(brain: Brain, user_id: uuid.UUID, room_id: str, since: datetime) -> str | None:
    """The event id of the person's message in this room whose choice was used last, if that was at `since` or
    later: the message a question asked in answer to the press ("Why? (optional)" after Reject) replies to."""
    async with brain.transactions.read() as session:
        return await session.scalar(
            select(MatrixMessage.event_id)
            .join(ActionToken, ActionToken.token == any_(MatrixMessage.tokens))
            .where(MatrixMessage.user_id == user_id, MatrixMessage.room_id == room_id,
                   ActionToken.user_id == user_id, ActionToken.used_at >= since)
            .order_by(ActionToken.used_at.desc()).limit(1))


@dataclass(frozen=True)
class Closed:
    """A message whose choices just closed: `chosen` is the used choice, or None when they expired; `locale` and
    `timezone` are its person's, for the note that says so."""

    message: MatrixMessage
    chosen: Choice | None
    locale: str = "en"
    timezone: str = "UTC"


async def close_settled(session: AsyncSession, now: datetime, *, limit: int = 50) -> list[Closed]:
    """Lock open messages whose choices are settled (a single-use token of theirs was used, or all expired),
    mark them closed and return them; the caller edits them in the chat within the same transaction."""
    messages = (await session.scalars(
        select(MatrixMessage).where(MatrixMessage.state == constant(OPEN),
                                    or_(MatrixMessage.expires_at <= now, _settled()))
        .order_by(MatrixMessage.sent_at).limit(limit).with_for_update(skip_locked=True)
    )).all()
    closed: list[Closed] = []
    for message in messages:
        used_tokens = set((await session.scalars(select(ActionToken.token).where(and_(
            ActionToken.token.in_(message.tokens), ActionToken.used_at.is_not(None), ActionToken.single_use,
        )))).all())
        chosen = next((c for c in choices_of(message) if c.token in used_tokens), None)
        message.state = DECIDED if chosen is not None else EXPIRED
        message.decided_at = now
        user = await session.get(User, message.user_id)
        closed.append(Closed(message, chosen, user.locale if user else "en", user.timezone if user else "UTC"))
    return closed


@asynccontextmanager
async def settled_choices(brain: Brain) -> AsyncIterator[list[Closed]]:
    """`close_settled` in a transaction that stays open while the caller edits the messages in the chat: an edit
    that fails (an exception out of the block) leaves them open, to be tried again."""
    async with brain.transactions.begin() as uow:
        yield await close_settled(uow.session, uow.now)
