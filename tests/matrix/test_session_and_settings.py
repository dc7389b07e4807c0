"""The Matrix settings (validated at start, turned into the bot's configuration) and the saved session
file (owner-only, per account, survives a crash mid-write)."""

from __future__ import annotations

import asyncio
import logging
import stat
from pathlib import Path

import pytest

from adapters.matrix.adapter import MatrixAdapter, MatrixConfig, is_allowed
from adapters.matrix.session import SavedSession, SessionFile
from bot.settings import SettingsError, load_settings
from tests.matrix.synapse import free_port

MATRIX = {"MATRIX_HOMESERVER": "https://matrix.example.org/", "MATRIX_USER_ID": "@companion:example.org",
          "MATRIX_PASSWORD": "secret"}


@pytest.fixture
def env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):  # type: ignore[no-untyped-def]
    monkeypatch.chdir(tmp_path)  # no .env of the developer's
    for name in ("TELEGRAM_TOKEN", "MATRIX_ACCESS_TOKEN", "MATRIX_ALLOWED_USERS", "MATRIX_E2E",
                 "MATRIX_ALLOW_GROUP_ROOMS"):
        monkeypatch.delenv(name, raising=False)

    def set_env(**values: str) -> None:
        for name, value in {**MATRIX, "COMPANION_DATA_DIR": str(tmp_path / "data"), **values}.items():
            monkeypatch.setenv(name, value)

    return set_env


def test_the_matrix_settings_become_the_bots_configuration(env, tmp_path: Path) -> None:
    env(MATRIX_ALLOWED_USERS="@alice:example.org, example.net", MATRIX_ALLOW_GROUP_ROOMS="true",
        TELEGRAM_TOKEN="123456:ABCDEFGHIJ")
    config = MatrixConfig.from_settings(load_settings())
    assert config.homeserver == "https://matrix.example.org"
    assert config.data_dir == tmp_path / "data" / "matrix"
    assert config.password == "secret" and config.access_token is None
    assert config.allowed_users == ("@alice:example.org", "example.net")
    assert config.allow_group_rooms and not config.e2e
    assert config.other_platforms == ("telegram",)


def test_a_half_matrix_id_in_the_allow_list_is_refused_at_start(env) -> None:
    env(MATRIX_ALLOWED_USERS="@alice")
    with pytest.raises(SettingsError, match="MATRIX_ALLOWED_USERS"):
        load_settings()


def test_the_allow_list_takes_people_and_whole_servers() -> None:
    allowed = ("@alice:example.org", "example.net")
    assert is_allowed("@alice:example.org", allowed)
    assert is_allowed("@bob:example.net", allowed)
    assert not is_allowed("@bob:example.org", allowed)
    assert is_allowed("@anyone:anywhere.org", ())


def test_the_session_file_is_private_and_belongs_to_one_account(tmp_path: Path) -> None:
    file = SessionFile(tmp_path / "matrix" / "session.json")
    assert file.load("https://hs", "@bot:hs") == SavedSession("https://hs", "@bot:hs")
    saved = SavedSession("https://hs", "@bot:hs", device_id="DEV", access_token="tok", next_batch="s1")
    file.save(saved)
    assert stat.S_IMODE(file.path.stat().st_mode) == 0o600
    assert file.load("https://hs", "@bot:hs") == saved
    assert file.load("https://hs", "@other:hs") == SavedSession("https://hs", "@other:hs")
    file.path.write_text("{not json")
    assert file.load("https://hs", "@bot:hs").device_id is None


async def test_an_unreachable_homeserver_is_retried_until_the_bot_is_stopped(brain, dialog, tmp_path: Path) -> None:
    config = MatrixConfig(homeserver=f"http://127.0.0.1:{free_port()}", user_id="@bot:localhost",
                          data_dir=tmp_path / "matrix", password="secret")
    failed = asyncio.Event()

    class Watch(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "is not reachable" in record.getMessage():
                failed.set()

    watch = Watch()
    logger = logging.getLogger("adapters.matrix.adapter")
    logger.addHandler(watch)
    try:
        bot = MatrixAdapter(brain, dialog, config)
        stop = asyncio.Event()
        running = asyncio.create_task(bot.run(stop))
        await asyncio.wait_for(failed.wait(), 20)
        assert not running.done() and not bot.ready.is_set()
        stop.set()
        await asyncio.wait_for(running, 10)
    finally:
        logger.removeHandler(watch)
