"""memory vector spaces: every vector says which embedder made it, and any length fits

The embedding columns were vector(256), WordLlama's length, so no other embedder could be used. They become plain
`vector` columns with an `embedder` column beside them (the vector space's key, name@length, see
brain.memory.space), so a change of embedder can re-embed the memories in the background while the old vectors stay
where they are: nothing is lost, and recall finds what is not re-embedded yet by its words. Every vector written
before this migration was WordLlama's. The HNSW index becomes one per space, partial on its key; this migration
builds the default space's (multilingual-e5-small, 384), the running memory builds another space's when it needs it.

Revision ID: 0029
Revises: 0028
Create Date: 2026-12-02 14:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from pgvector.sqlalchemy import Vector

revision: str = '0029'
down_revision: str | Sequence[str] | None = '0028'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As in brain.memory.space, fixed here: a migration describes the schema of its own time.
_OLD_SPACE = 'wordllama@256'
_DEFAULT_SPACE = 'multilingual-e5-small@384'
_OLD_INDEX = 'ix_memory_nodes_hnsw_wordllama_256_55c64026'
_DEFAULT_INDEX = 'ix_memory_nodes_hnsw_multilingual_e5_small_384_d8736e86'


def upgrade() -> None:
    op.drop_index('ix_memory_nodes_embedding_half_hnsw', table_name='memory_nodes', postgresql_using='hnsw')
    for table in ('memory_nodes', 'memory_short_term'):
        op.add_column(table, sa.Column('embedder', sa.String(80), nullable=True))
        op.alter_column(table, 'embedding', type_=Vector(), existing_nullable=table == 'memory_short_term')
    op.execute(f"UPDATE memory_nodes SET embedder = '{_OLD_SPACE}'")
    op.execute(f"UPDATE memory_short_term SET embedder = '{_OLD_SPACE}' WHERE embedding IS NOT NULL")
    op.alter_column('memory_nodes', 'embedder', nullable=False)
    op.create_index(_DEFAULT_INDEX, 'memory_nodes', [sa.text('CAST(embedding AS halfvec(384)) halfvec_cosine_ops')],
                    unique=False, postgresql_using='hnsw', postgresql_with={'m': 16, 'ef_construction': 64},
                    postgresql_where=sa.text(f"embedder = '{_DEFAULT_SPACE}'"))


def downgrade() -> None:
    # Back to WordLlama's fixed length, which only WordLlama's vectors fit: run with EMBEDDER=wordllama until every
    # memory is re-embedded first (refused otherwise, rather than dropping memories).
    other = op.get_bind().scalar(sa.text(
        "SELECT count(*) FROM memory_nodes WHERE embedder <> :old"), {"old": _OLD_SPACE})
    if other:
        raise RuntimeError(f"{other} memories hold vectors of another embedder than WordLlama: run the companion "
                           "with EMBEDDER=wordllama until they are re-embedded, then downgrade")
    op.drop_index(_DEFAULT_INDEX, table_name='memory_nodes', postgresql_using='hnsw')
    op.execute(f"DROP INDEX IF EXISTS {_OLD_INDEX}")
    op.execute("UPDATE memory_short_term SET embedding = NULL WHERE embedder IS DISTINCT FROM :old".replace(
        ":old", f"'{_OLD_SPACE}'"))
    for table in ('memory_nodes', 'memory_short_term'):
        op.alter_column(table, 'embedding', type_=Vector(256), existing_nullable=table == 'memory_short_term')
        op.drop_column(table, 'embedder')
    op.create_index('ix_memory_nodes_embedding_half_hnsw', 'memory_nodes',
                    [sa.text('CAST(embedding AS halfvec(256)) halfvec_cosine_ops')], unique=False,
                    postgresql_using='hnsw', postgresql_with={'m': 16, 'ef_construction': 64})
