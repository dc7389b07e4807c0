"""Readiness (bot.health): the database must answer, and every watched adapter must be connected and have shown a
sign of life within the window. Time is a counter the test moves."""

from __future__ import annotations

from bot.health import Health, Liveness
from brain.core import Brain
from brain.store.database import Database


class Seconds:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def test_an_adapter_is_ready_only_while_connected_and_heard_from_within_the_window(brain: Brain) -> None:
    seconds = Seconds()
    telegram = Liveness("telegram", monotonic=seconds)
    health = Health(brain, window_s=60)
    health.watch([telegram])
    assert not (await health.readiness()).ready  # not started yet
    telegram.connected()
    assert (await health.readiness()).ready
    seconds.now += 60
    assert (await health.readiness()).ready
    seconds.now += 1
    stalled = await health.readiness()
    assert not stalled.ready
    assert stalled.as_json()["checks"] == {
        "database": {"ok": True, "detail": "reachable"},
        "telegram": {"ok": False, "detail": "no poll or sync answered for 61 s"}}
    telegram.progressed()
    assert (await health.readiness()).ready
    telegram.disconnected()
    assert not (await health.readiness()).ready


async def test_a_database_that_does_not_answer_is_not_ready() -> None:
    brain = Brain(Database("postgresql+psycopg://nobody:nothing@127.0.0.1:9/none", pool_size=1))
    try:
        readiness = await Health(brain).readiness()
    finally:
        await brain.close()
    assert not readiness.ready
    (database,) = readiness.checks
    assert database.name == "database" and not database.ok
