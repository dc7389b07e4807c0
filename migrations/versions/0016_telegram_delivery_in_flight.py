"""telegram delivery in flight

Revision ID: 0016
Revises: 0015
Create Date: 2026-11-30 03:22:49.012976
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0016'
down_revision: str | Sequence[str] | None = '0015'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('telegram_deliveries', sa.Column('in_flight', sa.Boolean(), server_default=sa.text('false'), nullable=False))


def downgrade() -> None:
    op.drop_column('telegram_deliveries', 'in_flight')
