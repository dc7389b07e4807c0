"""Configuration failures are loud and leak nothing: a token Telegram refuses ends `companion run` at once with one
line naming TELEGRAM_TOKEN (4 characters of it at most, no "Unclosed client session"); `companion doctor` asks
getMe and the model server for real and fails on a refused token or a missing model. Secrets are masked in every log
line, tracebacks included."""

from __future__ import annotations

import asyncio
import logging
import os
import sys
import tempfile
from pathlib import Path

import pytest

from adapters.telegram.adapter import TelegramAdapter
from adapters.telegram.config import TelegramConfig
from app.doctor import FAIL, OK, WARN, Finding, check_models, check_telegram
from bot.access import AccessPolicy
from bot.dialog import Dialog
from bot.log_format import SecretMask
from bot.settings import ConfigurationError, load_settings
from tests.fakes.ollama_server import FakeOllama
from tests.telegram.fake_bot_api import TOKEN, FakeBotAPI

ROOT = Path(__file__).resolve().parents[2]
WRONG = "987654:WRONG-token-that-telegram-refuses"


async def test_a_refused_token_stops_the_adapter_with_one_clean_line(brain, api: FakeBotAPI) -> None:
    adapter = TelegramAdapter(brain, Dialog(brain, access=AccessPolicy.open()),
                              TelegramConfig(WRONG, base_url=api.base_url))
    with pytest.raises(ConfigurationError) as refused:
        await adapter.start()
    assert "TELEGRAM_TOKEN 9876…" in str(refused.value) and WRONG[4:] not in str(refused.value)
    assert all(request._session is None for request in adapter._requests)  # no client session left open


@pytest.mark.slow
async def test_companion_run_with_a_refused_token_exits_at_once(api: FakeBotAPI, database_url: str) -> None:
    env = {**os.environ, "TELEGRAM_TOKEN": WRONG, "TELEGRAM_BASE_URL": api.base_url, "DATABASE_URL": database_url,
           "COMPANION_DATA_DIR": tempfile.mkdtemp(prefix="cbad", dir="/tmp"), "LOG_LEVEL": "INFO",
           "COMPANION_LLM": "false"}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "run", cwd=ROOT, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 180)
    said = (out + err).decode()
    assert process.returncode == 2, said
    assert "TELEGRAM_TOKEN 9876… was refused by Telegram" in said
    assert WRONG[4:] not in said and "WRONG-token" not in said  # not even in a log line or a traceback
    assert "Unclosed" not in said and "Traceback" not in said


@pytest.mark.slow
async def test_doctor_fails_on_a_refused_token_and_names_it(api: FakeBotAPI, database_url: str) -> None:
    env = {**os.environ, "TELEGRAM_TOKEN": WRONG, "TELEGRAM_BASE_URL": api.base_url, "DATABASE_URL": database_url,
           "COMPANION_DATA_DIR": tempfile.mkdtemp(prefix="cdoc", dir="/tmp"), "COMPANION_LLM": "false"}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "doctor", cwd=ROOT, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    out, err = await asyncio.wait_for(process.communicate(), 180)
    said = (out + err).decode()
    assert process.returncode == 1, said
    assert "✗ Telegram: TELEGRAM_TOKEN 9876… was refused" in said and WRONG[4:] not in said
    assert "✓ database reachable and migrated" in said


async def test_the_doctor_asks_getme(api: FakeBotAPI) -> None:
    def check(token: str, base: str) -> Finding:
        return check_telegram(load_settings(TELEGRAM_TOKEN=token, TELEGRAM_BASE_URL=base))

    good = await asyncio.to_thread(check, TOKEN, api.base_url)
    assert good.status == OK and "@companion_test_bot" in good.text
    bad = await asyncio.to_thread(check, WRONG, api.base_url)
    assert bad.status == FAIL and "TELEGRAM_TOKEN 9876…" in bad.text and WRONG[4:] not in bad.text
    nowhere = await asyncio.to_thread(check, TOKEN, "http://127.0.0.1:9")
    assert nowhere.status == FAIL and "cannot be reached" in nowhere.text


async def test_the_doctor_finds_a_missing_model(fake_ollama: FakeOllama) -> None:
    present = await asyncio.to_thread(check_models, load_settings(OLLAMA_HOST=fake_ollama.url))
    assert present.status == OK, present.text
    typo = await asyncio.to_thread(check_models, load_settings(OLLAMA_HOST=fake_ollama.url,
                                                               OLLAMA_MODEL_PRIMARY="qwen3:4bb"))
    assert typo.status == FAIL and "OLLAMA_MODEL_PRIMARY=qwen3:4bb" in typo.text
    absent = await asyncio.to_thread(check_models, load_settings(OLLAMA_HOST="http://127.0.0.1:9"))
    assert absent.status == WARN  # no model server at all: commands and buttons still work


def test_secrets_are_masked_in_log_lines_and_tracebacks() -> None:
    mask = SecretMask((WRONG,))
    handler = logging.StreamHandler(stream := _Lines())
    handler.addFilter(mask)
    log = logging.getLogger("tests.secret")
    log.addHandler(handler)
    try:
        log.warning("calling https://api.telegram.org/bot%s/getMe", WRONG)
        try:
            raise RuntimeError(f"The token `{WRONG}` was rejected by the server.")
        except RuntimeError:
            log.exception("start failed")
    finally:
        log.removeHandler(handler)
    written = "".join(stream.lines)
    assert "bot9876…/getMe" in written and "The token `9876…` was rejected" in written
    assert WRONG[4:] not in written


class _Lines:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def write(self, text: str) -> None:
        self.lines.append(text)

    def flush(self) -> None:
        pass
