"""What the parts of the brain work through: the database, the clock, the event bus, transactions (units of work
whose events reach the bus after commit), the tool registry and executor, and the long-term memory. `brain.core.Brain`
is one; the parts it is made of (projections, goal tracking, rituals, the companion) take a Kernel, so none of them
imports the Brain."""

from __future__ import annotations

from typing import Protocol

from brain.clock import Clock
from brain.events.bus import EventBus
from brain.memory.api import Memory
from brain.store.database import Database
from brain.store.unit_of_work import Transactions
from brain.tools.executor import ToolExecutor
from brain.tools.registry import ToolRegistry


class Kernel(Protocol):
    @property
    def db(self) -> Database: ...

    @property
    def clock(self) -> Clock: ...

    @property
    def bus(self) -> EventBus: ...

    @property
    def transactions(self) -> Transactions: ...

    @property
    def registry(self) -> ToolRegistry: ...

    @property
    def tools(self) -> ToolExecutor: ...

    @property
    def memory(self) -> Memory | None: ...
