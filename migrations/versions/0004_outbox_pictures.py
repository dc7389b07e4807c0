"""outbox pictures

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-29 20:17:04.576281
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import pgvector.sqlalchemy
from alembic import op


revision: str = '0004'
down_revision: str | Sequence[str] | None = '0003'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('outbox', sa.Column('image_png', sa.LargeBinary(), nullable=True))


def downgrade() -> None:
    op.drop_column('outbox', 'image_png')
