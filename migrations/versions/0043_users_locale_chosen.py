"""users.locale_chosen: whether the person chose their language (/lang, the setup's language step, "sprich Deutsch")

A person who never chose one is answered in the language they write (`bot.parsing.language`); one who chose keeps it
whatever they write. People who were there before this column keep the language they have: nobody can tell now
whether they chose it, and a language that changes by itself would surprise them.

Revision ID: 0043
Revises: 0042
Create Date: 2026-12-04 02:30:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

import sqlalchemy as sa
from alembic import op

revision: str = '0043'
down_revision: str | Sequence[str] | None = '0042'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.add_column('users', sa.Column('locale_chosen', sa.Boolean(), nullable=False, server_default=sa.true()))
    op.alter_column('users', 'locale_chosen', server_default=sa.false())


def downgrade() -> None:
    op.drop_column('users', 'locale_chosen')
