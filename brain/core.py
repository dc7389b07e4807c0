"""The brain as one object: database, clock, event bus, transactions, tool registry and executor.
Built once by the app and passed to the bot; tests build it over their own database and clock."""

from __future__ import annotations

from brain.clock import Clock, SystemClock
from brain.events.bus import EventBus
from brain.store.database import Database
from brain.store.unit_of_work import Transactions
from brain.tools.executor import ToolExecutor
from brain.tools.registry import ToolRegistry, default_registry


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

    async def close(self) -> None:
        await self.db.dispose()
