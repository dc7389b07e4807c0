"""streak states keep the time zone their last counted day was counted in, so that taking that day back after a
/tz change reads the day as it was counted

A streak counts the local date of a qualifying event in the person's zone at the time. A take-back (an undone
drink) looked for the original event's date in the zone the person has now: after a move from Berlin to Los
Angeles, Monday 8:30 in Berlin is Sunday there, the take-back found no match, and the streak stayed "done today".
NULL for a state last advanced before this migration: its day is read in the person's zone, as before.

Revision ID: 0028
Revises: 0027
Create Date: 2026-12-02 11:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0028'
down_revision: str | Sequence[str] | None = '0027'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('streak_states', sa.Column('last_active_zone', sa.String(64), nullable=True))


def downgrade() -> None:
    op.drop_column('streak_states', 'last_active_zone')
