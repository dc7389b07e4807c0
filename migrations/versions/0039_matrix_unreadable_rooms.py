"""matrix unreadable rooms: an encrypted room told once that the bot cannot read it, across restarts

Without MATRIX_E2E the bot says once in an encrypted room that it cannot read it, and nothing else there. The room
is noted in the database, so a restarted bot neither says it again nor answers anything in that room.

Revision ID: 0039
Revises: 0038
Create Date: 2026-12-02 09:45:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0039'
down_revision: str | Sequence[str] | None = '0038'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "matrix_unreadable_rooms",
        sa.Column("room_id", sa.String(length=255), nullable=False),
        sa.Column("told_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("room_id", name=op.f("pk_matrix_unreadable_rooms")),
    )


def downgrade() -> None:
    op.drop_table("matrix_unreadable_rooms")
