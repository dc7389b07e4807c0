"""repeating appointments, tasks and reminders

An RRULE (RFC 5545) stored as text and expanded in the person's zone. A calendar series is a row of its own whose
occurrences are appointments made a year ahead (`series_id`, `occurrence_key`: one row per occurrence); a
repeating task keeps its rule and its series (`recurrence`, `series_id`, `series_start`), the next occurrence made
when one is done; a repeating reminder keeps its rule and first time (`rrule`, `starts_at`) and the last occurrence
answered (`answered_key`).

Revision ID: 0032
Revises: 0031
Create Date: 2026-12-03 14:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0032'
down_revision: str | Sequence[str] | None = '0031'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('calendar_series',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('calendar_id', sa.String(length=64), nullable=False),
    sa.Column('title', sa.String(length=500), nullable=False),
    sa.Column('description', sa.Text(), nullable=True),
    sa.Column('location', sa.String(length=500), nullable=True),
    sa.Column('rrule', sa.Text(), nullable=False),
    sa.Column('timezone', sa.String(length=64), nullable=False),
    sa.Column('starts_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('length_minutes', sa.Integer(), nullable=False),
    sa.Column('is_all_day', sa.Boolean(), nullable=False),
    sa.Column('made_until', sa.DateTime(timezone=True), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_calendar_series_user_id_users'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_calendar_series'))
    )
    op.create_index('ix_calendar_series_made_until', 'calendar_series', ['made_until'], unique=False)
    op.add_column('calendar_events', sa.Column('series_id', sa.UUID(), nullable=True))
    op.add_column('calendar_events', sa.Column('occurrence_key', sa.String(length=16), nullable=True))
    op.create_foreign_key(op.f('fk_calendar_events_series_id_calendar_series'), 'calendar_events', 'calendar_series',
                          ['series_id'], ['id'], ondelete='SET NULL')
    op.create_unique_constraint(op.f('uq_calendar_events_series_id_occurrence_key'), 'calendar_events',
                                ['series_id', 'occurrence_key'])
    op.add_column('tasks', sa.Column('recurrence', sa.Text(), nullable=True))
    op.add_column('tasks', sa.Column('series_id', sa.UUID(), nullable=True))
    op.add_column('tasks', sa.Column('series_start', sa.Date(), nullable=True))
    op.add_column('reminders', sa.Column('rrule', sa.Text(), nullable=True))
    op.add_column('reminders', sa.Column('starts_at', sa.DateTime(timezone=True), nullable=True))
    op.add_column('reminders', sa.Column('answered_key', sa.String(length=16), nullable=True))


def downgrade() -> None:
    op.drop_column('reminders', 'answered_key')
    op.drop_column('reminders', 'starts_at')
    op.drop_column('reminders', 'rrule')
    op.drop_column('tasks', 'series_start')
    op.drop_column('tasks', 'series_id')
    op.drop_column('tasks', 'recurrence')
    op.drop_constraint(op.f('uq_calendar_events_series_id_occurrence_key'), 'calendar_events', type_='unique')
    op.drop_constraint(op.f('fk_calendar_events_series_id_calendar_series'), 'calendar_events', type_='foreignkey')
    op.drop_column('calendar_events', 'occurrence_key')
    op.drop_column('calendar_events', 'series_id')
    op.drop_index('ix_calendar_series_made_until', table_name='calendar_series')
    op.drop_table('calendar_series')
