"""What a running process counts for Prometheus (`/metrics`, served by `app.monitoring`): messages in and out per
platform, the time to a reply, model calls, the scheduler's lag, and gauges read from the database (the outbox and
the memory's promotion queue). The counters live in prometheus_client's default registry beside its process
metrics (memory, CPU, open files); the parts that count call the small functions here."""

from __future__ import annotations

import time

from prometheus_client import Counter, Gauge, Histogram
from sqlalchemy import func, select

from brain.core import Brain
from brain.memory.promotion import pending_entries
from brain.outbox.models import FAILED, PENDING, OutboxMessage

MESSAGES_IN = Counter("companion_messages_received", "Messages and button presses the dialog handled",
                      ["platform"])
MESSAGES_OUT = Counter("companion_messages_sent", "Outbox rows delivered to a platform", ["platform"])
REPLY_SECONDS = Histogram("companion_reply_seconds", "From an update reaching the dialog to its reply in the outbox",
                          ["platform"], buckets=(0.05, 0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 60, 120))
MODEL_CALL_SECONDS = Histogram("companion_model_call_seconds", "Requests to the model server, each attempt",
                               ["tier"], buckets=(0.1, 0.25, 0.5, 1, 2, 5, 10, 20, 40, 60, 120))
MODEL_CALL_ERRORS = Counter("companion_model_call_errors", "Requests to the model server that failed", ["tier"])
SCHEDULER_LAG = Histogram("companion_scheduler_lag_seconds", "How late a scheduled job started", ["job"],
                          buckets=(0.01, 0.1, 0.5, 1, 2, 5, 10, 30, 60, 300))
OUTBOX = Gauge("companion_outbox_messages", "Outbox rows waiting to be sent (pending) or given up (failed)",
               ["status"])
PROMOTION_BACKLOG = Gauge("companion_memory_promotion_backlog",
                          "Short-term memory entries waiting for promotion into the long-term memory")

DATABASE_GAUGES_EVERY_S = 15.0  # scrapes within this time read the last values instead of counting again


def message_received(platform: str) -> None:
    MESSAGES_IN.labels(platform).inc()


def message_sent(platform: str) -> None:
    MESSAGES_OUT.labels(platform).inc()


def replied(platform: str, seconds: float) -> None:
    REPLY_SECONDS.labels(platform).observe(seconds)


def model_called(tier: str, seconds: float, ok: bool) -> None:
    MODEL_CALL_SECONDS.labels(tier).observe(seconds)
    if not ok:
        MODEL_CALL_ERRORS.labels(tier).inc()


def job_started(job: str, lag_seconds: float) -> None:
    SCHEDULER_LAG.labels(job).observe(max(0.0, lag_seconds))


class DatabaseGauges:
    """Reads the gauges that live in the database, at most every DATABASE_GAUGES_EVERY_S seconds. Counts over all
    people, never a row's content."""

    def __init__(self, brain: Brain, *, every_s: float = DATABASE_GAUGES_EVERY_S) -> None:
        self.brain = brain
        self.every_s = every_s
        self._read_at: float | None = None

    async def refresh(self) -> None:
        now = time.monotonic()
        if self._read_at is not None and now - self._read_at < self.every_s:
            return
        counted = {PENDING: 0, FAILED: 0}
        async with self.brain.transactions.read() as session:
            rows = await session.execute(select(OutboxMessage.status, func.count())
                                         .where(OutboxMessage.status.in_(list(counted)))
                                         .group_by(OutboxMessage.status))
            counted.update({status: int(count) for status, count in rows})
            backlog = await pending_entries(session)
        for status, count in counted.items():
            OUTBOX.labels(status).set(count)
        PROMOTION_BACKLOG.set(backlog)
        self._read_at = now
