"""`/healthz` and `/metrics` (app.monitoring) of a process serving Telegram through the real adapter and the fake
Bot API: ready while getUpdates answers, not ready once it stops answering for longer than the window; the metrics
parse as Prometheus text and count a message in and its reply out."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import pytest
from prometheus_client.parser import text_string_to_metric_families

from app.monitoring import MonitoringServer, serve_monitoring
from bot.dialog import Dialog
from bot.settings import load_settings
from brain.core import Brain
from tests.telegram.conftest import make_adapter, send
from tests.telegram.fake_bot_api import FakeBotAPI, Person

WINDOW_S = 2.0  # HEALTH_WINDOW_SECONDS here; the adapter long-polls for 0.3 s, well within it


@pytest.fixture
async def monitored(brain: Brain, dialog: Dialog, api: FakeBotAPI) -> AsyncIterator[MonitoringServer]:
    settings = load_settings(METRICS_LISTEN="127.0.0.1:0", HEALTH_WINDOW_SECONDS=str(WINDOW_S))
    adapter = make_adapter(brain, dialog, api, poll_timeout=0.3)
    async with serve_monitoring(settings, brain, [adapter.liveness]) as server:
        assert server is not None
        await adapter.start()
        try:
            yield server
        finally:
            await adapter.stop()


async def get(server: MonitoringServer, path: str) -> tuple[int, str]:
    async with aiohttp.ClientSession() as http, http.get(f"http://127.0.0.1:{server.port}{path}") as response:
        return response.status, await response.text()


async def wait_for_status(server: MonitoringServer, status: int, within: float = 30.0) -> dict[str, Any]:
    """Asks /healthz until it answers `status`; its report then."""
    async with asyncio.timeout(within):
        while True:
            answered, body = await get(server, "/healthz")
            if answered == status:
                import json

                return dict(json.loads(body))
            await asyncio.sleep(0.1)


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """Every sample of a /metrics answer, by name and labels (the parser refuses what is not Prometheus text)."""
    return {(sample.name, tuple(sorted(sample.labels.items()))): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


async def test_healthz_is_not_ready_once_get_updates_stops_answering_for_longer_than_the_window(
        api: FakeBotAPI, monitored: MonitoringServer) -> None:
    ready = await wait_for_status(monitored, 200)
    assert ready["ready"] is True
    assert ready["checks"]["database"]["ok"] and ready["checks"]["telegram"]["ok"]
    # From now on every getUpdates is answered only after the test is over: the poller hangs.
    api.slow("getUpdates", delay=60.0, times=10_000)
    stalled = await wait_for_status(monitored, 503)
    assert stalled["alive"] is True and stalled["ready"] is False
    assert stalled["checks"]["database"]["ok"] is True
    assert stalled["checks"]["telegram"]["ok"] is False
    assert "no poll or sync answered" in stalled["checks"]["telegram"]["detail"]


async def test_metrics_parse_and_count_a_message_in_and_its_reply_out(
        api: FakeBotAPI, monitored: MonitoringServer, person: Callable[..., Person]) -> None:
    telegram = (("platform", "telegram"),)
    status, text = await get(monitored, "/metrics")
    assert status == 200
    before = samples(text)
    await send(api, person(), "/help")
    # The reply is sent before the sender marks its row sent: the count may come a moment after the request.
    async with asyncio.timeout(10):
        while True:
            after = samples((await get(monitored, "/metrics"))[1])
            if after.get(("companion_messages_sent_total", telegram), 0) > before.get(
                    ("companion_messages_sent_total", telegram), 0):
                break
            await asyncio.sleep(0.05)

    def grew(name: str, labels: tuple[tuple[str, str], ...] = telegram) -> float:
        return after.get((name, labels), 0) - before.get((name, labels), 0)

    assert grew("companion_messages_received_total") == 1
    assert grew("companion_messages_sent_total") == 1
    assert grew("companion_reply_seconds_count") == 1
    # The gauges read from the database, and the process's own metrics, are there too.
    assert after[("companion_outbox_messages", (("status", "pending"),))] == 0
    assert after[("companion_outbox_messages", (("status", "failed"),))] == 0
    assert after[("companion_memory_promotion_backlog", ())] >= 0
    assert after[("process_resident_memory_bytes", ())] > 0
