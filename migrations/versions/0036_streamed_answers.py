"""streamed answers: the messages that showed an answer while the model wrote it

An answer streamed to the chat is already on screen when its outbox row is written. The row's delivery state keeps
the platform's ids of those messages (`shown`), so the sender finishes them by editing instead of sending the answer
again, also after a restart. Such a row may go at once: `not_before` may be NULL.

Revision ID: 0036
Revises: 0035
Create Date: 2026-12-02 06:10:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0036'
down_revision: str | Sequence[str] | None = '0035'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column("telegram_deliveries", sa.Column("shown", postgresql.ARRAY(sa.String(length=255)), nullable=True))
    op.alter_column("telegram_deliveries", "not_before", existing_type=postgresql.TIMESTAMP(timezone=True),
                    nullable=True)


def downgrade() -> None:
    op.execute("UPDATE telegram_deliveries SET not_before = now() WHERE not_before IS NULL")
    op.alter_column("telegram_deliveries", "not_before", existing_type=postgresql.TIMESTAMP(timezone=True),
                    nullable=False)
    op.drop_column("telegram_deliveries", "shown")
