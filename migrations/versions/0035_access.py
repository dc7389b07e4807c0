"""access: who may talk to the companion (grants), one-time invite codes, the strangers' daily notice

Revision ID: 0035
Revises: 0034
Create Date: 2026-12-02 06:10:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0035'
down_revision: str | Sequence[str] | None = '0034'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('access_grants',
    sa.Column('platform', sa.String(length=16), nullable=False),
    sa.Column('account', sa.String(length=255), nullable=False),
    sa.Column('role', sa.String(length=8), nullable=False),
    sa.Column('label', sa.String(length=128), nullable=True),
    sa.Column('via', sa.String(length=8), nullable=False),
    sa.Column('admitted_at', sa.DateTime(timezone=True), nullable=False),
    sa.PrimaryKeyConstraint('platform', 'account', name=op.f('pk_access_grants'))
    )
    op.create_index('uq_access_grants_owner', 'access_grants', ['role'], unique=True,
                    postgresql_where="role = 'owner'")
    op.create_table('access_invites',
    sa.Column('code_hash', sa.String(length=64), nullable=False),
    sa.Column('created_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('expires_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('used_at', sa.DateTime(timezone=True), nullable=True),
    sa.Column('used_by', sa.String(length=280), nullable=True),
    sa.PrimaryKeyConstraint('code_hash', name=op.f('pk_access_invites'))
    )
    op.create_table('access_refusals',
    sa.Column('account_hash', sa.String(length=64), nullable=False),
    sa.Column('day_started_at', sa.DateTime(timezone=True), nullable=False),
    sa.Column('told', sa.Boolean(), nullable=False),
    sa.Column('failed_codes', sa.Integer(), nullable=False),
    sa.PrimaryKeyConstraint('account_hash', name=op.f('pk_access_refusals'))
    )


def downgrade() -> None:
    op.drop_table('access_refusals')
    op.drop_table('access_invites')
    op.drop_index('uq_access_grants_owner', table_name='access_grants', postgresql_where="role = 'owner'")
    op.drop_table('access_grants')
