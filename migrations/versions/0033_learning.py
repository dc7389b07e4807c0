"""facts learned and used: when each person's facts were last looked at, the facts they deleted, and a fact's
wording for people

`learning_runs` keeps, per person and kind of run (the nightly rules, the weekly model), when it last ran, so each
runs once a night or a week however often the scheduler asks. `forgotten_facts` keeps a deleted fact's key for 90
days, so no extractor learns it again meanwhile. `memory_facts.said` holds a fact as the person reads it (a
translatable text), where the extractor wrote one.

Revision ID: 0033
Revises: 0032
Create Date: 2026-12-04 09:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0033'
down_revision: str | Sequence[str] | None = '0032'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('learning_runs',
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('kind', sa.String(length=16), nullable=False),
    sa.Column('last_run_at', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_learning_runs_user_id_users'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', 'kind', name=op.f('pk_learning_runs'))
    )
    op.create_table('forgotten_facts',
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('key', sa.Text(), nullable=False),
    sa.Column('statement', sa.Text(), nullable=False),
    sa.Column('until', sa.DateTime(timezone=True), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_forgotten_facts_user_id_users'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', 'key', name=op.f('pk_forgotten_facts'))
    )
    op.add_column('memory_facts', sa.Column('said', postgresql.JSONB(astext_type=sa.Text()), nullable=True))


def downgrade() -> None:
    op.drop_column('memory_facts', 'said')
    op.drop_table('forgotten_facts')
    op.drop_table('learning_runs')
