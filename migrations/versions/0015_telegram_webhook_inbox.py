"""telegram webhook inbox

Revision ID: 0015
Revises: 0014
Create Date: 2026-11-30 02:35:32.815772
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op
from sqlalchemy.dialects import postgresql

revision: str = '0015'
down_revision: str | Sequence[str] | None = '0014'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.create_table('telegram_inbox',
    sa.Column('user_id', sa.UUID(), nullable=False),
    sa.Column('bot_id', sa.BigInteger(), nullable=False),
    sa.Column('update_id', sa.BigInteger(), nullable=False),
    sa.Column('chat_id', sa.String(length=64), nullable=False),
    sa.Column('lane', sa.String(length=8), nullable=False),
    sa.Column('payload', postgresql.JSONB(astext_type=sa.Text()), nullable=False),
    sa.Column('received_at', sa.DateTime(timezone=True), server_default=sa.text('now()'), nullable=False),
    sa.ForeignKeyConstraint(['user_id'], ['users.id'], name=op.f('fk_telegram_inbox_user_id_users'),
                            ondelete='CASCADE'),
    sa.PrimaryKeyConstraint('user_id', 'bot_id', 'update_id', name=op.f('pk_telegram_inbox')),
    info={'bookkeeping': True}
    )
    op.create_index('ix_telegram_inbox_lane', 'telegram_inbox', ['bot_id', 'chat_id', 'lane', 'update_id'],
                    unique=False)


def downgrade() -> None:
    op.drop_index('ix_telegram_inbox_lane', table_name='telegram_inbox')
    op.drop_table('telegram_inbox')
