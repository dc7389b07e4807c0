"""memory entities: indexes for capture's lookup by name and by alias

Capture looks up the entities a message names, by lower-case name and by alias. The only index was the unique
(user_id, kind, lower(name)); the lookup's OR over kinds and aliases could not use it, so every capture read all of
the person's entities: 10 ms per message at 10,000 entities (memory_scale at 60,000 memories), growing with them.
Now the name half goes through (user_id, lower(name)) and the alias half through a GIN index on the aliases of the
entities that have any (most have none).

Revision ID: 0023
Revises: 0022
Create Date: 2026-11-30 20:30:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0023'
down_revision: str | Sequence[str] | None = '0022'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index('ix_memory_entities_user_name', 'memory_entities', ['user_id', sa.text('lower(name)')],
                    unique=False)
    op.create_index('ix_memory_entities_aliases', 'memory_entities', ['aliases'], unique=False,
                    postgresql_using='gin', postgresql_where=sa.text('cardinality(aliases) > 0'))


def downgrade() -> None:
    op.drop_index('ix_memory_entities_aliases', table_name='memory_entities', postgresql_using='gin',
                  postgresql_where=sa.text('cardinality(aliases) > 0'))
    op.drop_index('ix_memory_entities_user_name', table_name='memory_entities')
