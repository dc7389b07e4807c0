"""The brain as one object: database, clock, event bus, transactions, tool registry and executor.
Built once by the app and passed to the bot; tests build it over their own database and clock."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from brain.clock import Clock, SystemClock
from brain.events.bus import EventBus
from brain.goals import subscribers as goal_subscribers
from brain.projections import subscribers as projection_subscribers
from brain.rituals import tools as ritual_tools
from brain.store.database import Database
from brain.store.unit_of_work import Transactions
from brain.tools.catalog import LIFE_TOOLS
from brain.tools.executor import ToolExecutor
from brain.tools.registry import ToolRegistry

if TYPE_CHECKING:
    from brain.companion.agent import Companion


class Brain:
    def __init__(
        self,
        db: Database,
        *,
        clock: Clock | None = None,
        bus: EventBus | None = None,
        registry: ToolRegistry | None = None,
    ) -> None:
        self.db = db
        self.clock: Clock = clock or SystemClock()
        self.bus = bus or EventBus()
        self.transactions = Transactions(db, self.bus, self.clock)
        self.registry = registry or default_registry()
        self.tools = ToolExecutor(self.transactions, self.registry)
        self.snapshots: Any = None  # a SnapshotCache, attached by brain.projections.subscribers
        self.memory: Any = None  # a brain.memory.api.Memory, built by the app (app.wiring.open_app)
        self.companion: Companion | None = None  # the LLM companion, built by the app when a model is configured
        # Streaks are updated before goals read them (rules.wiring adds the rules, which react to both, after them).
        projection_subscribers.subscribe(self)
        goal_subscribers.subscribe(self)

    async def close(self) -> None:
        await self.db.dispose()


def default_registry() -> ToolRegistry:
    """Every tool the brain offers: the life logs' and what is kept over them, and the rituals'."""
    return ToolRegistry([*LIFE_TOOLS, *ritual_tools.TOOLS])
