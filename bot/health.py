"""Whether a running process is healthy, as `/healthz` reports it (`app.monitoring`).

Alive: the event loop answers (the request is served at all). Ready: the database answers, and each chat adapter
is connected and made progress (an answered long poll, a sync) within the window. An adapter reports through its
`Liveness`, a platform-neutral mark it sets on every sign of life; it runs no query and knows no HTTP."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from sqlalchemy import text

from brain.core import Brain

DEFAULT_WINDOW_S = 60.0
DATABASE_TIMEOUT_S = 5.0


class Liveness:
    """One adapter's signs of life: `connected` once it reached its platform, `progressed` on each answered poll or
    sync, `disconnected` when it stops. The times are on `monotonic` (time.monotonic unless a test moves it)."""

    def __init__(self, platform: str, *, monotonic: Callable[[], float] = time.monotonic) -> None:
        self.platform = platform
        self.monotonic = monotonic
        self.is_connected = False
        self.last_progress: float | None = None

    def connected(self) -> None:
        self.is_connected = True
        self.progressed()

    def progressed(self) -> None:
        self.last_progress = self.monotonic()

    def disconnected(self) -> None:
        self.is_connected = False

    def silent_for(self) -> float | None:
        """Seconds since the last sign of life; None before the first."""
        return None if self.last_progress is None else self.monotonic() - self.last_progress


@dataclass(frozen=True)
class Check:
    name: str
    ok: bool
    detail: str


@dataclass(frozen=True)
class Readiness:
    ready: bool
    checks: tuple[Check, ...]

    def as_json(self) -> dict[str, object]:
        return {"alive": True, "ready": self.ready,
                "checks": {check.name: {"ok": check.ok, "detail": check.detail} for check in self.checks}}


class Health:
    """The readiness of this process: its database, and the adapters whose `Liveness` it was given."""

    def __init__(self, brain: Brain, *, window_s: float = DEFAULT_WINDOW_S) -> None:
        self.brain = brain
        self.window_s = window_s
        self.adapters: list[Liveness] = []

    def watch(self, liveness: Sequence[Liveness]) -> None:
        self.adapters.extend(liveness)

    async def readiness(self) -> Readiness:
        checks = [await self._database(), *(self._adapter(liveness) for liveness in self.adapters)]
        return Readiness(all(check.ok for check in checks), tuple(checks))

    async def _database(self) -> Check:
        try:
            async with asyncio.timeout(DATABASE_TIMEOUT_S), self.brain.db.engine.connect() as connection:
                await connection.execute(text("SELECT 1"))
        except Exception as problem:
            return Check("database", False, f"{type(problem).__name__}: {problem}"[:200])
        return Check("database", True, "reachable")

    def _adapter(self, liveness: Liveness) -> Check:
        silent = liveness.silent_for()
        if not liveness.is_connected or silent is None:
            return Check(liveness.platform, False, "not connected")
        if silent > self.window_s:
            return Check(liveness.platform, False, f"no poll or sync answered for {silent:.0f} s")
        return Check(liveness.platform, True, f"last poll or sync {silent:.0f} s ago")
