"""memory search stemmed: the full-text column holds each word with its plural ending off (S-stemmer)

"Besides great views, I also like hotels with a rooftop pool" shared no word with "can you suggest a hotel?": the
lexical channel kept words as written ('simple', one stemmer would mangle the other language). The column is now
computed over memory_stem(memory_fold(text)): Harman's S-stemmer (1991), the lightest published English stemmer,
which only takes plural endings off ("hotels" -> "hotel", "stories" -> "story", "boxes" -> "boxe" like "boxe"), the
same in Python (brain.memory.recall.stem_word). It leaves German endings alone and touches a German word only where
it ends in -s after a letter other than s or u ("Kurs" -> "Kur"), which joins words, never splits one.

Revision ID: 0041
Revises: 0040
Create Date: 2026-12-03 08:00:00.000000
"""
from __future__ import annotations

from collections.abc import Sequence

from alembic import op

revision: str = '0041'
down_revision: str | Sequence[str] | None = '0040'
branch_labels: str | Sequence[str] | None = None
depends_on: str | Sequence[str] | None = None


def _search_column(expression: str) -> None:
    # PostgreSQL 17 and later: the column is recomputed in place, its GIN index rebuilt with it.
    op.execute(f"ALTER TABLE memory_nodes ALTER COLUMN search SET EXPRESSION AS ({expression})")


def upgrade() -> None:
    # The rules in Harman's order, each at a word's end after a letter: -ies -> -y (not after a or e), -es -> -e (not
    # after a, e or o), -s -> nothing (not after s or u). A word changed by one rule no longer ends as the next wants.
    op.execute(r"""
        CREATE FUNCTION memory_stem(words text) RETURNS text LANGUAGE sql IMMUTABLE PARALLEL SAFE
        RETURN regexp_replace(regexp_replace(regexp_replace(words,
                   '(?<=[b-df-z])ies\M', 'y', 'g'),
                   '(?<=[b-df-np-z])es\M', 'e', 'g'),
                   '(?<=[a-rtv-z])s\M', '', 'g')""")
    _search_column("to_tsvector('simple'::regconfig, memory_stem(memory_fold(text)))")


def downgrade() -> None:
    _search_column("to_tsvector('simple'::regconfig, memory_fold(text))")
    op.execute("DROP FUNCTION memory_stem(text)")
