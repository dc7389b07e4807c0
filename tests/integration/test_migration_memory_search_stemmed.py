"""Migration 0041 on a database with memories: the full-text column takes the words' plural endings off (Harman's
S-stemmer in SQL, memory_stem), exactly as recall takes them off a query's words in Python (stem_word); the downgrade
gives the folded words back."""

from __future__ import annotations

import re

import psycopg
from alembic import command

from brain.memory.recall import fold_word, stem_word
from brain.store.migrate import alembic_config, upgrade
from tests.integration.migration_database import VECTOR, database_at

SENTENCES = [
    "Besides great views, I also like hotels with a rooftop pool",
    "Two stories about boxes, shoes, buses and glasses: the boys' toys",
    "Jürgen's Cafés, the Häuser des Kurses, plays, days, keys, species, series, aliases, canoes",
    "Es war im Januar 2023 bei Oskars Eltern, es gibt 1990s songs, iPhones and the news",
]


def _folded_and_stemmed_in_python(sentence: str) -> set[str]:
    return {stem_word(fold_word(word)) for word in re.findall(r"\w+", sentence.lower())}


def test_0041_stems_the_search_column_as_recall_stems_a_query_and_the_downgrade_undoes_it(pg_server) -> None:
    with database_at(pg_server, "0040") as (name, person):
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            conn.execute(
                "INSERT INTO memory_nodes (user_id, source_key, speaker, text, embedding, embedder, w_raw, w_abs, "
                "w_decay, captured_at) VALUES (%s, 'a', 'user', 'Two hotels, three stories', %s, 'wordllama@256', "
                "0.5, 0.5, 0.5, now())", (person, VECTOR))
            assert conn.execute("SELECT search FROM memory_nodes").fetchone() == (
                "'hotels':2 'stories':4 'three':3 'two':1",)

        upgrade(pg_server.url(name))
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            assert conn.execute("SELECT search FROM memory_nodes").fetchone() == (
                "'hotel':2 'story':4 'three':3 'two':1",)
            for sentence in SENTENCES:
                [lexemes] = conn.execute(
                    "SELECT array_agg(lexeme) FROM unnest(to_tsvector('simple', memory_stem(memory_fold(%s))))",
                    (sentence,)).fetchone()
                assert set(lexemes) == _folded_and_stemmed_in_python(sentence), sentence

        command.downgrade(alembic_config(pg_server.url(name)), "0040")
        with psycopg.connect(pg_server.uri(name), autocommit=True) as conn:
            assert conn.execute("SELECT search FROM memory_nodes").fetchone() == (
                "'hotels':2 'stories':4 'three':3 'two':1",)
        upgrade(pg_server.url(name))
