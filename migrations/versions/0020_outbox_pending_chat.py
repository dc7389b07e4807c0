"""outbox pending per chat: an index for a sender's claim of one chat's head row

A chat's claim (`adapters.telegram.delivery`) asks for the oldest pending row of one chat. The only index was
`ix_outbox_pending` (status, platform, id), so a claim read every pending row of the platform, and with them the
entries of rows sent moments before (a bitmap scan does not skip entries of dead rows, and an entry of a row just
sent is not dead to everyone yet): in a burst of 1,000 chats about 500 index entries and 50 heap pages per claim,
for the two rows it wants. This index holds only pending rows, by chat.

Revision ID: 0020
Revises: 0019
Create Date: 2026-11-30 16:05:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = '0020'
down_revision: str | Sequence[str] | None = '0019'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index('ix_outbox_pending_chat', 'outbox', ['platform', 'chat_id', 'id'], unique=False,
                    postgresql_where="status = 'pending'")


def downgrade() -> None:
    op.drop_index('ix_outbox_pending_chat', table_name='outbox', postgresql_where="status = 'pending'")
