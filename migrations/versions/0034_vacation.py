"""vacation mode: a pause can start later (`paused_from`), its days bridge streaks (`streak_skips.vacation`, not
counted toward the skip-day limit), and a goal period mostly on vacation is closed as paused, not failed
(`goal_periods.paused`)

Revision ID: 0034
Revises: 0033
Create Date: 2026-12-04 15:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0034'
down_revision: str | Sequence[str] | None = '0033'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('pulse_states', sa.Column('paused_from', sa.DateTime(timezone=True), nullable=True))
    op.add_column('streak_skips', sa.Column('vacation', sa.Boolean(), server_default=sa.false(), nullable=False))
    op.add_column('goal_periods', sa.Column('paused', sa.Boolean(), server_default=sa.false(), nullable=False))


def downgrade() -> None:
    op.drop_column('goal_periods', 'paused')
    op.drop_column('streak_skips', 'vacation')
    op.drop_column('pulse_states', 'paused_from')
