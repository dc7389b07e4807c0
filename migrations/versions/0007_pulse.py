"""pulse nudges, outcomes, adaptations

Revision ID: 0007
Revises: 0006
Create Date: 2026-11-29 20:23:31.439217
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0007'
down_revision: str | Sequence[str] | None = '0006'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('nudges',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('rule', sa.String(length=32), nullable=False),
    sa.Column('slot', sa.String(length=64), nullable=False),
    sa.Column('type', sa.String(length=32), nullable=False),
    sa.Column('priority', sa.SmallInteger(), nullable=False),
    sa.Column('status', sa.String(length=16), nullable=False),
    sa.Column('content', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('data', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('due_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('decided_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('local_hour', sa.SmallInteger(), nullable=False),
    sa.Column('snoozes', sa.SmallInteger(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_nudges_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_nudges')),
    sa.UniqueConstraint('user_id', 'rule', 'slot', name=op.f('uq_nudges_user_id_rule_slot'))
    )
    op.create_index('ix_nudges_user_status_due', 'nudges', ['user_id', 'status', 'due_at'], unique=False)
    op.create_table('pulse_states',
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('paused', sa.Boolean(), nullable=False),
    sa.Column('paused_until', sa.DateTime(timezone=True), nullable=True),
    sa.Column('last_inbound_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_pulse_states_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', name=op.f('pk_pulse_states'))
    )
    op.create_table('rule_adaptations',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('rule', sa.String(length=32), nullable=False),
    sa.Column('change', sa.String(length=16), nullable=False),
    sa.Column('offset_minutes', sa.Integer(), nullable=False),
    sa.Column('backoff_factor', sa.SmallInteger(), nullable=False),
    sa.Column('local_hour', sa.SmallInteger(), nullable=True),
    sa.Column('active', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('undone_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_rule_adaptations_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_rule_adaptations'))
    )
    op.create_index('ix_rule_adaptations_user_rule', 'rule_adaptations', ['user_id', 'rule'], unique=False)
    op.create_table('nudge_outcomes',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('nudge_id', sa.UUID(), nullable=False),
    sa.Column('rule', sa.String(length=32), nullable=False),
    sa.Column('outcome', sa.String(length=16), nullable=False),
    sa.Column('latency_s', sa.Integer(), nullable=True),
    sa.Column('local_hour', sa.SmallInteger(), nullable=False),
    sa.Column('recorded_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['nudge_id'], ['nudges.id'], name=op.f('fk_nudge_outcomes_nudge_id_nudges'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_nudge_outcomes_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_nudge_outcomes'))
    )
    op.create_index(op.f('ix_nudge_outcomes_nudge_id'), 'nudge_outcomes', ['nudge_id'], unique=False)
    op.create_index('ix_nudge_outcomes_user_recorded', 'nudge_outcomes', ['user_id', 'recorded_at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_nudge_outcomes_user_recorded', table_name='nudge_outcomes')
    op.drop_index(op.f('ix_nudge_outcomes_nudge_id'), table_name='nudge_outcomes')
    op.drop_table('nudge_outcomes')
    op.drop_index('ix_rule_adaptations_user_rule', table_name='rule_adaptations')
    op.drop_table('rule_adaptations')
    op.drop_table('pulse_states')
    op.drop_index('ix_nudges_user_status_due', table_name='nudges')
    op.drop_table('nudges')
