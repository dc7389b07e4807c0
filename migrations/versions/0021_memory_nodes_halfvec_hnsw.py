"""memory nodes halfvec hnsw: the approximate index holds the embeddings in half precision

About two thirds of the database's work per promoted memory at 100,000 memories was pgvector's HNSW index: the
insert of the new node and the search of its 32 nearest. Over `halfvec` (2 bytes a dimension instead of 4) both
read and write half the bytes per vector. The index is built on the expression `CAST(embedding AS halfvec(256))`;
the column keeps full precision, and statements order by the same expression only to choose the nearest nodes,
while every similarity they return is still computed on the full vectors. Same build parameters as before.

Revision ID: 0021
Revises: 0020
Create Date: 2026-11-30 17:45:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0021'
down_revision: str | Sequence[str] | None = '0020'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As in brain.memory.models (EMBEDDING_DIM), fixed here: a migration describes the schema of its own time.
_HALF = sa.text('CAST(embedding AS halfvec(256)) halfvec_cosine_ops')


def upgrade() -> None:
    op.drop_index('ix_memory_nodes_embedding_hnsw', table_name='memory_nodes', postgresql_using='hnsw')
    op.create_index('ix_memory_nodes_embedding_half_hnsw', 'memory_nodes', [_HALF], unique=False,
                    postgresql_using='hnsw', postgresql_with={'m': 16, 'ef_construction': 64})


def downgrade() -> None:
    op.drop_index('ix_memory_nodes_embedding_half_hnsw', table_name='memory_nodes', postgresql_using='hnsw')
    op.create_index('ix_memory_nodes_embedding_hnsw', 'memory_nodes', ['embedding'], unique=False,
                    postgresql_using='hnsw', postgresql_with={'m': 16, 'ef_construction': 64},
                    postgresql_ops={'embedding': 'vector_cosine_ops'})
