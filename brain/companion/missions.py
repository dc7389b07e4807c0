"""Missions: standing objectives the person gives the companion ("every Sunday at 18:00, plan my week"),
each with a cadence. A runner picks the due ones and runs a planner turn for each: the agent loop with
5 rounds, as the AI actor of that mission and iteration, so its writes become proposals through the policy
gate. Every run is recorded as an iteration (plan steps, status, summary); the last 3 iterations and the
person's reasons for rejecting earlier proposals go into the next run's prompt.

One runner never overlaps itself: due missions are claimed with `SELECT ... FOR UPDATE SKIP LOCKED` and
marked `running_since` in a short transaction, so a second runner (a second tick, or a second process)
skips them. Guardrails from mana: at most 25 tool calls per run, at most 100,000 characters per request,
3 minutes per run.

The scheduler calls `run_due_missions` every minute; the bot delivers each run's summary and proposals."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, time, timedelta
from typing import TYPE_CHECKING, Any, Literal
from zoneinfo import ZoneInfo

from babel.dates import get_day_names
from sqlalchemy import and_, delete, exists, false, or_, select, true
from sqlalchemy.ext.asyncio import AsyncSession

from brain.companion.loop import AgentLoop, CallOutcome, LoopLimits, LoopResult
from brain.companion.models import CompanionSettings, Mission, MissionIteration, Proposal
from brain.companion.prompt import SchemaCache, language_of, may_see_sensitive, offered_tools
from brain.companion.subagent import run_subagent
from brain.context import context_document
from brain.events.actor import ai
from brain.i18n import N_, Renderer, Text, ntr, tr
from brain.people.models import User
from brain.pulse.models import PulseState

if TYPE_CHECKING:
    from brain.companion.llm import LLM
    from brain.kernel import Kernel

log = logging.getLogger(__name__)

PLANNER_ROUNDS = 5
MAX_PLAN_STEPS = 25
MAX_INPUT_CHARS = 100_000
RUN_TIMEOUT = timedelta(minutes=3)
STALE_RUN = timedelta(minutes=30)  # a claim this old belongs to a runner that died; it may be taken again
EARLIER_RUNS = 3
MAX_FEEDBACK = 10
MIN_INTERVAL_MINUTES = 15
MAX_INTERVAL_MINUTES = 7 * 24 * 60
MAX_TITLE = 60
DEFAULT_HOUR = 9

CadenceKind = Literal["manual", "interval", "daily", "weekly"]
Action = Literal["pause", "resume", "run_now", "delete"]


# ---- cadence (pure) -----------------------------------------------------------------------------------------
@dataclass(frozen=True)
class Cadence:
    kind: CadenceKind
    minutes: int = 0  # interval
    hour: int = DEFAULT_HOUR  # daily, weekly: local time
    minute: int = 0
    weekday: int = 0  # weekly: 0 Monday .. 6 Sunday

    def __post_init__(self) -> None:
        if self.kind == "interval" and not MIN_INTERVAL_MINUTES <= self.minutes <= MAX_INTERVAL_MINUTES:
            raise ValueError(f"an interval must be {MIN_INTERVAL_MINUTES} minutes to 7 days")
        if not (0 <= self.hour <= 23 and 0 <= self.minute <= 59 and 0 <= self.weekday <= 6):
            raise ValueError("hour, minute or weekday out of range")

    def to_json(self) -> dict[str, Any]:
        if self.kind == "manual":
            return {"kind": "manual"}
        if self.kind == "interval":
            return {"kind": "interval", "minutes": self.minutes}
        data: dict[str, Any] = {"kind": self.kind, "hour": self.hour, "minute": self.minute}
        if self.kind == "weekly":
            data["weekday"] = self.weekday
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Cadence:
        kind = data.get("kind", "manual")
        if kind not in ("manual", "interval", "daily", "weekly"):
            return cls("manual")
        return cls(kind, minutes=int(data.get("minutes", 0)), hour=int(data.get("hour", DEFAULT_HOUR)),
                   minute=int(data.get("minute", 0)), weekday=int(data.get("weekday", 0)))


def next_run(cadence: Cadence, after: datetime, zone: ZoneInfo) -> datetime | None:
    """The first run strictly after `after`, at the cadence's local time in `zone`; None for manual."""
    if cadence.kind == "manual":
        return None
    if cadence.kind == "interval":
        return after + timedelta(minutes=cadence.minutes)
    local = after.astimezone(zone)
    day = local.date()
    if cadence.kind == "weekly":
        day += timedelta(days=(cadence.weekday - day.weekday()) % 7)
    step = timedelta(days=7 if cadence.kind == "weekly" else 1)
    while True:
        # Combined per day, so a run stays at 18:00 local across a DST change.
        candidate = datetime.combine(day, time(cadence.hour, cadence.minute), tzinfo=zone)
        if candidate > after:
            return candidate
        day += step


def describe_cadence(cadence: Cadence, render: Renderer) -> str:
    at = time(cadence.hour, cadence.minute)
    clock = render.format_value(at)
    if cadence.kind == "manual":
        return render(tr("only when you start it"))
    if cadence.kind == "interval":
        if cadence.minutes % 60 == 0:
            return render(ntr("every hour", "every {count} hours", cadence.minutes // 60))
        return render(ntr("every minute", "every {count} minutes", cadence.minutes))
    if cadence.kind == "daily":
        return render(tr("daily at {time}", time=clock))
    weekday = str(get_day_names("wide", locale=render.locale)[cadence.weekday])
    return render(tr("every {weekday} at {time}", weekday=weekday, time=clock))


def mission_title(objective: str) -> str:
    text = " ".join(objective.split())
    return text if len(text) <= MAX_TITLE else text[:MAX_TITLE - 1] + "…"


# ---- the person's missions ----------------------------------------------------------------------------------
async def create_mission(brain: Kernel, user: User, objective: str, cadence: Cadence) -> Mission:
    async with brain.transactions.begin() as uow:
        mission = Mission(id=uuid.uuid4(), user_id=user.id, title=mission_title(objective), objective=objective.strip(),
                          cadence=cadence.to_json(), state="active",
                          next_run_at=next_run(cadence, uow.now, ZoneInfo(user.timezone)),
                          created_at=uow.now, updated_at=uow.now)
        uow.session.add(mission)
    return mission


async def list_missions(session: AsyncSession, user_id: uuid.UUID) -> list[Mission]:
    """The person's active and paused missions, oldest first."""
    return list((await session.scalars(
        select(Mission).where(Mission.user_id == user_id, Mission.state.in_(("active", "paused")))
        .order_by(Mission.created_at, Mission.id))).all())


async def change_mission(brain: Kernel, user: User, mission_id: uuid.UUID, action: Action) -> Mission | None:
    """Pause, resume, run now (due at once) or delete one of the person's missions; None if they have no such
    mission. Deleting removes it with its iterations; its proposals stay (they are the person's record)."""
    async with brain.transactions.begin() as uow:
        mission = await uow.session.scalar(select(Mission).where(Mission.id == mission_id,
                                                                 Mission.user_id == user.id).with_for_update())
        if mission is None or mission.state not in ("active", "paused"):
            return None
        if action == "delete":
            await uow.session.execute(delete(Mission).where(Mission.id == mission.id))
            return mission
        if action == "pause":
            mission.state = "paused"
        elif action == "resume":
            mission.state = "active"
            mission.next_run_at = next_run(Cadence.from_json(mission.cadence), uow.now, ZoneInfo(user.timezone))
        else:
            mission.state = "active"
            mission.next_run_at = uow.now
        mission.updated_at = uow.now
    return mission


# ---- the runner ---------------------------------------------------------------------------------------------
@dataclass
class MissionRun:
    """One finished run, for the bot to deliver."""

    mission_id: uuid.UUID
    iteration_id: uuid.UUID
    user_id: uuid.UUID
    title: str
    status: str  # an ITERATION_STATUSES value
    summary: str
    proposals: list[CallOutcome] = field(default_factory=list)  # staged calls; .result.message says what
    error: str | None = None


Deliver = Callable[[MissionRun], Awaitable[None]]


async def run_due_missions(brain: Kernel, llm: LLM, now: datetime, *, deliver: Deliver | None = None,
                           limit: int = 10, idle_hold: timedelta = timedelta(0),
                           grace: timedelta | None = None) -> list[MissionRun]:
    """Claim the missions due at `now` and run them one after another; `deliver` (the bot's) gets each finished
    run. A mission of a person who wrote within `idle_hold` waits (its result would interrupt them), at most until
    `grace` after it was due."""
    claims = await claim_due(brain, now, limit, idle_hold=idle_hold, grace=grace)
    runs: list[MissionRun] = []
    for mission_id, iteration_id in claims:
        try:
            run = await run_mission(brain, llm, mission_id, iteration_id, now)
        except Exception:
            log.exception("mission %s failed", mission_id)
            await _release(brain, mission_id, iteration_id, now, "failed", error="internal error")
            continue
        if run is None:
            continue
        runs.append(run)
        if deliver is not None:
            try:
                await deliver(run)
            except Exception:
                log.exception("delivering mission run %s failed", run.iteration_id)
    return runs


async def claim_due(brain: Kernel, now: datetime, limit: int = 10, *, idle_hold: timedelta = timedelta(0),
                    grace: timedelta | None = None) -> list[tuple[uuid.UUID, uuid.UUID]]:
    """Marks up to `limit` due missions as running and opens an iteration for each; another runner skips
    them (locked rows are skipped, claimed ones are filtered out by `running_since`). One whose person wrote within
    `idle_hold` is left for a later run, unless it has waited `grace` already."""
    talking = exists().where(PulseState.user_id == Mission.user_id,
                             PulseState.last_inbound_at > now - idle_hold)
    waited = Mission.next_run_at <= now - grace if grace is not None else false()
    async with brain.transactions.begin() as uow:
        due = (await uow.session.scalars(
            select(Mission)
            .where(Mission.state == "active", Mission.next_run_at.is_not(None), Mission.next_run_at <= now,
                   or_(Mission.running_since.is_(None), Mission.running_since < now - STALE_RUN),
                   or_(~talking, waited) if idle_hold > timedelta(0) else true())
            .order_by(Mission.next_run_at).limit(limit).with_for_update(skip_locked=True)
        )).all()
        claims = []
        for mission in due:
            mission.running_since = now
            iteration = MissionIteration(id=uuid.uuid4(), mission_id=mission.id, user_id=mission.user_id,
                                         started_at=now, status="running", plan=[])
            uow.session.add(iteration)
            claims.append((mission.id, iteration.id))
    return claims


async def run_mission(brain: Kernel, llm: LLM, mission_id: uuid.UUID, iteration_id: uuid.UUID,
                      now: datetime) -> MissionRun | None:
    """The planner turn of one claimed mission, recorded in its iteration; None if the mission is gone."""
    async with brain.transactions.begin() as uow:
        mission = await uow.session.get(Mission, mission_id)
        user = await uow.session.get(User, mission.user_id) if mission is not None else None
        if mission is None or user is None:
            return None
        settings = await uow.session.get(CompanionSettings, user.id)
        earlier = await _earlier_runs(uow.session, mission, iteration_id)
        feedback = await _attach_feedback(uow.session, mission, earlier)
    consent = bool(settings and settings.remote_consent)
    allow = may_see_sensitive(llm, "primary", consent)
    document = await context_document(brain, user, sensitive=allow)
    tools = offered_tools(brain.registry, allow_sensitive=allow)
    loop = AgentLoop(
        brain, llm, user, ai(rationale=f"mission: {mission.title}"[:200], mission_id=str(mission.id),
                             iteration_id=str(iteration_id)),
        tools=SchemaCache(brain.registry).schemas(tools), offered=frozenset(t.name for t in tools), tier="primary",
        allow_sensitive=allow, consent=consent, sensitive=allow,
        limits=LoopLimits(max_rounds=PLANNER_ROUNDS, max_steps=MAX_PLAN_STEPS, max_input_chars=MAX_INPUT_CHARS),
        context_at=brain.clock.now(), helper=run_subagent)
    system = planner_prompt(user, mission, document, earlier, feedback)
    try:
        result = await asyncio.wait_for(loop.run([{"role": "system", "content": system}],
                                                 f"Run the mission now: {mission.objective}"),
                                        RUN_TIMEOUT.total_seconds())
    except TimeoutError:
        result = LoopResult(text="", transcript=[], calls=[], stop_reason="timeout", error="the run took too long")
    status, summary = _verdict(user, result)
    plan = [_step(c) for c in result.calls]
    await _release(brain, mission_id, iteration_id, now, status, plan=plan, summary=summary, error=result.error)
    return MissionRun(mission_id=mission_id, iteration_id=iteration_id, user_id=user.id, title=mission.title,
                      status=status, summary=summary, proposals=result.proposals, error=result.error)


def planner_prompt(user: User, mission: Mission, document: str, earlier: Sequence[MissionIteration],
                   feedback: Sequence[str]) -> str:
    render = Renderer(user.locale, user.timezone)
    parts = [
        f"You run a standing mission for the person: \"{mission.objective}\". This run was started by its "
        "schedule, not by a message; the person reads your summary later.\n"
        "- Find out with the tools what is needed, then act. Changes you make become proposals the person "
        "approves or rejects; that is expected.\n"
        "- Keep it to a few well-chosen steps. Do not propose again what the person rejected.\n"
        f"- Finish with a short summary for the person in {language_of(user)}: what you found and what you "
        "proposed.",
        document,
    ]
    if earlier:
        lines = []
        for run in earlier:
            steps = ", ".join(f"{s.get('tool')} → {s.get('status')}" for s in run.plan[:10]) or "no steps"
            line = (f"- {render.format_value(run.started_at)}: {run.status}; {(run.summary or '').strip()[:500]} "
                    f"(steps: {steps})")
            if run.user_feedback:
                line += f" Feedback of the person: {run.user_feedback[:500]}"
            lines.append(line)
        parts.append("## Earlier runs of this mission (newest first)\n" + "\n".join(lines))
    if feedback:
        parts.append("## The person rejected these proposals of this mission\n" + "\n".join(feedback))
    return "\n\n".join(parts)


async def _earlier_runs(session: AsyncSession, mission: Mission, current: uuid.UUID) -> list[MissionIteration]:
    return list((await session.scalars(
        select(MissionIteration).where(MissionIteration.mission_id == mission.id, MissionIteration.id != current)
        .order_by(MissionIteration.started_at.desc()).limit(EARLIER_RUNS))).all())


async def _attach_feedback(session: AsyncSession, mission: Mission,
                           earlier: Sequence[MissionIteration]) -> list[str]:
    """The person's rejections of this mission's proposals: attached to the iterations that proposed them
    (as their `user_feedback`), and returned as lines for the prompt."""
    from brain.tools.staging import args_summary

    rejected = (await session.scalars(
        select(Proposal).where(and_(Proposal.user_id == mission.user_id, Proposal.mission_id == mission.id,
                                    Proposal.status == "rejected"))
        .order_by(Proposal.decided_at.desc()).limit(MAX_FEEDBACK))).all()
    by_iteration: dict[str, list[str]] = {}
    lines = []
    for proposal in rejected:
        reason = proposal.reason or "no reason given"
        text = f"{proposal.tool_name} ({args_summary(proposal.arguments)}): {reason}"
        lines.append(f"- {text}")
        by_iteration.setdefault(str((proposal.actor or {}).get("iteration_id")), []).append(text)
    for run in earlier:
        found = by_iteration.get(str(run.id))
        if found:
            run.user_feedback = "; ".join(found)
    return lines


_STOP_REASONS: dict[str, str] = {
    "model-down": N_("the language model could not be reached; it tries again at its next time"),
    "privacy": N_("it needs content that may only go to a model on your own hardware"),
    "too-large": N_("the task is too large for the model"),
    "timeout": N_("the model took too long"),
}


def _verdict(user: User, result: LoopResult) -> tuple[str, str]:
    """(iteration status, summary for the person)."""
    render = Renderer(user.locale, user.timezone)
    if result.stop_reason in ("model-down", "privacy", "too-large", "timeout") or not result.answered:
        # Said in the person's words: the client's own error ("Failed to connect to Ollama. Please check ...") is
        # English and for whoever runs the server; it stays in the log.
        known = _STOP_REASONS.get(result.stop_reason)
        reason = tr(known) if known else (result.error or result.stop_reason)
        return "failed", render(tr("The mission could not run: {reason}.", reason=reason))
    failed = sum(1 for c in result.calls if not c.ok)
    summary = result.text.strip()
    if not summary:
        summary = render(tr("No tool calls: there was nothing to do.")) if not result.calls else render(ntr(
            "{count} tool call ({failed} failed).", "{count} tool calls ({failed} failed).", len(result.calls),
            failed=failed))
    if result.proposals:
        return "awaiting-review", summary
    if result.calls and failed == len(result.calls):
        return "failed", summary
    return "approved", summary


def _step(call: CallOutcome) -> dict[str, Any]:
    status = "staged" if call.proposal_id else ("approved" if call.ok else "failed")
    return {"tool": call.name, "arguments": call.arguments if isinstance(call.arguments, dict) else {},
            "status": status, "proposal_id": call.proposal_id, "summary": call.message[:300],
            "error": call.error_code}


async def _release(brain: Kernel, mission_id: uuid.UUID, iteration_id: uuid.UUID, now: datetime, status: str, *,
                   plan: list[dict[str, Any]] | None = None, summary: str | None = None,
                   error: str | None = None) -> None:
    """Finish the iteration, free the mission and schedule its next run."""
    async with brain.transactions.begin() as uow:
        iteration = await uow.session.get(MissionIteration, iteration_id)
        if iteration is not None:
            iteration.status = status
            iteration.finished_at = uow.now
            iteration.plan = plan or []
            iteration.summary = summary
            iteration.error = error
        mission = await uow.session.get(Mission, mission_id, with_for_update=True)
        if mission is None:
            return
        user = await uow.session.get(User, mission.user_id)
        zone = ZoneInfo(user.timezone) if user is not None else ZoneInfo("UTC")
        mission.running_since = None
        if mission.state == "active":
            mission.next_run_at = next_run(Cadence.from_json(mission.cadence), max(now, uow.now), zone)
        mission.updated_at = uow.now


def cadence_text(mission: Mission, render: Renderer) -> str:
    return describe_cadence(Cadence.from_json(mission.cadence), render)


def run_message(run: MissionRun) -> Text:
    """What the person reads after a run (the bot adds one message with buttons per proposal)."""
    if run.status == "failed":
        return tr("Mission “{title}” did not work out: {summary}", title=run.title, summary=run.summary)
    return tr("Mission “{title}”: {summary}", title=run.title, summary=run.summary)
