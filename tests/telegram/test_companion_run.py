"""`companion run` with TELEGRAM_TOKEN set serves Telegram (here the fake Bot API through TELEGRAM_BASE_URL)
as a real process, and stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import tempfile
from pathlib import Path

import pytest

from tests.telegram.fake_bot_api import TOKEN, FakeBotAPI

ROOT = Path(__file__).resolve().parents[2]


@pytest.mark.slow
async def test_companion_run_serves_telegram_until_sigterm(api: FakeBotAPI, database_url: str, person) -> None:  # type: ignore[no-untyped-def]
    data_dir = tempfile.mkdtemp(prefix="crun", dir="/tmp")
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN, "TELEGRAM_BASE_URL": api.base_url, "DATABASE_URL": database_url,
           "COMPANION_DATA_DIR": data_dir, "LOG_LEVEL": "WARNING", "PULSE_TICK_SECONDS": "3600"}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "run", cwd=ROOT, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        alice = person()
        api.push(api.text(alice, "/help"))
        (reply,) = await api.wait_for("sendMessage", chat_id=alice.id, within=90)
        assert "What I understand" in reply.text
        process.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
        assert process.returncode == 0, stderr.decode()
        assert "Serving TelegramAdapter" in stderr.decode()
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        shutil.rmtree(data_dir, ignore_errors=True)
