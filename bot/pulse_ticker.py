"""The pulse ticker: calls the rule engine's `tick` every PULSE_TICK_SECONDS until stopped, and hands each
report to a callback (the console prints what the tick put in the outbox). A failing tick is logged and
the next one comes as usual."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable

from brain.clock import Clock
from rules.engine import RuleEngine, TickReport

log = logging.getLogger(__name__)

TickCallback = Callable[[TickReport], Awaitable[None]]


async def run_ticker(engine: RuleEngine, clock: Clock, interval_s: float, stop: asyncio.Event,
                     on_tick: TickCallback | None = None) -> int:
    """Tick at once, then every `interval_s` seconds until `stop` is set; returns the number of ticks."""
    ticks = 0
    while not stop.is_set():
        try:
            report = await engine.tick(clock.now())
            ticks += 1
            if on_tick is not None:
                await on_tick(report)
        except Exception:
            log.exception("pulse tick failed")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=interval_s)
    return ticks
