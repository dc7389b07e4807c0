"""The tool-usage audit (agent-improvements §11): per tool, how often the AI called it in the last days,
how often that failed or was refused or proposed, which names the model invented, and which registered
tools it never used (candidates to merge or drop). Read from `tool_calls`, which the policy gate fills for
every AI call (and the loop for calls of tools it did not offer). Aggregated over everyone: no personal
content, only counts."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from sqlalchemy import Integer, func, select
from sqlalchemy.ext.asyncio import AsyncSession

from brain.companion.models import ToolCallRecord
from brain.tools.registry import ToolRegistry

DEFAULT_DAYS = 7


@dataclass(frozen=True)
class ToolUsage:
    name: str
    calls: int
    failures: int  # not ok: refused by the gate, invalid arguments, failed in the handler
    proposed: int
    denied: int  # refused by the gate (policy or rate limit)


@dataclass
class AuditReport:
    since: datetime
    tools: list[ToolUsage] = field(default_factory=list)  # known tools, most called first
    invented: list[ToolUsage] = field(default_factory=list)  # names that are no tool
    unused: list[str] = field(default_factory=list)  # registered tools nobody called

    @property
    def calls(self) -> int:
        return sum(t.calls for t in self.tools) + sum(t.calls for t in self.invented)


async def tool_usage(session: AsyncSession, registry: ToolRegistry, now: datetime,
                     days: int = DEFAULT_DAYS) -> AuditReport:
    since = now - timedelta(days=days)
    record = ToolCallRecord
    rows = (await session.execute(
        select(record.tool_name, record.known, func.count(),
               func.sum((~record.ok).cast(Integer)),
               func.sum((record.decision == "propose").cast(Integer)),
               func.sum(record.decision.in_(("deny", "rate_limited")).cast(Integer)))
        .where(record.at >= since)
        .group_by(record.tool_name, record.known)
    )).all()
    report = AuditReport(since=since)
    for name, known, calls, failures, proposed, denied in rows:
        usage = ToolUsage(str(name), int(calls), int(failures or 0), int(proposed or 0), int(denied or 0))
        (report.tools if known and registry.get(str(name)) is not None else report.invented).append(usage)
    report.tools.sort(key=lambda u: (-u.calls, u.name))
    report.invented.sort(key=lambda u: (-u.calls, u.name))
    used = {u.name for u in report.tools}
    report.unused = sorted(t.name for t in registry.all() if t.name not in used)
    return report
