"""farewell cleanup: the bare users row left by /delete_me goes once its goodbye is settled

Revision ID: 0014
Revises: 0013
Create Date: 2026-11-30 02:50:00.000000

/delete_me erases everything of a person but the bare `users` row, which carries one outbox row of kind
'farewell' (see brain/data_rights.py). When a sender marks that row sent or failed, this deferred trigger
deletes the users row (cascading to the farewell row) and any event written for the person meanwhile, at the
commit of the sender's transaction. A person who still has an identity is never touched: only an erased
person's row can carry a farewell.
"""
from __future__ import annotations

from collections.abc import Sequence

from alembic import op


revision: str = '0014'
down_revision: str | Sequence[str] | None = '0013'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def upgrade() -> None:
    op.execute("""
        CREATE FUNCTION companion_farewell_settled() RETURNS trigger LANGUAGE plpgsql AS $$
        BEGIN
            IF NOT EXISTS (SELECT 1 FROM identities WHERE user_id = NEW.user_id) THEN
                DELETE FROM events WHERE user_id = NEW.user_id;
                DELETE FROM users WHERE id = NEW.user_id;
            END IF;
            RETURN NULL;
        END
        $$
    """)
    op.execute("""
        CREATE CONSTRAINT TRIGGER outbox_farewell_settled
        AFTER UPDATE OF status ON outbox
        DEFERRABLE INITIALLY DEFERRED
        FOR EACH ROW
        WHEN (NEW.kind = 'farewell' AND NEW.status <> 'pending')
        EXECUTE FUNCTION companion_farewell_settled()
    """)


def downgrade() -> None:
    op.execute("DROP TRIGGER IF EXISTS outbox_farewell_settled ON outbox")
    op.execute("DROP FUNCTION IF EXISTS companion_farewell_settled()")
