"""The brain as one object: the kernel the parts work through (database, clock, event bus, transactions, tool
registry and executor, long-term memory) and the parts: streaks and goals kept from the bus, the day-snapshot cache,
the ritual runner and the language-model companion. Built once by the app (`rules.wiring.build_brain` adds the
pulse's event rules) and passed to the bot; tests build it over their own database and clock."""

from __future__ import annotations

from brain.clock import Clock, SystemClock
from brain.companion.agent import Companion, CompanionConfig
from brain.companion.llm import LLM
from brain.events.bus import EventBus
from brain.goals import subscribers as goal_subscribers
from brain.memory.api import Memory
from brain.memory.embedder import Embedder
from brain.pipeline_log import PipelineLog
from brain.projections import subscribers as projection_subscribers
from brain.projections.day_snapshot import SnapshotCache
from brain.rituals import tools as ritual_tools
from brain.rituals.runner import RitualRunner
from brain.store.database import Database
from brain.store.unit_of_work import Transactions
from brain.tools.catalog import LIFE_TOOLS
from brain.tools.executor import ToolExecutor
from brain.tools.registry import ToolRegistry


class Brain:
    """`embedder`: the long-term memory with this embedder and a buffered pipeline log (none without). `llm`: the
    companion on this model client, configured by `companion` (none without)."""

    def __init__(
        self,
        db: Database,
        *,
        clock: Clock | None = None,
        bus: EventBus | None = None,
        registry: ToolRegistry | None = None,
        embedder: Embedder | None = None,
        llm: LLM | None = None,
        companion: CompanionConfig = CompanionConfig(),
    ) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()
        self.bus = bus or EventBus()
        self.transactions = Transactions(db, self.bus, self.clock)
        self.registry = registry or default_registry()
        self.tools = ToolExecutor(self.transactions, self.registry)
        self.memory: Memory | None = None
        if embedder is not None:
            self.memory = Memory(self, embedder, log=PipelineLog(db.sessions, self.clock))
        # Streaks are updated before goals read them (rules.wiring adds the rules, which react to both, after them).
        projection_subscribers.subscribe(self)
        self.snapshots = SnapshotCache(self)
        goal_subscribers.subscribe(self)
        self.rituals = RitualRunner(self)
        self.companion: Companion | None = None if llm is None else Companion(self, llm, companion)

    async def close(self) -> None:
        if self.companion is not None:
            await self.companion.llm.aclose()  # the kept connections of its chat requests
        await self.db.dispose()


def default_registry() -> ToolRegistry:
    """Every tool the brain offers: the life logs' and what is kept over them, and the rituals'."""
    return ToolRegistry([*LIFE_TOOLS, *ritual_tools.TOOLS])
