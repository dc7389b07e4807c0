"""The tool executor: the one place where any actor's tool call runs. Order: look the tool up,
validate and coerce its arguments (no database work yet), apply the policy for AI actors, then run
the handler in one unit of work. Every refusal is a structured, translated `ToolResult` and leaves
the database unchanged."""

from __future__ import annotations

import logging
import uuid
from collections.abc import Mapping
from typing import Any, Literal
from zoneinfo import ZoneInfo

from brain.errors import DomainError
from brain.events.actor import AiActor
from brain.events.catalog import ActorT
from brain.i18n import tr
from brain.people.models import User
from brain.store.unit_of_work import Transactions
from brain.tools.coercion import coerce_arguments
from brain.tools.registry import ToolRegistry
from brain.tools.spec import ToolContext, ToolResult, ToolSpec

log = logging.getLogger(__name__)

PolicyDecision = Literal["auto", "propose", "deny"]


def default_ai_policy(tool: ToolSpec) -> PolicyDecision:
    """Until proposals exist (issue 5), an AI may read and append to its person's own logs; any
    other write is refused rather than run unseen."""
    if tool.policy == "read" or tool.name in {"log_drink", "log_meal"}:
        return "auto"
    return "deny"


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
    ) -> ToolResult:
        """Run one tool call; `caused_by` links its events to the event that prompted it (e.g. an undo)."""
        tool = self.registry.get(name) if isinstance(name, str) else None
        if tool is None:
            return ToolResult.failure(tr("Unknown tool: {name}.", name=str(name)[:64]), "unknown_tool")
        if isinstance(actor, AiActor) and default_ai_policy(tool) == "deny":
            return ToolResult.failure(
                tr("The assistant may not use {name} on its own.", name=tool.name), "policy_denied"
            )
        try:
            async with self.transactions.begin(caused_by=caused_by) as uow:
                user = await uow.session.get(User, user_id)
                if user is None:
                    raise DomainError(tr("I don't know you yet. Send /start first."), code="unknown_user")
                today = uow.now.astimezone(ZoneInfo(user.timezone)).date()
                args = coerce_arguments(tool, arguments, timezone=user.timezone, today=today)
                result = await tool.handler(ToolContext(uow=uow, user=user, actor=actor), args)
                if not result.ok:
                    # A handler that reports failure must not leave half a write behind.
                    raise _Rollback(result)
            return result
        except _Rollback as rollback:
            return rollback.result
        except DomainError as refused:
            return ToolResult.failure(refused.text, refused.code)
        except Exception:
            log.exception("tool %s failed for user %s", name, user_id)
            return ToolResult.failure(tr("Something went wrong while doing that. Nothing was changed."),
                                      "internal_error")


class _Rollback(Exception):
    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.error_code)
        self.result = result
