"""memory search folded: the full-text column of the memories holds its words folded (case, ß, umlauts, accents)

"Jürgen", "Juergen" and "Jurgen" were three different words to the lexical channel of recall, as were "Café" and
"Cafe". The column is now computed over memory_fold(text), an immutable SQL function with the same fold that recall
applies to a query's words in Python (brain.memory.recall.fold_word, letters in brain.memory.lexicon.FOLD_FROM).

Revision ID: 0030
Revises: 0029
Create Date: 2026-12-02 15:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = '0030'
down_revision: str | Sequence[str] | None = '0029'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None

# As in brain.memory.lexicon, fixed here: a migration describes the schema of its own time.
_FOLD_FROM = "äöüáàâãåéèêëíìîïóòôõúùûýÿçñ"
_FOLD_TO = "aouaaaaaeeeeiiiioooouuuyycn"


def _search_column(expression: str) -> None:
    op.execute("DROP INDEX IF EXISTS ix_memory_nodes_search")
    op.execute("ALTER TABLE memory_nodes DROP COLUMN search")
    op.execute(f"ALTER TABLE memory_nodes ADD COLUMN search tsvector GENERATED ALWAYS AS ({expression}) STORED")
    op.execute("CREATE INDEX ix_memory_nodes_search ON memory_nodes USING gin (search)")


def upgrade() -> None:
    op.execute(f"""
        CREATE FUNCTION memory_fold(words text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN regexp_replace(translate(replace(lower(words), 'ß', 'ss'), '{_FOLD_FROM}', '{_FOLD_TO}'),
                              '([aou])e+', '\\1', 'g')""")
    _search_column("to_tsvector('simple'::regconfig, memory_fold(text))")


def downgrade() -> None:
    _search_column("to_tsvector('simple'::regconfig, text)")
    op.execute("DROP FUNCTION memory_fold(text)")
