"""memory nodes inline vectors: a node's row is kept whole in its page up to 4 kB (toast_tuple_target)

A node's row is about 2.6 kB with a 384-dimension embedding (1.5 kB), its text and full-text column: above
PostgreSQL's default threshold of 2 kB, so the embedding, the largest value, was moved to the TOAST table. Every
cosine the promotion's candidate statement computes (about 70 per new memory) then fetched it through the TOAST
index: 3 more buffers per candidate, a fifth of that statement at 100,000 memories. Rows up to 4 kB now stay in
their page (a longer text is still compressed or moved out as before). The setting applies to rows written from now
on; rows written before stay as they are until they are written again.

Revision ID: 0042
Revises: 0041
Create Date: 2026-12-03 17:30:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = '0042'
down_revision: str | Sequence[str] | None = '0041'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("ALTER TABLE memory_nodes SET (toast_tuple_target = 4096)")


def downgrade() -> None:
    op.execute("ALTER TABLE memory_nodes RESET (toast_tuple_target)")
