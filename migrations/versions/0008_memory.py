"""synapse memory

Revision ID: 0008
Revises: 0007
Create Date: 2026-11-29 20:21:53.941875
"""
from __future__ import annotations

from collections.abc import Sequence

import pgvector.sqlalchemy
import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0008'
down_revision: str | Sequence[str] | None = '0007'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("CREATE EXTENSION IF NOT EXISTS vector")
    op.create_table('memory_facts',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('key', sa.Text(), nullable=False),
    sa.Column('statement', sa.Text(), nullable=False),
    sa.Column('confidence', sa.Float(), nullable=False),
    sa.Column('confirmations', sa.Integer(), server_default='0', nullable=False),
    sa.Column('contradictions', sa.Integer(), server_default='0', nullable=False),
    sa.Column('last_confirmed', sa.DateTime(timezone=True), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('source', sa.String(length=32), nullable=False),
    sa.Column('checked_at', sa.DateTime(timezone=True), nullable=True),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_memory_facts_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_memory_facts')),
    sa.UniqueConstraint('user_id', 'key', name=op.f('uq_memory_facts_user_id_key'))
    )
    op.create_table('memory_nodes',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('source_key', sa.Text(), nullable=False),
    sa.Column('speaker', sa.String(length=16), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('embedding', pgvector.sqlalchemy.vector.VECTOR(dim=256), nullable=False),
    sa.Column('themes', postgresql.ARRAY(sa.Text()), server_default=sa.text("'{}'"), nullable=False),
    sa.Column('entity_ids', postgresql.ARRAY(sa.UUID()), server_default=sa.text("'{}'"), nullable=False),
    sa.Column('timeline_start', sa.DateTime(timezone=True), nullable=True),
    sa.Column('timeline_end', sa.DateTime(timezone=True), nullable=True),
    sa.Column('timeline_precision', sa.String(length=8), nullable=True),
    sa.Column('emotion', sa.String(length=16), nullable=True),
    sa.Column('sector', sa.String(length=16), nullable=True),
    sa.Column('salience', sa.Float(), server_default='0.5', nullable=False),
    sa.Column('w_raw', sa.Float(), nullable=False),
    sa.Column('w_abs', sa.Float(), nullable=False),
    sa.Column('w_decay', sa.Float(), nullable=False),
    sa.Column('frequency', sa.Integer(), server_default='1', nullable=False),
    sa.Column('active', sa.Boolean(), server_default=sa.text('true'), nullable=False),
    sa.Column('captured_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('reinforced_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('decayed_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('search', postgresql.TSVECTOR(), sa.Computed("to_tsvector('simple'::regconfig, text)", persisted=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_memory_nodes_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_memory_nodes')),
    sa.UniqueConstraint('user_id', 'source_key', name=op.f('uq_memory_nodes_user_id_source_key'))
    )
    op.create_index('ix_memory_nodes_embedding_hnsw', 'memory_nodes', ['embedding'], unique=False, postgresql_using='hnsw', postgresql_with={'m': 16, 'ef_construction': 64}, postgresql_ops={'embedding': 'vector_cosine_ops'})
    op.create_index('ix_memory_nodes_entity_ids', 'memory_nodes', ['entity_ids'], unique=False, postgresql_using='gin', postgresql_with={'fastupdate': 'off'})
    op.create_index('ix_memory_nodes_search', 'memory_nodes', ['search'], unique=False, postgresql_using='gin')
    op.create_index('ix_memory_nodes_themes', 'memory_nodes', ['themes'], unique=False, postgresql_using='gin', postgresql_with={'fastupdate': 'off'})
    op.create_index('ix_memory_nodes_user_active', 'memory_nodes', ['user_id', 'active'], unique=False)
    op.create_index('ix_memory_nodes_user_timeline', 'memory_nodes', ['user_id', 'timeline_start'], unique=False)
    op.create_index('ix_memory_nodes_user_precision_timeline', 'memory_nodes', ['user_id', 'timeline_precision', 'timeline_start'], unique=False)
    op.create_table('pipeline_log',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=True),
    sa.Column('turn_id', sa.UUID(), nullable=True),
    sa.Column('span_id', sa.UUID(), nullable=True),
    sa.Column('parent_span_id', sa.UUID(), nullable=True),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('content', postgresql.JSONB(astext_type=sa.Text()), nullable=True),
    sa.Column('at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_pipeline_log_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_pipeline_log'))
    )
    op.create_index('ix_pipeline_log_span_id', 'pipeline_log', ['span_id'], unique=False)
    op.create_index('ix_pipeline_log_turn_id', 'pipeline_log', ['turn_id'], unique=False)
    op.create_index('ix_pipeline_log_user_at', 'pipeline_log', ['user_id', 'at'], unique=False)
    op.create_table('memory_edges',
    sa.Column('id', sa.BigInteger(), autoincrement=True, nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('a_id', sa.BigInteger(), nullable=False),
    sa.Column('b_id', sa.BigInteger(), nullable=False),
    sa.Column('w_raw', sa.Float(), nullable=False),
    sa.Column('w_abs', sa.Float(), nullable=False),
    sa.Column('reasons', postgresql.ARRAY(sa.Text()), server_default=sa.text("'{}'"), nullable=False),
    sa.Column('shared_entity_ids', postgresql.ARRAY(sa.UUID()), server_default=sa.text("'{}'"), nullable=False),
    sa.Column('shared_themes', postgresql.ARRAY(sa.Text()), server_default=sa.text("'{}'"), nullable=False),
    sa.Column('timeline_days', sa.Integer(), nullable=True),
    sa.Column('cosine_initial', sa.Float(), nullable=True),
    sa.Column('layers', sa.Integer(), server_default='1', nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.CheckConstraint('a_id <> b_id', name=op.f('ck_memory_edges_not_self')),
    sa.ForeignKeyConstraint(['a_id'], ['memory_nodes.id'], name=op.f('fk_memory_edges_a_id_memory_nodes'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['b_id'], ['memory_nodes.id'], name=op.f('fk_memory_edges_b_id_memory_nodes'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_memory_edges_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_memory_edges')),
    sa.UniqueConstraint('a_id', 'b_id', name=op.f('uq_memory_edges_a_id_b_id'))
    )
    op.create_index('ix_memory_edges_b_id', 'memory_edges', ['b_id'], unique=False)
    op.create_index('ix_memory_edges_user_a', 'memory_edges', ['user_id', 'a_id'], unique=False)
    op.create_table('memory_entities',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('kind', sa.String(length=8), nullable=False),
    sa.Column('name', sa.Text(), nullable=False),
    sa.Column('aliases', postgresql.ARRAY(sa.Text()), server_default=sa.text("'{}'"), nullable=False),
    sa.Column('place_id', sa.UUID(), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['place_id'], ['places.id'], name=op.f('fk_memory_entities_place_id_places'), ondelete='SET NULL'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_memory_entities_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_memory_entities'))
    )
    op.create_index('uq_memory_entities_user_kind_name', 'memory_entities', ['user_id', 'kind', sa.literal_column('lower(name)')], unique=True)
    op.create_table('memory_short_term',
    sa.Column('id', sa.UUID(), nullable=False),
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('speaker', sa.String(length=16), nullable=False),
    sa.Column('text', sa.Text(), nullable=False),
    sa.Column('at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('created_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.Column('embedding', pgvector.sqlalchemy.vector.VECTOR(dim=256), nullable=True),
    sa.Column('entity_ids', postgresql.ARRAY(sa.UUID()), server_default=sa.text("'{}'"), nullable=False),
    sa.Column('themes', postgresql.ARRAY(sa.Text()), server_default=sa.text("'{}'"), nullable=False),
    sa.Column('timeline_start', sa.DateTime(timezone=True), nullable=True),
    sa.Column('timeline_end', sa.DateTime(timezone=True), nullable=True),
    sa.Column('timeline_precision', sa.String(length=8), nullable=True),
    sa.Column('emotion', sa.String(length=16), nullable=True),
    sa.Column('sector', sa.String(length=16), nullable=True),
    sa.Column('salience', sa.Float(), server_default='0.5', nullable=False),
    sa.Column('source_key', sa.Text(), nullable=True),
    sa.Column('status', sa.String(length=10), server_default='pending', nullable=False),
    sa.Column('node_id', sa.BigInteger(), nullable=True),
    sa.Column('attempts', sa.Integer(), server_default='0', nullable=False),
    sa.Column('last_error', sa.Text(), nullable=True),
    sa.ForeignKeyConstraint(['node_id'], ['memory_nodes.id'], name=op.f('fk_memory_short_term_node_id_memory_nodes'), ondelete='CASCADE'),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_memory_short_term_user_id_users'), ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('id', name=op.f('pk_memory_short_term'))
    )
    op.create_index('ix_memory_short_term_user_status_at', 'memory_short_term', ['user_id', 'status', 'at'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_memory_short_term_user_status_at', table_name='memory_short_term')
    op.drop_table('memory_short_term')
    op.drop_index('uq_memory_entities_user_kind_name', table_name='memory_entities')
    op.drop_table('memory_entities')
    op.drop_index('ix_memory_edges_user_a', table_name='memory_edges')
    op.drop_index('ix_memory_edges_b_id', table_name='memory_edges')
    op.drop_table('memory_edges')
    op.drop_index('ix_pipeline_log_user_at', table_name='pipeline_log')
    op.drop_index('ix_pipeline_log_turn_id', table_name='pipeline_log')
    op.drop_index('ix_pipeline_log_span_id', table_name='pipeline_log')
    op.drop_table('pipeline_log')
    op.drop_index('ix_memory_nodes_user_timeline', table_name='memory_nodes')
    op.drop_index('ix_memory_nodes_user_precision_timeline', table_name='memory_nodes')
    op.drop_index('ix_memory_nodes_user_active', table_name='memory_nodes')
    op.drop_index('ix_memory_nodes_themes', table_name='memory_nodes', postgresql_using='gin')
    op.drop_index('ix_memory_nodes_search', table_name='memory_nodes', postgresql_using='gin')
    op.drop_index('ix_memory_nodes_entity_ids', table_name='memory_nodes', postgresql_using='gin')
    op.drop_index('ix_memory_nodes_embedding_hnsw', table_name='memory_nodes', postgresql_using='hnsw', postgresql_with={'m': 16, 'ef_construction': 64}, postgresql_ops={'embedding': 'vector_cosine_ops'})
    op.drop_table('memory_nodes')
    op.drop_table('memory_facts')
