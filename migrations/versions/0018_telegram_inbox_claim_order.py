"""telegram inbox claim order: an index in the order updates are claimed

A claim takes the oldest lane head that no worker holds. It read every row of the inbox to find the heads
(a GROUP BY per claim), so a burst of N stored updates cost N x N row reads. It now walks the rows in claim
order through this index and stops at the first free head, checking each row's lane through the lane index.

Revision ID: 0018
Revises: 0017
Create Date: 2026-11-30 12:55:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = '0018'
down_revision: str | Sequence[str] | None = '0017'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_index('ix_telegram_inbox_claim_order', 'telegram_inbox', ['bot_id', 'received_at', 'update_id'],
                    unique=False)


def downgrade() -> None:
    op.drop_index('ix_telegram_inbox_claim_order', table_name='telegram_inbox')
