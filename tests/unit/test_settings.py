"""Settings: defaults, normalisation, and a clear message naming each bad setting."""

from __future__ import annotations

import pytest

from bot.settings import SettingsError, load_settings


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    for name in ("DATABASE_URL", "DEFAULT_LOCALE", "DEFAULT_TIMEZONE", "TELEGRAM_TOKEN", "MATRIX_HOMESERVER",
                 "MATRIX_USER_ID", "MATRIX_PASSWORD", "MATRIX_ACCESS_TOKEN", "OLLAMA_HOST", "EMBEDDING_DIM",
                 "LOG_LEVEL", "EMBEDDER", "EVENT_LOOP", "STT_URL", "OLLAMA_MODEL_VISION", "VOICE_MAX_SECONDS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # no stray .env


def test_defaults_need_no_configuration() -> None:
    s = load_settings()
    assert s.database_url is None and s.default_locale == "en" and s.default_timezone == "UTC"
    assert not s.telegram_enabled and not s.matrix_enabled


def test_database_url_is_normalised_for_psycopg(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DATABASE_URL", "postgresql://u:p@db:5432/companion")
    assert load_settings().database_url == "postgresql+psycopg://u:p@db:5432/companion"


def test_locale_is_normalised(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DEFAULT_LOCALE", "de_DE")
    assert load_settings().default_locale == "de"


@pytest.mark.parametrize("name, value, words", [
    ("DEFAULT_TIMEZONE", "Mars/Olympus", "IANA"),
    ("DEFAULT_LOCALE", "fr", "one of"),
    ("DATABASE_URL", "mysql://x", "PostgreSQL"),
    ("TELEGRAM_TOKEN", "not-a-token", "BotFather"),
    ("OLLAMA_HOST", "localhost:11434", "http"),
    ("STT_URL", "127.0.0.1:8000", "http"),
    ("VOICE_MAX_SECONDS", "0", "greater than or equal to 1"),
    ("EMBEDDING_DIM", "7", "greater than or equal"),
    ("LOG_LEVEL", "LOUD", "DEBUG"),
    ("EMBEDDER", "magic", "wordllama"),
    ("EVENT_LOOP", "trio", "uvloop"),
])
def test_bad_value_names_the_setting(monkeypatch: pytest.MonkeyPatch, name: str, value: str, words: str) -> None:
    monkeypatch.setenv(name, value)
    with pytest.raises(SettingsError) as bad:
        load_settings()
    assert name in str(bad.value) and words in str(bad.value)


def test_matrix_needs_user_and_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MATRIX_HOMESERVER", "https://matrix.example.org")
    with pytest.raises(SettingsError, match="MATRIX_USER_ID"):
        load_settings()
    monkeypatch.setenv("MATRIX_USER_ID", "@bot:example.org")
    with pytest.raises(SettingsError, match="MATRIX_PASSWORD"):
        load_settings()
    monkeypatch.setenv("MATRIX_ACCESS_TOKEN", "syt_abc")
    assert load_settings().matrix_enabled


def test_voice_and_photos_are_off_until_a_server_and_a_model_are_named(monkeypatch: pytest.MonkeyPatch) -> None:
    s = load_settings()
    assert s.stt_url is None and s.ollama_model_vision is None
    assert (s.voice_max_seconds, s.voice_max_mb, s.stt_local, s.ollama_vision_local) == (300, 20.0, True, True)
    monkeypatch.setenv("STT_URL", "http://127.0.0.1:8000/")
    monkeypatch.setenv("OLLAMA_MODEL_VISION", "  ")
    s = load_settings()
    assert s.stt_url == "http://127.0.0.1:8000" and s.ollama_model_vision is None
