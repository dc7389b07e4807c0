"""memory speakers may be participants by name, not only the two roles

A memory holds what the person ("user") and the companion ("assistant") said; an imported chat, or a benchmark of
long chats between two people, has participants with names, which `brain.memory.capture.speaker_of` keeps as they are
written (up to 64 characters). Widening a varchar is a change of the catalogue only: no table is rewritten.

Revision ID: 0025
Revises: 0024
Create Date: 2026-12-01 19:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0025'
down_revision: str | Sequence[str] | None = '0024'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

TABLES = ('memory_short_term', 'memory_nodes')


def upgrade() -> None:
    for table in TABLES:
        op.alter_column(table, 'speaker', type_=sa.String(64), existing_type=sa.String(16), existing_nullable=False)


def downgrade() -> None:
    for table in TABLES:
        # A participant's name longer than the old limit keeps its first 16 characters.
        op.execute(f"UPDATE {table} SET speaker = left(speaker, 16) WHERE length(speaker) > 16")
        op.alter_column(table, 'speaker', type_=sa.String(16), existing_type=sa.String(64), existing_nullable=False)
