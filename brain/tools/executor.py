"""The tool executor: the one place where any actor's tool call runs. Order: look the tool up; for an AI,
pass the policy gate (`brain.tools.policy`: auto, propose or deny, recorded in `tool_calls`); validate
and coerce the arguments; then run the handler in one unit of work, or store the call as a proposal for the
person to approve. Every refusal is a structured, translated `ToolResult` and leaves the database unchanged
(except the AI's `tool_calls` record, which is bookkeeping).

An AI's call uses one connection for its transactions: the gate's (committed before the call runs, so the
record counts for concurrent calls and the gate's advisory lock is not held while the tool works), the
call's, and, when the call failed, its outcome on the record."""

from __future__ import annotations

import logging
import uuid
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy.ext.asyncio import AsyncSession

from brain.errors import DomainError
from brain.events.actor import AiActor
from brain.events.catalog import ActorT, DomainEvent
from brain.i18n import tr
from brain.people.models import User
from brain.store.unit_of_work import Transactions, UnitOfWork
from brain.tools import policy, staging
from brain.tools.coercion import UNSTORABLE, coerce_arguments
from brain.tools.registry import ToolRegistry
from brain.tools.spec import ToolContext, ToolResult, ToolSpec

log = logging.getLogger(__name__)


def _unknown_user() -> DomainError:
    return DomainError(tr("I don't know you yet. Send /start first."), code="unknown_user")


def _internal_error() -> ToolResult:
    return ToolResult.failure(tr("Something went wrong while doing that. Nothing was changed."), "internal_error")


class ToolExecutor:
    def __init__(self, transactions: Transactions, registry: ToolRegistry) -> None:
        self.transactions = transactions
        self.registry = registry

    async def execute(
        self,
        user_id: uuid.UUID,
        name: str,
        arguments: Mapping[str, Any] | object,
        actor: ActorT,
        *,
        caused_by: uuid.UUID | None = None,
        user: User | None = None,
    ) -> ToolResult:
        """Run one tool call; `caused_by` links its events to the event that prompted it (e.g. an undo).
        For an AI the result may be a proposal: ok, with data `proposal_id` and `status` "proposed".
        `user`: the person as the caller read them for this message (a user's own call; it spares reading them
        again), with any change to their settings since applied to it."""
        tool = self.registry.get(name) if isinstance(name, str) else None
        if tool is None and not isinstance(actor, AiActor):
            return ToolResult.failure(tr("Unknown tool: {name}.", name=str(name)[:64]), "unknown_tool")
        events: list[DomainEvent] = []
        # A person's own read (/tasks, /today's tools) runs as a glance: on the connection the message's glances
        # share, outside a transaction (no checkout, no BEGIN and COMMIT; at READ COMMITTED each statement sees
        # its own snapshot either way). Anything else gets a transaction (`_session`).
        reading = tool is not None and tool.policy == "read" and not isinstance(actor, AiActor)
        async with self.transactions.glance() if reading else self._session() as session:
            if not isinstance(actor, AiActor):
                assert tool is not None
                result = await self._run(session, user_id, tool, arguments, actor, caused_by, events,
                                         known=user if user is not None and user.id == user_id else None)
            else:
                result = await self._gated(session, user_id, name, tool, arguments, actor, caused_by, events)
        # After commit and with the connection back in the pool: subscribers open transactions of their own.
        if events:
            await self.transactions.bus.publish(events)
        return result

    async def _gated(
        self, session: AsyncSession, user_id: uuid.UUID, name: object, tool: ToolSpec | None, arguments: object,
        actor: AiActor, caused_by: uuid.UUID | None, events: list[DomainEvent],
    ) -> ToolResult:
        try:
            async with self._unit(session) as uow:
                # The person, their settings and (for a known tool) the gate's lock in one statement.
                found = await policy.person_and_settings(session, user_id,
                                                         lock_for=tool.name if tool is not None else None)
                if found is None:
                    raise _unknown_user()
                if tool is None:
                    # An invented name is recorded for the audit, minus what PostgreSQL cannot store.
                    await policy.record_unknown(session, user_id, UNSTORABLE.sub("\ufffd", str(name)), uow.now)
                    return ToolResult.failure(tr("Unknown tool: {name}.", name=str(name)[:64]), "unknown_tool")
                checked = await policy.check(session, user_id, tool, arguments, actor, uow.now, settings=found[1],
                                             locked=True)
        except DomainError as refused:
            return ToolResult.failure(refused.text, refused.code)
        except Exception:
            log.exception("policy check of %s failed for user %s", name, user_id)
            return _internal_error()
        gate = checked.decision
        if gate.decision == "deny":
            assert gate.message is not None and gate.code is not None
            return ToolResult.failure(gate.message, gate.code)
        if gate.decision == "auto":
            result = await self._run(session, user_id, tool, arguments, actor, caused_by, events)
        else:
            result = await self._propose(session, user_id, tool, arguments, actor, gate.flags)
        if not result.ok and checked.record_id is not None:
            async with self._unit(session):
                await policy.record_outcome(session, checked.record_id, ok=False, error_code=result.error_code)
        return result

    async def execute_approved(
        self,
        uow: UnitOfWork,
        user: User,
        name: str,
        arguments: Mapping[str, Any],
        actor: AiActor,
        *,
        args_hash: str,
    ) -> ToolResult:
        """Run a call the person approved, inside their approval's unit of work and without the gate: the
        same validation and handler as `execute`, after checking that the coerced arguments still hash to
        `args_hash`. A failing call rolls back to a savepoint (its writes and events are dropped), the
        caller's own writes stay. Only `brain.tools.proposals.approve` should call this."""
        tool = self.registry.get(name)
        if tool is None:
            return ToolResult.failure(tr("Unknown tool: {name}.", name=name[:64]), "unknown_tool")
        try:
            args = self._coerce(uow, user, tool, arguments)
        except DomainError as refused:
            return ToolResult.failure(refused.text, refused.code)
        if staging.args_hash(tool.name, args) != args_hash:
            log.error("proposal call %s for user %s no longer matches its hash; not run", name, user.id)
            return ToolResult.failure(tr("That proposal was changed after it was made, so I won't run it."),
                                      "hash_mismatch")
        savepoint, emitted = await uow.savepoint()
        try:
            result = await tool.handler(ToolContext(uow=uow, user=user, actor=actor), args)
        except DomainError as refused:
            result = ToolResult.failure(refused.text, refused.code)
        except Exception:
            log.exception("approved tool %s failed for user %s", name, user.id)
            result = _internal_error()
        if result.ok:
            await savepoint.commit()
        else:
            await savepoint.rollback()
            uow.drop_events_since(emitted)
        return result

    def _coerce(self, uow: UnitOfWork, user: User, tool: ToolSpec, arguments: object) -> dict[str, Any]:
        today = uow.now.astimezone(ZoneInfo(user.timezone)).date()
        return coerce_arguments(tool, arguments, timezone=user.timezone, today=today)

    async def _run(
        self, session: AsyncSession, user_id: uuid.UUID, tool: ToolSpec, arguments: object, actor: ActorT,
        caused_by: uuid.UUID | None, events: list[DomainEvent], *, known: User | None = None,
    ) -> ToolResult:
        """The handler in a unit of work of its own; its events are added to `events` once it committed."""
        try:
            async with self._unit(session, caused_by) as uow:
                # `known` (handlers only read the person), else after the gate from the session, no query.
                user = known if known is not None else await session.get(User, user_id)
                if user is None:
                    raise _unknown_user()
                args = self._coerce(uow, user, tool, arguments)
                result = await tool.handler(ToolContext(uow=uow, user=user, actor=actor), args)
                if not result.ok:
                    # A handler that reports failure must not leave half a write behind.
                    raise _Rollback(result)
            events.extend(uow.events)
            return result
        except _Rollback as rollback:
            return rollback.result
        except DomainError as refused:
            return ToolResult.failure(refused.text, refused.code)
        except Exception:
            log.exception("tool %s failed for user %s", tool.name, user_id)
            return _internal_error()

    async def _propose(
        self, session: AsyncSession, user_id: uuid.UUID, tool: ToolSpec, arguments: object, actor: AiActor,
        flags: tuple[str, ...],
    ) -> ToolResult:
        """Validate first, then stage: a call with bad arguments is refused and never stored."""
        try:
            async with self._unit(session) as uow:
                user = await session.get(User, user_id)
                if user is None:
                    raise _unknown_user()
                args = self._coerce(uow, user, tool, arguments)
                proposal = await staging.create_proposal(uow, user_id, tool.name, args, actor, flags=flags)
                message = staging.proposed_message(proposal)
                proposal_id = proposal.id
        except DomainError as refused:
            return ToolResult.failure(refused.text, refused.code)
        except Exception:
            log.exception("staging %s failed for user %s", tool.name, user_id)
            return _internal_error()
        return ToolResult.success(message, proposal_id=str(proposal_id), short_id=staging.short_id(proposal_id),
                                  status="proposed", flags=list(flags))

    # -- one connection per call ------------------------------------------------------------------------

    @asynccontextmanager
    async def _session(self) -> AsyncIterator[AsyncSession]:
        """A session bound to one connection for all transactions of a call: one checkout from the pool,
        and the person loaded by the gate stays in the session for the call (objects do not expire on
        commit)."""
        db = self.transactions.db
        await db.release()  # not two connections at once (`Database.sharing`)
        async with db.engine.connect() as connection, db.sessions(bind=connection) as session:
            yield session

    @asynccontextmanager
    async def _unit(self, session: AsyncSession, caused_by: uuid.UUID | None = None) -> AsyncIterator[UnitOfWork]:
        """One transaction on the call's session, as a unit of work. Like `Transactions.begin`, except that
        the caller publishes the events (after the connection is released)."""
        async with session.begin():
            uow = UnitOfWork(session, self.transactions.clock, caused_by)
            yield uow
            await uow.write_events()


class _Rollback(Exception):
    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.error_code)
        self.result = result
