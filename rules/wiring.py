"""The brain with the pulse wired in: `build_brain` is how the app and the tests make a brain. The rule engine's
event rules (goal reached) listen on its bus after the brain's own projections and goal tracker, so they see
streaks and goals that already count the event. The time rules run on the scheduler's ticks (bot.scheduler)."""

from __future__ import annotations

from brain.clock import Clock
from brain.companion.agent import CompanionConfig
from brain.companion.llm import LLM
from brain.core import Brain
from brain.memory.embedder import Embedder
from brain.store.database import Database
from brain.tools.registry import ToolRegistry
from rules.engine import RuleEngine


def build_brain(db: Database, *, clock: Clock | None = None, registry: ToolRegistry | None = None,
                embedder: Embedder | None = None, llm: LLM | None = None,
                companion: CompanionConfig = CompanionConfig()) -> Brain:
    """A brain over `db` (see `Brain` for the parts) whose bus runs the event rules."""
    brain = Brain(db, clock=clock, registry=registry, embedder=embedder, llm=llm, companion=companion)
    RuleEngine(brain).listen()
    return brain
