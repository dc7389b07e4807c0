"""memory node entities: entity candidates from a side table (user_id, entity_id, node_id)

Promotion's entity candidates (the newest active nodes naming an entity of a new memory) were read by walking
memory_nodes back from the newest node and testing each for the entity, or through the GIN index on
memory_nodes.entity_ids for a rare one: over a millisecond per new memory at 100,000 nodes, a third of the
candidate search. Like the themes (0017), the entities now come from a side table read backwards per entity from
its primary key, and the GIN index, used by nothing else, goes (every new node wrote into it).

Revision ID: 0019
Revises: 0018
Create Date: 2026-11-30 15:30:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0019'
down_revision: str | Sequence[str] | None = '0018'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('memory_node_entities',
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('entity_id', sa.UUID(), nullable=False),
    sa.Column('node_id', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('user_id', 'entity_id', 'node_id', name=op.f('pk_memory_node_entities'))
    )
    op.execute("""
        INSERT INTO memory_node_entities (user_id, entity_id, node_id)
        SELECT DISTINCT n.user_id, e.entity_id, n.id
        FROM memory_nodes n CROSS JOIN LATERAL unnest(n.entity_ids) AS e(entity_id)
    """)
    op.drop_index('ix_memory_nodes_entity_ids', table_name='memory_nodes', postgresql_using='gin')


def downgrade() -> None:
    op.create_index('ix_memory_nodes_entity_ids', 'memory_nodes', ['entity_ids'], unique=False,
                    postgresql_using='gin', postgresql_with={'fastupdate': 'off'})
    op.drop_table('memory_node_entities')
