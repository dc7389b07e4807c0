"""spine: people, events, outbox, actions, drink

Revision ID: 0001
Revises: 
Create Date: 2026-11-29 19:53:18.668374
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import pgvector.sqlalchemy
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0001'
down_revision: str | Sequence[str] | None = None
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table('events',
    sa.Column('seq', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('type', sa.String(length=64), nullable=False),
    sa.Column('module', sa.String(length=32), nullable=False),
    sa.Column('collection', sa.String(length=64), nullable=False),
    sa.Column('record_id', sa.String(length=64), nullable=False),
    sa.Column('actor', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('caused_by', sa.UUID(), nullable=True),
    sa.Column('payload', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('occurred_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('seq', name=op.f('pk_events')),
    sa.UniqueConstraint('id', name=op.f('uq_events_id'))
    )
    op.create_index('ix_events_user_module_time', 'events', ['user_id', 'module', 'occurred_at'], unique=False)
    op.create_index('ix_events_user_time', 'events', ['user_id', 'occurred_at'], unique=False)
    op.create_index('ix_events_user_type_time', 'events', ['user_id', 'type', 'occurred_at'], unique=False)
    op.create_table('users',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('display_name', sa.String(length=128), nullable=True),
    sa.Column('locale', sa.String(length=8), nullable=False),
    sa.Column('timezone', sa.String(length=64), nullable=False),
    sa.Column('quiet_start', sa.Time(), nullable=False),
    sa.Column('quiet_end', sa.Time(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_users'))
    )
    op.create_table('action_tokens',
    sa.Column('token', sa.String(length=24), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('payload', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('single_use', sa.Boolean(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('used_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_action_tokens_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('token', name=op.f('pk_action_tokens'))
    )
    op.create_index('ix_action_tokens_user_expires', 'action_tokens', ['user_id', 'expires_at'], unique=False)
    op.create_table('drink_entries',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('drink_type', sa.String(length=16), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('quantity_ml', sa.Integer(), nullable=False),
    sa.Column('preset_id', sa.UUID(), nullable=True),
    sa.Column('logged_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('local_date', sa.Date(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('clock_timestamp()'), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_drink_entries_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_drink_entries'))
    )
    op.create_index('ix_drink_entries_user_date', 'drink_entries', ['user_id', 'local_date'], unique=False)
    op.create_table('drink_goals',
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('drink_type', sa.String(length=16), nullable=False),
    sa.Column('daily_ml', sa.Integer(), nullable=False),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_drink_goals_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', 'drink_type', name=op.f('pk_drink_goals'))
    )
    op.create_table('drink_presets',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('drink_type', sa.String(length=16), nullable=False),
    sa.Column('quantity_ml', sa.Integer(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_drink_presets_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_drink_presets')),
    sa.UniqueConstraint('user_id', 'name', name=op.f('uq_drink_presets_user_id_name'))
    )
    op.create_table('identities',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('platform', sa.String(length=16), nullable=False),
    sa.Column('platform_id', sa.String(length=255), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_identities_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_identities')),
    sa.UniqueConstraint('platform', 'platform_id', name=op.f('uq_identities_platform_platform_id'))
    )
    op.create_index(op.f('ix_identities_user_id'), 'identities', ['user_id'], unique=False)
    op.create_table('outbox',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('kind', sa.String(length=32), nullable=False),
    sa.Column('slot', sa.String(length=128), nullable=False),
    sa.Column('platform', sa.String(length=16), nullable=True),
    sa.Column('chat_id', sa.String(length=255), nullable=True),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('buttons', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('status', sa.String(length=8), nullable=False),
    sa.Column('attempts', sa.Integer(), nullable=False),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('sent_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_outbox_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_outbox')),
    sa.UniqueConstraint('user_id', 'kind', 'slot', name=op.f('uq_outbox_user_id_kind_slot'))
    )
    op.create_index('ix_outbox_pending', 'outbox', ['status', 'platform', 'id'], unique=False, postgresql_where="status = 'pending'")


def downgrade() -> None:
    op.drop_index('ix_outbox_pending', table_name='outbox', postgresql_where="status = 'pending'")
    op.drop_table('outbox')
    op.drop_index(op.f('ix_identities_user_id'), table_name='identities')
    op.drop_table('identities')
    op.drop_table('drink_presets')
    op.drop_table('drink_goals')
    op.drop_index('ix_drink_entries_user_date', table_name='drink_entries')
    op.drop_table('drink_entries')
    op.drop_index('ix_action_tokens_user_expires', table_name='action_tokens')
    op.drop_table('action_tokens')
    op.drop_table('users')
    op.drop_index('ix_events_user_type_time', table_name='events')
    op.drop_index('ix_events_user_time', table_name='events')
    op.drop_index('ix_events_user_module_time', table_name='events')
    op.drop_table('events')
