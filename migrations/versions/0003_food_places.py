"""food and places

Revision ID: 0003
Revises: 0002
Create Date: 2026-11-29 19:57:57.468691
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
import pgvector.sqlalchemy
from alembic import op


revision: str = '0003'
down_revision: str | Sequence[str] | None = '0002'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('meals',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('meal_type', sa.String(length=16), nullable=False),
    sa.Column('input_type', sa.String(length=16), nullable=False),
    sa.Column('description', sa.String(length=500), nullable=False),
    sa.Column('calories', sa.Integer(), nullable=True),
    sa.Column('protein', sa.Integer(), nullable=True),
    sa.Column('carbs', sa.Integer(), nullable=True),
    sa.Column('fat', sa.Integer(), nullable=True),
    sa.Column('logged_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('local_date', sa.Date(), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('clock_timestamp()'), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_meals_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_meals'))
    )
    op.create_index('ix_meals_user_date', 'meals', ['user_id', 'local_date'], unique=False)
    op.create_table('nutrition_goals',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('daily_calories', sa.Integer(), nullable=False),
    sa.Column('daily_protein', sa.Integer(), nullable=True),
    sa.Column('daily_carbs', sa.Integer(), nullable=True),
    sa.Column('daily_fat', sa.Integer(), nullable=True),
    sa.Column('updated_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_nutrition_goals_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_nutrition_goals')),
    sa.UniqueConstraint('user_id', name=op.f('uq_nutrition_goals_user_id'))
    )
    op.create_table('places',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('name', sa.String(length=100), nullable=False),
    sa.Column('category', sa.String(length=16), nullable=True),
    sa.Column('lat', sa.Float(), nullable=True),
    sa.Column('lng', sa.Float(), nullable=True),
    sa.Column('address', sa.String(length=300), nullable=True),
    sa.Column('visit_count', sa.Integer(), server_default='0', nullable=False),
    sa.Column('last_visited_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_places_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_places'))
    )
    op.create_index('ix_places_user_visits', 'places', ['user_id', 'visit_count'], unique=False)
    op.create_table('tracking_sessions',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('stopped_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('duration_ms', sa.Integer(), nullable=True),
    sa.Column('log_count', sa.Integer(), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_tracking_sessions_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_tracking_sessions'))
    )
    op.create_index('uq_tracking_sessions_user_active', 'tracking_sessions', ['user_id'], unique=True, postgresql_where=sa.text('stopped_at IS NULL'))
    op.create_table('location_logs',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('lat', sa.Float(), nullable=False),
    sa.Column('lng', sa.Float(), nullable=False),
    sa.Column('accuracy', sa.Float(), nullable=True),
    sa.Column('place_id', sa.UUID(), nullable=True),
    sa.Column('session_id', sa.UUID(), nullable=True),
    sa.Column('logged_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('local_date', sa.Date(), nullable=False),
    sa.ForeignKeyConstraint(['place_id'], ['places.id'], name=op.f('fk_location_logs_place_id_places'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['session_id'], ['tracking_sessions.id'], name=op.f('fk_location_logs_session_id_tracking_sessions'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_location_logs_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_location_logs'))
    )
    op.create_index(op.f('ix_location_logs_place_id'), 'location_logs', ['place_id'], unique=False)
    op.create_index(op.f('ix_location_logs_session_id'), 'location_logs', ['session_id'], unique=False)
    op.create_index('ix_location_logs_user_time', 'location_logs', ['user_id', 'logged_at'], unique=False)
    op.create_table('place_visits',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('place_id', sa.UUID(), nullable=False),
    sa.Column('source', sa.String(length=16), nullable=False),
    sa.Column('visited_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('local_date', sa.Date(), nullable=False),
    sa.ForeignKeyConstraint(['place_id'], ['places.id'], name=op.f('fk_place_visits_place_id_places'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_place_visits_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_place_visits'))
    )
    op.create_index(op.f('ix_place_visits_place_id'), 'place_visits', ['place_id'], unique=False)
    op.create_index('ix_place_visits_user_date', 'place_visits', ['user_id', 'local_date'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_place_visits_user_date', table_name='place_visits')
    op.drop_index(op.f('ix_place_visits_place_id'), table_name='place_visits')
    op.drop_table('place_visits')
    op.drop_index('ix_location_logs_user_time', table_name='location_logs')
    op.drop_index(op.f('ix_location_logs_session_id'), table_name='location_logs')
    op.drop_index(op.f('ix_location_logs_place_id'), table_name='location_logs')
    op.drop_table('location_logs')
    op.drop_index('uq_tracking_sessions_user_active', table_name='tracking_sessions', postgresql_where=sa.text('stopped_at IS NULL'))
    op.drop_table('tracking_sessions')
    op.drop_index('ix_places_user_visits', table_name='places')
    op.drop_table('places')
    op.drop_table('nutrition_goals')
    op.drop_index('ix_meals_user_date', table_name='meals')
    op.drop_table('meals')
