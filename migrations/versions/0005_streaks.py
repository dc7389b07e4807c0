"""streaks

Revision ID: 0005
Revises: 0004
Create Date: 2026-11-29 20:23:03.568636
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0005'
down_revision: str | Sequence[str] | None = '0004'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('streak_skips',
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('streak', sa.String(length=32), nullable=False),
    sa.Column('day', sa.Date(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_streak_skips_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', 'streak', 'day', name=op.f('pk_streak_skips'))
    )
    op.create_table('streak_states',
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('streak', sa.String(length=32), nullable=False),
    sa.Column('current', sa.Integer(), nullable=False),
    sa.Column('longest', sa.Integer(), nullable=False),
    sa.Column('last_active', sa.Date(), nullable=True),
    sa.Column('strength', sa.Float(), nullable=False),
    sa.Column('strength_date', sa.Date(), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_streak_states_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', 'streak', name=op.f('pk_streak_states'))
    )


def downgrade() -> None:
    op.drop_table('streak_states')
    op.drop_table('streak_skips')
