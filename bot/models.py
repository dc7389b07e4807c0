"""The bot's own tables: bookkeeping of taking updates and of delivering the outbox, not the person's data, so
`/link` may drop them for an absorbed user; and the operator's tables of who may talk to the bot (`bot.access`),
which belong to no person (marked `operator`: no `user_id`).

They keep the table names they were created with (the first platform that needed each one is in its name):
renaming a table takes a migration and gains nothing."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from sqlalchemy import BigInteger, Boolean, ForeignKey, Index, Integer, String, Text, false, func
from sqlalchemy.dialects.postgresql import ARRAY, JSONB
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

OPEN, DECIDED, EXPIRED = "open", "decided", "expired"  # the states of a `MatrixMessage`'s choices


class ProcessedUpdate(Base):
    """One update that was taken for processing (`bot.updates`): a replay finds it and has no second effect. A
    platform numbers updates per bot, hence `bot_id`; the key starts with `user_id` like every personal table (a
    replay always comes from the same person)."""

    __tablename__ = "telegram_updates"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    update_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    received_at: Mapped[datetime] = mapped_column(server_default=func.now())

    __table_args__ = (Index("ix_telegram_updates_received_at", "received_at"), {"info": {"bookkeeping": True}})


class DeliveryState(Base):
    """An outbox row its platform has not fully taken (`bot.delivery`): a long reply goes out as several messages,
    and a retry continues after the last part that arrived; `not_before` holds a flood wait or the backoff after
    an error. Only rows that needed a second try, whose part is being sent, or that were shown while the model
    wrote them (`shown`) have one."""

    __tablename__ = "telegram_deliveries"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    outbox_id: Mapped[int] = mapped_column(BigInteger, ForeignKey("outbox.id", ondelete="CASCADE"),
                                           primary_key=True)
    parts_sent: Mapped[int] = mapped_column(Integer, default=0)
    not_before: Mapped[datetime | None] = mapped_column()  # NULL: it may go at once
    updated_at: Mapped[datetime] = mapped_column(server_default=func.now())
    # The platform's ids of the messages that showed this answer while it was written (`bot.delivery.stream`),
    # one per part: the row is delivered by editing them, never by sending the answer a second time.
    shown: Mapped[list[str] | None] = mapped_column(ARRAY(String(255)))
    # Part `parts_sent` is being sent: committed before the request, cleared in the transaction that settles
    # it. Found set by the next sender, it means the process died with the request in flight.
    in_flight: Mapped[bool] = mapped_column(Boolean, default=False, server_default=false())

    __table_args__ = ({"info": {"bookkeeping": True}},)


class InboxUpdate(Base):
    """A webhook update stored before it was acknowledged and not handled yet (`bot.inbox`). `lane` is "queued"
    (a chat's messages, one after another) or "now" (its button presses and steering commands); within a lane the
    update id is the platform's order. The row is deleted in the transaction that held it while it was handled.
    `user_id` is the sender's (created on first contact, as the dialog would)."""

    __tablename__ = "telegram_inbox"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    bot_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    update_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)
    chat_id: Mapped[str] = mapped_column(String(64))
    lane: Mapped[str] = mapped_column(String(8))
    payload: Mapped[dict[str, Any]] = mapped_column(JSONB)
    received_at: Mapped[datetime] = mapped_column(server_default=func.now())

    __table_args__ = (Index("ix_telegram_inbox_lane", "bot_id", "chat_id", "lane", "update_id"),
                      # Claims walk the rows in this order and stop at the first free lane head.
                      Index("ix_telegram_inbox_claim_order", "bot_id", "received_at", "update_id"),
                      {"info": {"bookkeeping": True}})


class MatrixRoom(Base):
    """A Matrix room where the bot talks with this person (`bot.rooms`). `direct` rooms (the person and the bot
    only) may also receive the person's pushes; group rooms (when allowed) get only answers to what was said there.
    Registered again on the next message after `/link` dropped it."""

    __tablename__ = "matrix_rooms"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    room_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    mxid: Mapped[str] = mapped_column(String(255))  # the person's Matrix id, e.g. @alice:example.org
    direct: Mapped[bool] = mapped_column(default=True)
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    last_inbound_at: Mapped[datetime | None] = mapped_column()
    left_at: Mapped[datetime | None] = mapped_column()

    __table_args__ = (Index("ix_matrix_rooms_room", "room_id"), {"info": {"bookkeeping": True}})


class MatrixMessage(Base):
    """A sent message whose buttons went out as numbered choices (`bot.delivery.choices`): its event, the choices
    in order ({label, token, role}) and whether they are still open, so a reaction or a number reply after a
    restart still finds its action token, and a decided or expired choice can be edited to say so. `tokens`
    repeats the choices' tokens for the sweep that finds used ones in SQL."""

    __tablename__ = "matrix_messages"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    event_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    room_id: Mapped[str] = mapped_column(String(255))
    outbox_id: Mapped[int] = mapped_column(BigInteger)
    text: Mapped[str] = mapped_column(Text)  # the message without its numbered list, for the edit
    choices: Mapped[list[dict[str, Any]]] = mapped_column(JSONB)
    tokens: Mapped[list[str]] = mapped_column(ARRAY(String(24)))
    state: Mapped[str] = mapped_column(String(8), default=OPEN)
    sent_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column()
    decided_at: Mapped[datetime | None] = mapped_column()

    __table_args__ = (
        Index("ix_matrix_messages_room", "user_id", "room_id", "sent_at"),
        Index("ix_matrix_messages_open", "expires_at", postgresql_where="state = 'open'"),
        {"info": {"bookkeeping": True}},
    )


class KeyboardMessage(Base):
    """A sent message with buttons, by the platform's id of it (`bot.delivery.keyboards`), on platforms that show
    buttons under a message (Telegram). When its question is settled another way than by pressing (a command, a
    typed answer, its expiry), the keyboard is taken off through the outbox. `tokens` are its buttons' tokens: how a
    question finds its messages."""

    __tablename__ = "keyboard_messages"

    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"), primary_key=True)
    platform: Mapped[str] = mapped_column(String(16), primary_key=True)
    chat_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    message_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    outbox_id: Mapped[int] = mapped_column(BigInteger)
    tokens: Mapped[list[str]] = mapped_column(ARRAY(String(24)))
    sent_at: Mapped[datetime] = mapped_column()

    __table_args__ = ({"info": {"bookkeeping": True}},)


class MatrixUnreadableRoom(Base):
    """An encrypted Matrix room the bot cannot read (it runs without MATRIX_E2E) and has said so in (`bot.rooms`):
    nothing else is said there, after a restart too. It belongs to no person: whoever invited the bot may be
    someone it does not know (marked `operator`, like the access tables)."""

    __tablename__ = "matrix_unreadable_rooms"

    room_id: Mapped[str] = mapped_column(String(255), primary_key=True)
    told_at: Mapped[datetime] = mapped_column()

    __table_args__ = ({"info": {"operator": True}},)


class AccessGrant(Base):
    """An account that may talk to the companion (`bot.access`), admitted with an invite code or by `companion access
    admit`. The owner's list of who may talk, kept through /link; /delete_me removes the person's own grants (they
    hold the account id). `account` is the platform's id (a Telegram user id, a Matrix id) or a Telegram "@username"
    (lower case)."""

    __tablename__ = "access_grants"

    platform: Mapped[str] = mapped_column(String(16), primary_key=True)
    account: Mapped[str] = mapped_column(String(255), primary_key=True)
    role: Mapped[str] = mapped_column(String(8))  # "owner" (the first account admitted) or "member"
    label: Mapped[str | None] = mapped_column(String(128))  # a name to recognise the account by in the list
    via: Mapped[str] = mapped_column(String(8))  # "invite" or "cli"
    admitted_at: Mapped[datetime] = mapped_column()

    # There is one owner at most.
    __table_args__ = (Index("uq_access_grants_owner", "role", unique=True, postgresql_where="role = 'owner'"),
                      {"info": {"operator": True}})


class AccessInvite(Base):
    """A one-time invite code of `companion invite`, stored as its SHA-256 only; used once, within its time."""

    __tablename__ = "access_invites"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    created_at: Mapped[datetime] = mapped_column()
    expires_at: Mapped[datetime] = mapped_column()
    used_at: Mapped[datetime | None] = mapped_column()
    used_by: Mapped[str | None] = mapped_column(String(280))  # "platform:account" of the admitted account

    __table_args__ = ({"info": {"operator": True}},)


class AccessRefusal(Base):
    """A stranger's day: when they were told that the companion is private (once a day) and how many wrong invite
    codes they sent (a few a day are checked, no more). Keyed by an HMAC of "platform:account" under this
    installation's secret (`InstallationSecret`), so nothing readable about someone who was never admitted is kept,
    and hashing candidate ids does not find them."""

    __tablename__ = "access_refusals"

    account_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    day_started_at: Mapped[datetime] = mapped_column()
    told: Mapped[bool] = mapped_column(Boolean, default=False)
    failed_codes: Mapped[int] = mapped_column(Integer, default=0)

    __table_args__ = ({"info": {"operator": True}},)


class InstallationSecret(Base):
    """A random secret of this installation, made once on first use and never shown (`bot.access`: the key of the
    strangers' hashes). One row per use, by name."""

    __tablename__ = "installation_secrets"

    name: Mapped[str] = mapped_column(String(32), primary_key=True)
    value: Mapped[str] = mapped_column(String(128))
    created_at: Mapped[datetime] = mapped_column()

    __table_args__ = ({"info": {"operator": True}},)
