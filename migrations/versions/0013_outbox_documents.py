"""outbox documents

Revision ID: 0013
Revises: 0012
Create Date: 2026-11-30 02:31:38.414792
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op


revision: str = '0013'
down_revision: str | Sequence[str] | None = '0012'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('outbox', sa.Column('document', sa.LargeBinary(), nullable=True))
    op.add_column('outbox', sa.Column('document_name', sa.String(length=128), nullable=True))


def downgrade() -> None:
    op.drop_column('outbox', 'document_name')
    op.drop_column('outbox', 'document')
