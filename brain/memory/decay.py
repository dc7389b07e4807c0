"""The daily decay job: every active node's presence `w_decay = w_abs * exp(-rate * days since reinforced)`,
stored when it moved by more than `decay_write_tolerance` since it was last stored (a row update re-indexes the
node's vector); nodes below the minimum become inactive (recall skips them, a later duplicate write
half-reactivates them). Edges are not touched. The same job enforces the pipeline log's retention."""

from __future__ import annotations

import uuid
from dataclasses import dataclass, field

from sqlalchemy import func, or_, select, update

from brain.memory.models import MemoryNode
from brain.memory.settings import MemorySettings
from brain.pipeline_log import PipelineLog, prune_pipeline_log
from brain.store.unit_of_work import Transactions


@dataclass
class DecayReport:
    processed: int = 0
    deactivated: int = 0
    deactivated_ids: list[int] = field(default_factory=list)
    log_rows_deleted: int = 0


async def decay_user(transactions: Transactions, user_id: uuid.UUID,
                     settings: MemorySettings = MemorySettings()) -> DecayReport:
    """One person's sweep, set-based in one statement; `processed` counts the rows it rewrote."""
    if settings.decay_rate < 0 or settings.min_weight < 0 or settings.decay_write_tolerance < 0:
        raise ValueError("decay rate and minimum weight must not be negative")
    report = DecayReport()
    async with transactions.begin() as uow:
        days = func.greatest(func.extract("epoch", uow.now - MemoryNode.reinforced_at) / 86400.0, 0.0)
        presence = MemoryNode.w_abs * func.exp(-settings.decay_rate * days)
        # Only the rows whose presence moved by more than the tolerance, or fell below the minimum: an update
        # writes a new version of the whole row (its vector is indexed again), and recall reads the presence
        # from w_abs and reinforced_at, not from the stored w_decay.
        due = or_(presence < settings.min_weight,
                  func.abs(MemoryNode.w_decay - presence) > settings.decay_write_tolerance * MemoryNode.w_decay)
        rows = (await uow.session.execute(
            update(MemoryNode).where(MemoryNode.user_id == user_id, MemoryNode.active.is_(True), due)
            .values(w_decay=presence, decayed_at=uow.now, active=presence >= settings.min_weight)
            .returning(MemoryNode.id, MemoryNode.active)
        )).all()
    report.processed = len(rows)
    report.deactivated_ids = sorted(row.id for row in rows if not row.active)
    report.deactivated = len(report.deactivated_ids)
    return report


async def run_decay(transactions: Transactions, settings: MemorySettings = MemorySettings(), *,
                    log: PipelineLog | None = None) -> DecayReport:
    """The daily job over everyone with active nodes, then the pipeline log's retention (365 days)."""
    async with transactions.read() as session:
        users = list((await session.scalars(
            select(MemoryNode.user_id).where(MemoryNode.active.is_(True)).group_by(MemoryNode.user_id))).all())
    total = DecayReport()
    for user_id in users:
        report = await decay_user(transactions, user_id, settings)
        total.processed += report.processed
        total.deactivated += report.deactivated
        total.deactivated_ids.extend(report.deactivated_ids)
        if log is not None and report.processed:
            log.log("calculation", "memory.decay", {"processed": report.processed, "deactivated": report.deactivated,
                                                    "rate": settings.decay_rate, "min": settings.min_weight},
                    user_id=user_id)
    async with transactions.begin() as uow:
        total.log_rows_deleted = await prune_pipeline_log(uow.session, uow.now, settings.log_retention_days)
    if log is not None:
        log.log("db_write", "memory.decay", {"table": "pipeline_log", "operation": "delete",
                                             "rows": total.log_rows_deleted})
    return total
