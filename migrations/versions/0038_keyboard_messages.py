"""keyboard messages: a question settled without a press loses its keyboard

A sent message with buttons is recorded with the platform's id of it, and an outbox row may edit such a message
(`outbox.edits`) instead of sending a new one: approving by command, answering a step by typing or a proposal's
expiry take the keyboard off the message that asked.

Revision ID: 0038
Revises: 0037
Create Date: 2026-12-02 09:50:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0038'
down_revision: str | Sequence[str] | None = '0037'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("outbox", sa.Column("edits", sa.String(length=255), nullable=True))
    op.create_table(
        "keyboard_messages",
        sa.Column("user_id", sa.UUID(), nullable=False),
        sa.Column("platform", sa.String(length=16), nullable=False),
        sa.Column("chat_id", sa.String(length=255), nullable=False),
        sa.Column("message_id", sa.String(length=255), nullable=False),
        sa.Column("outbox_id", sa.BigInteger(), nullable=False),
        sa.Column("tokens", postgresql.ARRAY(sa.String(length=24)), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_keyboard_messages_user_id_users"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", "platform", "chat_id", "message_id", name=op.f("pk_keyboard_messages")),
    )


def downgrade() -> None:
    op.drop_table("keyboard_messages")
    op.drop_column("outbox", "edits")
