"""`companion run` with TELEGRAM_TOKEN set serves Telegram (here the fake Bot API through TELEGRAM_BASE_URL)
as a real process, with /healthz and /metrics on METRICS_LISTEN, and stops cleanly on SIGTERM."""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import socket
import sys
import tempfile
from pathlib import Path

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.telegram.fake_bot_api import TOKEN, FakeBotAPI

ROOT = Path(__file__).resolve().parents[2]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


async def answer(url: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(url) as response:
        return response.status, await response.text()


async def health_check(env: dict[str, str]) -> int:
    """`companion health`'s exit code."""
    checking = await asyncio.create_subprocess_exec(sys.executable, "-m", "app.cli", "health", cwd=ROOT, env=env,
                                                    stdout=asyncio.subprocess.DEVNULL,
                                                    stderr=asyncio.subprocess.DEVNULL)
    return await asyncio.wait_for(checking.wait(), timeout=60)


@pytest.mark.slow
async def test_companion_run_serves_telegram_until_sigterm(api: FakeBotAPI, database_url: str, person) -> None:  # type: ignore[no-untyped-def]
    data_dir = tempfile.mkdtemp(prefix="crun", dir="/tmp")
    port = free_port()
    env = {**os.environ, "TELEGRAM_TOKEN": TOKEN, "TELEGRAM_BASE_URL": api.base_url, "DATABASE_URL": database_url,
           "COMPANION_DATA_DIR": data_dir, "LOG_LEVEL": "WARNING", "PULSE_TICK_SECONDS": "3600",
           "METRICS_LISTEN": f"127.0.0.1:{port}"}
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "app.cli", "run", cwd=ROOT, env=env, stdin=asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
    try:
        alice = person()
        api.push(api.text(alice, "/help"))
        (reply,) = await api.wait_for("sendMessage", chat_id=alice.id, within=90)
        assert "What I understand" in reply.text
        # Ready: the database answers and the poller is connected (it polled just now).
        assert (await answer(f"http://127.0.0.1:{port}/healthz"))[0] == 200
        async with asyncio.timeout(30):  # the reply's row is marked sent a moment after the request
            while True:
                status, text = await answer(f"http://127.0.0.1:{port}/metrics")
                counted = {(sample.name, tuple(sample.labels.items())): sample.value
                           for family in text_string_to_metric_families(text) for sample in family.samples}
                if counted.get(("companion_messages_sent_total", (("platform", "telegram"),))):
                    break
                await asyncio.sleep(0.1)
        assert status == 200
        assert counted[("companion_messages_received_total", (("platform", "telegram"),))] == 1
        assert counted[("companion_messages_sent_total", (("platform", "telegram"),))] == 1
        # The health check of the image and the compose file.
        assert await health_check(env) == 0
        process.send_signal(signal.SIGTERM)
        _, stderr = await asyncio.wait_for(process.communicate(), timeout=30)
        assert process.returncode == 0, stderr.decode()
        assert "Serving TelegramAdapter" in stderr.decode()
        assert await health_check(env) == 1  # nobody answers any more
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
        shutil.rmtree(data_dir, ignore_errors=True)
