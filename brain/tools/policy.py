"""The policy gate for tool calls: may this actor run this tool now, must the person approve it first,
or is it refused? `decide` is the pure rule; `check` loads the person's settings and recent calls, decides,
and records the AI call in `tool_calls` (the rate limit and the tool-usage audit read that table).

Called by `brain.tools.executor.ToolExecutor.execute`, the one place every actor's tool call runs. The
person and the system are never gated; an AI goes through, in order: per-tool override, per-module
override, default (read -> auto, append-only self-logging -> auto, other writes -> propose, destructive ->
deny unless the person opted in, and then propose), then the rate limit, then injection markers (a flagged
call never runs on its own)."""

from __future__ import annotations

import logging
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Literal, cast, get_args

from sqlalchemy import Table, bindparam, func, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from brain.companion.models import CompanionSettings, ToolCallRecord
from brain.events.actor import AiActor
from brain.events.catalog import ActorT
from brain.i18n import Text, tr
from brain.people.models import User
from brain.tools.spec import ToolSpec

log = logging.getLogger(__name__)

Decision = Literal["auto", "propose", "deny"]
DECISIONS: tuple[Decision, ...] = get_args(Decision)

RATE_LIMIT = 30  # calls per tool per person ...
RATE_WINDOW = timedelta(seconds=60)  # ... per rolling window
INJECTION_MIN_LENGTH = 16  # shorter strings cannot carry a meaningful instruction
INJECTION = "injection"

# Tools that only append to the person's own logs of what they did (a drink, a meal, where they are): an
# AI may run them on its own, like the read tools. Anything that changes or removes an existing record, or
# sets a goal or preference, is not in here. A unit test keeps this list in step with the registry.
SELF_LOG_TOOLS: frozenset[str] = frozenset({"log_drink", "log_drink_preset", "log_meal", "log_location",
                                            "visit_place"})
# A reminder the person asked the model for: it only reminds them, so the model sets it without a proposal.
OWN_REMINDER_TOOLS: frozenset[str] = frozenset({"create_reminder"})

# mana-tool-registry's markers (mana-brain-facts §12), plus German equivalents.
INJECTION_PATTERNS: tuple[re.Pattern[str], ...] = (
    re.compile(r"ignore (all |the |any )?(previous|prior|above) (instructions|messages)", re.IGNORECASE),
    re.compile(r"you are now .{0,40}(assistant|gpt|claude|gemini)", re.IGNORECASE),
    re.compile(r"<\s*system\b", re.IGNORECASE),
    re.compile(r"\{\{.+\}\}"),
    re.compile(r"```\s*system", re.IGNORECASE),
    re.compile(r"ignorier(e|en|t)?\s+(alle\s+|die\s+)?(vorherigen|bisherigen|obigen|vorigen)\s+"
               r"(anweisungen|nachrichten|instruktionen|befehle)", re.IGNORECASE),
    re.compile(r"vergiss\s+(alle\s+|die\s+|deine\s+)?(vorherigen\s+|bisherigen\s+)?(anweisungen|regeln|instruktionen)",
               re.IGNORECASE),
    re.compile(r"du bist (jetzt|nun|ab sofort) .{0,40}(assistent|gpt|claude|gemini)", re.IGNORECASE),
)


@dataclass(frozen=True)
class AiSettings:
    """What the person decided about their AI: destructive tools, and their own overrides."""

    allow_destructive: bool = False
    tools: Mapping[str, Decision] = field(default_factory=dict)
    modules: Mapping[str, Decision] = field(default_factory=dict)

    @classmethod
    def from_row(cls, row: CompanionSettings | None) -> AiSettings:
        if row is None:
            return cls()
        policy = row.policy or {}
        return cls(allow_destructive=row.allow_destructive, tools=_decisions(policy.get("tools")),
                   modules=_decisions(policy.get("modules")))


def _decisions(raw: object) -> dict[str, Decision]:
    """Overrides from the JSON column; anything that is not a known decision is ignored."""
    if not isinstance(raw, dict):
        return {}
    return {str(k): v for k, v in raw.items() if v in DECISIONS}


@dataclass(frozen=True)
class GateDecision:
    """The gate's answer for one call. `code` and `message` are set when it is refused; `basis` says which
    rule decided (for the audit and tests); `flags` are markers found in the arguments."""

    decision: Decision
    basis: str
    flags: tuple[str, ...] = ()
    code: str | None = None
    message: Text | None = None


def default_decision(tool: ToolSpec) -> Decision:
    """The decision for an AI when the person set no override."""
    if tool.policy == "read" or tool.name in SELF_LOG_TOOLS or tool.name in OWN_REMINDER_TOOLS:
        return "auto"
    if tool.policy == "destructive":
        return "deny"
    return "propose"


def injection_flags(tool: ToolSpec, arguments: object) -> tuple[str, ...]:
    """("injection",) when a free-text string argument of at least 16 characters carries an injection
    marker. Enum parameters are not free text; unknown parameters are refused later anyway."""
    if not isinstance(arguments, Mapping):
        return ()
    for name, value in arguments.items():
        param = tool.param(str(name))
        if param is None or param.type != "string" or param.enum or not isinstance(value, str):
            continue
        if len(value) >= INJECTION_MIN_LENGTH and any(p.search(value) for p in INJECTION_PATTERNS):
            return (INJECTION,)
    return ()


def decide(
    tool: ToolSpec,
    actor: ActorT,
    *,
    arguments: object = None,
    settings: AiSettings | None = None,
    recent_calls: int = 0,
) -> GateDecision:
    """The gate's rule for one call. `recent_calls` is how many calls of this tool the AI made for this
    person in the last `RATE_WINDOW` (before this one)."""
    if not isinstance(actor, AiActor):
        return GateDecision("auto", actor.kind)
    settings = settings or AiSettings()
    flags = injection_flags(tool, arguments)
    if tool.name in settings.tools:
        decision, basis = settings.tools[tool.name], "tool_override"
    elif tool.module in settings.modules:
        decision, basis = settings.modules[tool.module], "module_override"
    else:
        decision, basis = default_decision(tool), f"default_{tool.policy}"
        if tool.name in SELF_LOG_TOOLS:
            basis = "default_self_log"
    if tool.policy == "destructive":
        # No override makes a destructive tool run unseen: without the opt-in it is refused, with it the
        # person still approves each call.
        if not settings.allow_destructive:
            return GateDecision("deny", "destructive", flags, "policy_denied",
                                tr("The assistant may not use {name}: it deletes or ends things for good. "
                                   "You can allow that in /settings.", name=tool.name))
        if decision != "deny" or basis.startswith("default"):  # only the person's own "deny" stays one
            decision, basis = "propose", "destructive_opt_in"
    if decision == "deny":
        return GateDecision("deny", basis, flags, "policy_denied",
                            tr("The assistant may not use {name} on its own.", name=tool.name))
    if recent_calls >= RATE_LIMIT:
        return GateDecision("deny", "rate_limit", flags, "rate_limited",
                            tr("The assistant called {name} too often (at most {limit} times a minute). "
                               "Please try again in a minute.", name=tool.name, limit=RATE_LIMIT))
    if flags and decision == "auto":
        decision, basis = "propose", "injection"
    return GateDecision(decision, basis, flags)


# ---- the gate over the database ----------------------------------------------------------------------
@dataclass(frozen=True)
class CheckedCall:
    decision: GateDecision
    record_id: int | None  # the tool_calls row, None for actors that are not gated


async def load_settings(session: AsyncSession, user_id: uuid.UUID) -> AiSettings:
    return AiSettings.from_row(await session.get(CompanionSettings, user_id))


def _lock_key(user_id: uuid.UUID, tool_name: str) -> str:
    return f"tool_calls:{user_id}:{tool_name}"


_PERSON = (select(User, CompanionSettings).outerjoin(CompanionSettings, CompanionSettings.user_id == User.id)
           .where(User.id == bindparam("user_id")))
# The same, taking the gate's lock for one tool on the way (one round trip instead of two).
_PERSON_LOCKED = _PERSON.add_columns(func.pg_advisory_xact_lock(func.hashtextextended(bindparam("key"), 0)))


async def person_and_settings(session: AsyncSession, user_id: uuid.UUID, *,
                              lock_for: str | None = None) -> tuple[User, AiSettings] | None:
    """The person and their AI settings in one query (the executor needs both before the gate); None for an
    unknown person. `lock_for`: a tool name whose gate lock (see `check`) the same statement takes, so that
    `check(..., locked=True)` needs no statement of its own for it (the person and settings are read from
    the statement's snapshot; only the count in `check` must see what was committed before the lock)."""
    if lock_for is None:
        row = (await session.execute(_PERSON, {"user_id": user_id})).first()
    else:
        row = (await session.execute(_PERSON_LOCKED, {"user_id": user_id,
                                                      "key": _lock_key(user_id, lock_for)})).first()
    if row is None:
        return None
    return row[0], AiSettings.from_row(row[1])


# Calls of one tool for one person in the rolling window: what the rate limit counts. Calls refused by the rate
# limit itself do not count, so a model that keeps trying is let in again once its earlier calls age out.
_RECENT = (select(func.count()).select_from(ToolCallRecord).where(
    ToolCallRecord.user_id == bindparam("recent_user"), ToolCallRecord.tool_name == bindparam("recent_tool"),
    ToolCallRecord.at > bindparam("recent_since"), ToolCallRecord.decision != "rate_limited",
).scalar_subquery())
# The gate's record, inserted as it would be below the limit, returning its id and that count: one statement.
# The count is taken with the statement's snapshot, which does not hold the row the statement inserts, so it
# is the count of the calls before this one, as a statement of its own would have read it.
_TOOL_CALLS = cast(Table, ToolCallRecord.__table__)
_RECORD = _TOOL_CALLS.insert().returning(_TOOL_CALLS.c.id, _RECENT)


async def check(
    session: AsyncSession, user_id: uuid.UUID, tool: ToolSpec, arguments: object, actor: ActorT, now: datetime,
    *, settings: AiSettings | None = None, locked: bool = False,
) -> CheckedCall:
    """Decide one call and, for an AI, record it. Serialised per (person, tool) with a transaction-level
    advisory lock, so concurrent calls cannot all read 29 and slip past the limit together: the count is taken
    by a later statement than the one that took the lock (it is part of the record's insert), so it sees every
    record committed before the lock was granted. The caller commits (the record is bookkeeping: it is kept
    even when the call is refused), and should commit before the call itself runs, so that the lock is not
    held while the tool works. `settings`: the person's, when the caller read them already in this
    transaction. `locked`: the caller took the lock for this tool in this transaction already
    (`person_and_settings(..., lock_for=tool.name)`)."""
    if not isinstance(actor, AiActor):
        return CheckedCall(decide(tool, actor), None)
    if not locked:
        await session.execute(text("SELECT pg_advisory_xact_lock(hashtextextended(:key, 0))"),
                              {"key": _lock_key(user_id, tool.name)})
    if settings is None:
        settings = await load_settings(session, user_id)
    # Recorded as decided below the limit, in the statement that counts the recent calls; in the rare case
    # that the count reaches the limit, the record is corrected before the caller commits.
    verdict = decide(tool, actor, arguments=arguments, settings=settings, recent_calls=0)
    row = (await session.execute(_RECORD, {
        "user_id": user_id, "at": now, "tool_name": tool.name, "known": True, "decision": verdict.decision,
        "ok": verdict.decision != "deny", "error_code": verdict.code, "flags": list(verdict.flags),
        "recent_user": user_id, "recent_tool": tool.name, "recent_since": now - RATE_WINDOW,
    })).one()
    record_id, recent = int(row[0]), int(row[1] or 0)
    if recent >= RATE_LIMIT:
        verdict = decide(tool, actor, arguments=arguments, settings=settings, recent_calls=recent)
        if verdict.code == "rate_limited":
            await session.execute(
                update(ToolCallRecord).where(ToolCallRecord.id == record_id, ToolCallRecord.user_id == user_id)
                .values(decision="rate_limited", ok=False, error_code=verdict.code))
    if verdict.flags:
        log.warning("tool call %s for user %s carries %s markers (decision %s, rationale %r)",
                    tool.name, user_id, ",".join(verdict.flags), verdict.decision, actor.rationale[:200])
    return CheckedCall(verdict, record_id)


async def record_unknown(session: AsyncSession, user_id: uuid.UUID, name: str, now: datetime) -> None:
    """A tool name the model invented: kept for the audit (`known` false); the caller commits."""
    session.add(ToolCallRecord(user_id=user_id, at=now, tool_name=str(name)[:64], known=False, decision="invalid",
                               ok=False, error_code="unknown_tool", flags=[]))


async def record_outcome(session: AsyncSession, record_id: int, *, ok: bool, error_code: str | None) -> None:
    """The call's outcome after it ran (or failed validation); the caller commits."""
    await session.execute(update(ToolCallRecord).where(ToolCallRecord.id == record_id)
                          .values(ok=ok, error_code=error_code))

