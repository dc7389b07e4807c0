"""shown task lists: the numbers of the task list last shown to a person

"/done 3" completes the task that was number 3 in the list the person saw, until the next list is shown, even when
a task added since sorts before it. One row per person: each position shown and the task it stood for.

Revision ID: 0037
Revises: 0036
Create Date: 2026-12-02 09:50:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0037'
down_revision: str | Sequence[str] | None = '0036'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "shown_task_lists",
        sa.Column("user_id", sa.Uuid(), nullable=False),
        sa.Column("positions", postgresql.ARRAY(sa.Integer()), nullable=False),
        sa.Column("task_ids", postgresql.ARRAY(sa.UUID()), nullable=False),
        sa.Column("shown_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(["user_id"], ["users.id"], name=op.f("fk_shown_task_lists_user_id_users"),
                                ondelete="CASCADE"),
        sa.PrimaryKeyConstraint("user_id", name=op.f("pk_shown_task_lists")),
    )


def downgrade() -> None:
    op.drop_table("shown_task_lists")
