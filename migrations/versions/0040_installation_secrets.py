"""installation secrets: the strangers' hashes become HMACs under a secret of this installation

A stranger's refusal row was keyed by an unsalted SHA-256 of their account, which anyone with the table could match
by hashing candidate ids. It is now an HMAC under a random secret made once per installation (stored here, never
shown). The refusal rows hashed the old way are dropped: they only hold the current day's notice and code count.

Revision ID: 0040
Revises: 0039
Create Date: 2026-12-02 09:50:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0040'
down_revision: str | Sequence[str] | None = '0039'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table(
        "installation_secrets",
        sa.Column("name", sa.String(length=32), nullable=False),
        sa.Column("value", sa.String(length=128), nullable=False),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("name", name=op.f("pk_installation_secrets")),
    )
    op.execute("DELETE FROM access_refusals")


def downgrade() -> None:
    op.execute("DELETE FROM access_refusals")
    op.drop_table("installation_secrets")
