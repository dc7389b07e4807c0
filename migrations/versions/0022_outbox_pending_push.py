"""outbox pending pushes per person: an index for the push half of a sender's claim

A chat's claim (`adapters.telegram.delivery`) also asks for the oldest pending pushes (rows without a platform) of
the person whose private chat it is. Without an index for that, the claim read pending pushes in id order through
`ix_outbox_pending` (status, platform, id), fetching each heap row to test its person: in a minute of morning
summaries for 1,000 people, about half of all pending pushes per claim. This index holds only pending pushes, by
person.

Revision ID: 0022
Revises: 0021
Create Date: 2026-11-30 18:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = '0022'
down_revision: str | Sequence[str] | None = '0021'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index('ix_outbox_pending_push', 'outbox', ['user_id', 'id'], unique=False,
                    postgresql_where="status = 'pending' AND platform IS NULL")


def downgrade() -> None:
    op.drop_index('ix_outbox_pending_push', table_name='outbox',
                  postgresql_where="status = 'pending' AND platform IS NULL")
