"""The brain with the pulse wired in: `build_brain` is how the app and the tests make a brain. The rule engine's
event rules (goal reached) listen on its bus after the brain's own projections and goal tracker, so they see
streaks and goals that already count the event. The time rules run on the scheduler's ticks (bot.scheduler)."""

from __future__ import annotations

from brain.clock import Clock
from brain.core import Brain
from brain.store.database import Database
from brain.tools.registry import ToolRegistry
from rules.engine import RuleEngine


def build_brain(db: Database, *, clock: Clock | None = None, registry: ToolRegistry | None = None) -> Brain:
    brain = Brain(db, clock=clock, registry=registry)
    RuleEngine(brain).listen()
    return brain
