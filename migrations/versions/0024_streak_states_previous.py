"""streak states keep the state before their last counted day, so that taking back that day's only activity
(an undone drink, an uncompleted task, a deleted meal) can restore it

The streak projection advances incrementally (`brain.projections.streaks`); a count cannot be lowered again from
the state alone (how long was the streak the day before, what was the habit strength?). `prev_current` NULL means
no earlier state is known (a state last advanced before this migration, or already restored once).

Revision ID: 0024
Revises: 0023
Create Date: 2026-12-01 11:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0024'
down_revision: str | Sequence[str] | None = '0023'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

COLUMNS = (('prev_current', sa.Integer()), ('prev_longest', sa.Integer()), ('prev_last_active', sa.Date()),
           ('prev_strength', sa.Float()), ('prev_strength_date', sa.Date()))


def upgrade() -> None:
    for name, type_ in COLUMNS:
        op.add_column('streak_states', sa.Column(name, type_, nullable=True))


def downgrade() -> None:
    for name, _ in COLUMNS:
        op.drop_column('streak_states', name)
