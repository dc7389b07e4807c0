"""memory nodes keep their fact marks (numbers, negation, question), so that a message that reads like an earlier
one but corrects or contradicts it ("Anna's birthday is on 13 May" after "... 12 May") is not dropped as a duplicate

Nullable and without a default: adding the column rewrites nothing, and nodes made before it are compared by
embedding alone, as they were.

Revision ID: 0026
Revises: 0025
Create Date: 2026-12-01 20:10:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0026'
down_revision: str | Sequence[str] | None = '0025'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('memory_nodes', sa.Column('fact_marks', postgresql.ARRAY(sa.Text()), nullable=True))


def downgrade() -> None:
    op.drop_column('memory_nodes', 'fact_marks')
