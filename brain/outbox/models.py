"""Outbox rows and the message shape they carry (text plus rows of buttons with opaque tokens)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pydantic import BaseModel, Field
from sqlalchemy import BigInteger, ForeignKey, Index, Integer, LargeBinary, String, Text, UniqueConstraint, func
from sqlalchemy.dialects.postgresql import JSONB
from sqlalchemy.orm import Mapped, mapped_column

from brain.store.base import Base

PENDING, SENT, FAILED = "pending", "sent", "failed"
# The outbox kinds of a turn's messages: our own words ("reply"), the language model's answer ("answer"), which
# is Markdown that the platform renders as its formatting, and a question whose answer is the person's next message
# ("question", which Telegram shows with its reply field open).
REPLY_KIND, ANSWER_KIND, QUESTION_KIND = "reply", "answer", "question"
TURN_KINDS = (REPLY_KIND, ANSWER_KIND, QUESTION_KIND)
# A change to a message sent before (`Outbound.edits`): its keyboard removed once its question is settled.
EDIT_KIND = "edit"


class Button(BaseModel):
    label: str
    token: str


class Outbound(BaseModel):
    """A rendered message for one person; buttons are rows of (label, opaque action token)."""

    text: str
    buttons: list[list[Button]] = Field(default_factory=list)
    image_png: bytes | None = None  # a picture sent with the text as its caption (e.g. the /week chart)
    document: bytes | None = None  # a file sent with the text as its caption (e.g. the /export JSON)
    document_name: str | None = None
    markdown: bool = False  # the text is the model's Markdown (shown formatted), not our own plain words
    asks_reply: bool = False  # a question the person answers with their next message
    # The platform's id of a message sent before: this row edits it instead of sending a new one. Its keyboard goes;
    # an empty `text` keeps the message's words, any other replaces them.
    edits: str | None = None

    @property
    def kind(self) -> str:
        """The outbox kind of a turn's message like this one."""
        if self.edits is not None:
            return EDIT_KIND
        return ANSWER_KIND if self.markdown else QUESTION_KIND if self.asks_reply else REPLY_KIND

    def flat_buttons(self) -> list[Button]:
        return [b for row in self.buttons for b in row]


class OutboxMessage(Base):
    __tablename__ = "outbox"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[uuid.UUID] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    kind: Mapped[str] = mapped_column(String(32))
    slot: Mapped[str] = mapped_column(String(128))
    platform: Mapped[str | None] = mapped_column(String(16))
    chat_id: Mapped[str | None] = mapped_column(String(255))
    text: Mapped[str] = mapped_column(Text)
    buttons: Mapped[list[Any]] = mapped_column(JSONB, default=list)
    image_png: Mapped[bytes | None] = mapped_column(LargeBinary)
    document: Mapped[bytes | None] = mapped_column(LargeBinary)
    document_name: Mapped[str | None] = mapped_column(String(128))
    edits: Mapped[str | None] = mapped_column(String(255))  # see `Outbound.edits`
    status: Mapped[str] = mapped_column(String(8), default=PENDING)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    last_error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    sent_at: Mapped[datetime | None] = mapped_column()

    __table_args__ = (
        UniqueConstraint("user_id", "kind", "slot"),
        Index("ix_outbox_pending", "status", "platform", "id", postgresql_where="status = 'pending'"),
        # A sender's claim of one chat's head row (`platform`, `chat_id`): only that chat's entries, not every
        # pending row of the platform and the entries of rows sent a moment ago (see migration 0020).
        Index("ix_outbox_pending_chat", "platform", "chat_id", "id", postgresql_where="status = 'pending'"),
        # The same claim's other half, a person's pending pushes (no platform): by person, not every pending push
        # of everyone in id order (see migration 0022).
        Index("ix_outbox_pending_push", "user_id", "id", postgresql_where="status = 'pending' AND platform IS NULL"),
    )

    def outbound(self) -> Outbound:
        return Outbound(text=self.text, buttons=[[Button(**b) for b in row] for row in self.buttons],
                        image_png=self.image_png, document=self.document, document_name=self.document_name,
                        markdown=self.kind == ANSWER_KIND, asks_reply=self.kind == QUESTION_KIND, edits=self.edits)
