"""reminders the person asks for, and a due time for tasks

`reminders` holds one row per reminder ("remind me to call mom at 3pm"): its time (`occurrence_at`), when it goes
out next (`due_at`, later while quiet hours or a pause hold it), its zone, and what the scheduler did with it. A
task's reminder is a row of it that names the task (`task_id`, `minutes_before` its due time); the old
`task_reminders` table, which only recorded the wish and was never sent, goes. Tasks get an optional local
`due_time` on their due day.

Revision ID: 0031
Revises: 0030
Create Date: 2026-12-03 09:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0031'
down_revision: str | Sequence[str] | None = '0030'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('tasks', sa.Column('due_time', sa.Time(), nullable=True))
    op.create_table('reminders',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('text', sa.String(length=500), nullable=False),
    sa.Column('timezone', sa.String(length=64), nullable=False),
    sa.Column('occurrence_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('due_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('held', sa.String(length=8), nullable=True),
    sa.Column('deliveries', sa.SmallInteger(), nullable=False),
    sa.Column('status', sa.String(length=10), nullable=False),
    sa.Column('task_id', sa.UUID(), nullable=True),
    sa.Column('minutes_before', sa.Integer(), nullable=True),
    sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_reminders_task_id_tasks'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_reminders_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_reminders'))
    )
    op.create_index('ix_reminders_due', 'reminders', ['due_at'], unique=False,
                    postgresql_where=sa.text("status = 'waiting'"))
    op.create_index('ix_reminders_user_status', 'reminders', ['user_id', 'status', 'due_at'], unique=False)
    op.create_index('ix_reminders_task_id', 'reminders', ['task_id'], unique=False)
    op.drop_index('ix_task_reminders_user_task', table_name='task_reminders')
    op.drop_index('ix_task_reminders_task_id', table_name='task_reminders')
    op.drop_table('task_reminders')


def downgrade() -> None:
    op.create_table('task_reminders',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('task_id', sa.UUID(), nullable=False),
    sa.Column('minutes_before', sa.Integer(), nullable=False),
    sa.Column('type', sa.String(length=16), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['task_id'], ['tasks.id'], name=op.f('fk_task_reminders_task_id_tasks'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_task_reminders_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_task_reminders'))
    )
    op.create_index('ix_task_reminders_task_id', 'task_reminders', ['task_id'], unique=False)
    op.create_index('ix_task_reminders_user_task', 'task_reminders', ['user_id', 'task_id'], unique=False)
    op.drop_index('ix_reminders_task_id', table_name='reminders')
    op.drop_index('ix_reminders_user_status', table_name='reminders')
    op.drop_index('ix_reminders_due', table_name='reminders')
    op.drop_table('reminders')
    op.drop_column('tasks', 'due_time')
