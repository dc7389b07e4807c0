"""`/healthz` and `/metrics` of a running process, on METRICS_LISTEN (off unless set).

`/healthz` answers 200 when the process is ready (bot.health: the database answers, every chat adapter made
progress within HEALTH_WINDOW_SECONDS) and 503 while it is alive but not ready, with the checks as JSON. A process
whose event loop is stuck answers nothing, which a health check's timeout counts as a failure. `/metrics` is
prometheus_client's default registry in Prometheus' text format (bot.metrics, and the process's own metrics)."""

from __future__ import annotations

import logging
from collections.abc import AsyncIterator, Sequence
from contextlib import asynccontextmanager

from aiohttp import web
from prometheus_client import CONTENT_TYPE_LATEST, REGISTRY, generate_latest

from bot.health import Health, Liveness
from bot.metrics import DatabaseGauges
from bot.settings import Settings
from brain.core import Brain

log = logging.getLogger(__name__)


class MonitoringServer:
    """The HTTP side: two GET routes on an aiohttp server of their own."""

    def __init__(self, health: Health, gauges: DatabaseGauges) -> None:
        self.health = health
        self.gauges = gauges
        self._runner: web.AppRunner | None = None
        self.port = 0

    async def start(self, host: str, port: int) -> None:
        app = web.Application()
        app.router.add_get("/healthz", self._healthz)
        app.router.add_get("/metrics", self._metrics)
        self._runner = web.AppRunner(app, access_log=None, shutdown_timeout=1.0)
        await self._runner.setup()
        site = web.TCPSite(self._runner, host, port)
        await site.start()
        self.port = int(self._runner.addresses[0][1])  # the port taken, when `port` was 0
        log.info("health and metrics on http://%s:%d/healthz and /metrics", host, self.port)

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    async def _healthz(self, request: web.Request) -> web.Response:
        readiness = await self.health.readiness()
        return web.json_response(readiness.as_json(), status=200 if readiness.ready else 503)

    async def _metrics(self, request: web.Request) -> web.Response:
        try:
            await self.gauges.refresh()
        except Exception as problem:  # the other metrics still tell something; the gauges keep their last values
            log.warning("reading the database gauges failed: %s", problem)
        return web.Response(body=generate_latest(REGISTRY), headers={"Content-Type": CONTENT_TYPE_LATEST})


@asynccontextmanager
async def serve_monitoring(settings: Settings | None, brain: Brain,
                           adapters: Sequence[Liveness] = ()) -> AsyncIterator[MonitoringServer | None]:
    """Serves `/healthz` and `/metrics` while the block runs, when METRICS_LISTEN is set (else, or without
    settings, yields None). `adapters`: the signs of life of the chat adapters this process serves."""
    address = None if settings is None else settings.metrics_address
    if settings is None or address is None:
        yield None
        return
    health = Health(brain, window_s=settings.health_window_seconds)
    health.watch(adapters)
    server = MonitoringServer(health, DatabaseGauges(brain))
    await server.start(*address)
    try:
        yield server
    finally:
        await server.stop()
