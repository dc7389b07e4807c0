"""goals

Revision ID: 0006
Revises: 0005
Create Date: 2026-11-29 20:24:35.380109
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import pgvector.sqlalchemy
from alembic import op


revision: str = '0006'
down_revision: str | Sequence[str] | None = '0005'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('goals',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('title', sa.String(length=200), nullable=False),
    sa.Column('metric', sa.String(length=16), nullable=False),
    sa.Column('event_type', sa.String(length=64), nullable=False),
    sa.Column('field', sa.String(length=64), nullable=True),
    sa.Column('filter_field', sa.String(length=64), nullable=True),
    sa.Column('filter_value', sa.String(length=100), nullable=True),
    sa.Column('target', sa.Double(), nullable=False),
    sa.Column('period', sa.String(length=8), nullable=False),
    sa.Column('comparison', sa.String(length=2), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('template', sa.String(length=32), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('clock_timestamp()'), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.CheckConstraint("comparison IN ('>=', '<=', '=')", name=op.f('ck_goals_comparison_kind')),
    sa.CheckConstraint("metric IN ('event_count', 'event_sum', 'streak_days')", name=op.f('ck_goals_metric_kind')),
    sa.CheckConstraint("period IN ('day', 'week', 'month')", name=op.f('ck_goals_period_kind')),
    sa.CheckConstraint("status IN ('active', 'paused', 'abandoned')", name=op.f('ck_goals_status_kind')),
    sa.CheckConstraint('target >= 0', name=op.f('ck_goals_target_not_negative')),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_goals_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_goals'))
    )
    op.create_index('ix_goals_user_status_event', 'goals', ['user_id', 'status', 'event_type'], unique=False)
    op.create_table('goal_periods',
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('goal_id', sa.UUID(), nullable=False),
    sa.Column('period_start', sa.Date(), nullable=False),
    sa.Column('period_end', sa.Date(), nullable=False),
    sa.Column('value', sa.Double(), nullable=False),
    sa.Column('reached_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('closed_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['goal_id'], ['goals.id'], name=op.f('fk_goal_periods_goal_id_goals'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_goal_periods_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('goal_id', 'period_start', name=op.f('pk_goal_periods'))
    )
    op.create_index('ix_goal_periods_open', 'goal_periods', ['user_id', 'goal_id'], unique=False, postgresql_where='closed_at IS NULL')


def downgrade() -> None:
    op.drop_index('ix_goal_periods_open', table_name='goal_periods', postgresql_where='closed_at IS NULL')
    op.drop_table('goal_periods')
    op.drop_index('ix_goals_user_status_event', table_name='goals')
    op.drop_table('goals')
