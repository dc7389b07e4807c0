"""memory HNSW ef_construction 32: inserting a memory into the vector index searches 32 candidates, not 64

Promoting a memory inserts its vector into the space's HNSW index, and at 100,000 memories that insert was the
largest single cost of promotion in the database server (3.5 ms of its 6.6 ms per memory, pg_stat_statements): the
insert searches the graph for ef_construction candidates before it links the new node. With 32 (pgvector's least for
m = 16) instead of 64 the insert costs about 30 % less, and promotion from scratch to 100,000 memories went from 185
to 213 nodes/s (benchmarks/memory_scale.py, e5).

A graph built that way is a little coarser; the searches make up for it by looking wider, so what they find stays
as good (measured on the 100k graphs against an exact search, 300 questions and texts outside the graph):
recall's vector channel with hnsw.ef_search 160 instead of 100 finds 0.944 of the exact 10 nearest (0.950 before),
promotion's edge candidates with 64 instead of 48 find 0.852 of the exact 32 nearest (0.858 before).

Revision ID: 0045
Revises: 0044
Create Date: 2026-12-04 19:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = '0045'
down_revision: str | Sequence[str] | None = '0044'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# Every space's index: the default one of migration 0029 and any made at run time (brain.memory.space.ensure_index).
# Only inserts read the setting, so no index is rebuilt: the graph built so far stays as it is.
_PREFIX = "ix_memory_nodes_hnsw_"


def _set(ef_construction: int) -> None:
    op.execute(f"""
        DO $$
        DECLARE name text;
        BEGIN
            FOR name IN SELECT c.relname FROM pg_class c JOIN pg_am a ON a.oid = c.relam
                        WHERE c.relkind = 'i' AND a.amname = 'hnsw' AND c.relname LIKE '{_PREFIX}%'
                          AND c.relnamespace = current_schema()::regnamespace
            LOOP
                EXECUTE format('ALTER INDEX %I SET (ef_construction = {ef_construction})', name);
            END LOOP;
        END $$""")


def upgrade() -> None:
    _set(32)


def downgrade() -> None:
    _set(64)
