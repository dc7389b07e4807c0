"""memory entities: a name key, so that "Jurgen" or "Juergen" finds the person told about as "Jürgen"

Capture looked entities up by lower(name), so a name written without its umlauts or accents (or with ae/oe/ue for
them) found nothing and became a second entity. The key is `brain.names.name_key` of the name, the same fold capture
applies to a message's words; it is computed in Python, here for the entities there are and on insert for new ones,
so there is one fold and no copy of it in SQL. The lookup index on (user_id, lower(name)) gives way to one on
(user_id, name_key); the unique index on lower(name) per kind stays as it is.

Revision ID: 0027
Revises: 0026
Create Date: 2026-12-02 10:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

from brain.names import name_key

revision: str = '0027'
down_revision: str | Sequence[str] | None = '0026'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

BATCH = 1000


def upgrade() -> None:
    op.add_column('memory_entities', sa.Column('name_key', sa.Text(), nullable=True))
    bind = op.get_bind()
    rows = bind.execute(sa.text("SELECT id, name FROM memory_entities")).all()
    update = sa.text("UPDATE memory_entities SET name_key = :key WHERE id = :id")
    for start in range(0, len(rows), BATCH):
        bind.execute(update, [{"id": row.id, "key": name_key(row.name)} for row in rows[start:start + BATCH]])
    op.alter_column('memory_entities', 'name_key', existing_type=sa.Text(), nullable=False)
    op.drop_index('ix_memory_entities_user_name', table_name='memory_entities')
    op.create_index('ix_memory_entities_user_name_key', 'memory_entities', ['user_id', 'name_key'], unique=False)


def downgrade() -> None:
    op.drop_index('ix_memory_entities_user_name_key', table_name='memory_entities')
    op.create_index('ix_memory_entities_user_name', 'memory_entities', ['user_id', sa.text('lower(name)')],
                    unique=False)
    op.drop_column('memory_entities', 'name_key')
