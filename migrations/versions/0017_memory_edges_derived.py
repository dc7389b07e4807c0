"""memory edges derived: no foreign keys on memory_edges, theme candidates from memory_node_themes

Edges are a cache derived from their nodes: the code that deletes nodes or a person deletes their edges in the
same transaction, so the three foreign keys (each checked on every one of ~32 rows a new node writes) and the
b_id index (there only for the cascade) go. The unique (a_id, b_id) and the (user_id, a_id) index become one
unique (user_id, a_id, b_id), which serves both. Theme candidates come from a side table (user_id, theme,
node_id) read backwards per theme; the GIN index on memory_nodes.themes, used by nothing else, goes.

Revision ID: 0017
Revises: 0016
Create Date: 2026-11-30 08:15:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0017'
down_revision: str | Sequence[str] | None = '0016'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.drop_constraint('fk_memory_edges_a_id_memory_nodes', 'memory_edges', type_='foreignkey')
    op.drop_constraint('fk_memory_edges_b_id_memory_nodes', 'memory_edges', type_='foreignkey')
    op.drop_constraint('fk_memory_edges_user_id_users', 'memory_edges', type_='foreignkey')
    op.drop_index('ix_memory_edges_b_id', table_name='memory_edges')
    op.create_unique_constraint(op.f('uq_memory_edges_user_id_a_id_b_id'), 'memory_edges',
                                ['user_id', 'a_id', 'b_id'])
    op.drop_index('ix_memory_edges_user_a', table_name='memory_edges')
    op.drop_constraint('uq_memory_edges_a_id_b_id', 'memory_edges', type_='unique')

    op.create_table('memory_node_themes',
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('theme', sa.Text(), nullable=False),
    sa.Column('node_id', sa.BigInteger(), nullable=False),
    sa.PrimaryKeyConstraint('user_id', 'theme', 'node_id', name=op.f('pk_memory_node_themes'))
    )
    op.execute("""
        INSERT INTO memory_node_themes (user_id, theme, node_id)
        SELECT DISTINCT n.user_id, t.theme, n.id FROM memory_nodes n CROSS JOIN LATERAL unnest(n.themes) AS t(theme)
    """)
    op.drop_index('ix_memory_nodes_themes', table_name='memory_nodes', postgresql_using='gin')


def downgrade() -> None:
    op.create_index('ix_memory_nodes_themes', 'memory_nodes', ['themes'], unique=False, postgresql_using='gin',
                    postgresql_with={'fastupdate': 'off'})
    op.drop_table('memory_node_themes')

    # Rows the foreign keys would refuse (none if the code kept its promise) go before the keys come back.
    op.execute("""
        DELETE FROM memory_edges e
        WHERE NOT EXISTS (SELECT 1 FROM memory_nodes n WHERE n.id = e.a_id)
           OR NOT EXISTS (SELECT 1 FROM memory_nodes n WHERE n.id = e.b_id)
           OR NOT EXISTS (SELECT 1 FROM users u WHERE u.id = e.user_id)
    """)
    op.create_unique_constraint(op.f('uq_memory_edges_a_id_b_id'), 'memory_edges', ['a_id', 'b_id'])
    op.create_index('ix_memory_edges_user_a', 'memory_edges', ['user_id', 'a_id'], unique=False)
    op.drop_constraint('uq_memory_edges_user_id_a_id_b_id', 'memory_edges', type_='unique')
    op.create_index('ix_memory_edges_b_id', 'memory_edges', ['b_id'], unique=False)
    op.create_foreign_key(op.f('fk_memory_edges_user_id_users'), 'memory_edges', 'users', ['user_id'], ['id'],
                          ondelete='CASCADE')
    op.create_foreign_key(op.f('fk_memory_edges_b_id_memory_nodes'), 'memory_edges', 'memory_nodes', ['b_id'],
                          ['id'], ondelete='CASCADE')
    op.create_foreign_key(op.f('fk_memory_edges_a_id_memory_nodes'), 'memory_edges', 'memory_nodes', ['a_id'],
                          ['id'], ondelete='CASCADE')
