"""Facts the model proposes once a week (with a model server): the fast tier reads a person's week (what they logged,
and what they said, as far as privacy lets it) and answers with facts of kinds the rules cannot find (preferences,
people in their life, their situation), each with a confidence. A proposed fact below 0.5 is kept but stays out of
the context document (`brain.memory.facts.facts_for_context`); one proposed again is confirmed; one the person
deleted is not proposed again for 90 days."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import time as monotonic_clock
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any
from zoneinfo import ZoneInfo

from sqlalchemy import and_, exists, select
from sqlalchemy.ext.asyncio import AsyncSession

from brain.companion import privacy
from brain.companion.models import CompanionSettings
from brain.events.store import EventRecord, query_events
from brain.learning.models import WEEKLY_MODEL, LearningRun
from brain.learning.nightly import FIRST_WEEK, forgotten_keys, mark_run
from brain.memory.models import MemoryFact, MemoryNode
from brain.people.models import User

if TYPE_CHECKING:
    from brain.companion.llm import LLM
    from brain.core import Brain

log = logging.getLogger(__name__)

KINDS = ("preference", "relationship", "context")
WEEK = timedelta(days=7)
MAX_FACTS = 5
MAX_STATEMENT = 200
MAX_EVENTS = 400
MAX_MEMORIES = 40
MAX_CONFIDENCE = 0.9  # a model's word alone never makes a fact certain
DEFAULT_BUDGET = timedelta(minutes=2)
LANGUAGES = {"en": "English", "de": "German"}

PROMPT = """You read one week of a person's life log and what they told their companion. Find facts about the \
person that will still be true next week: preferences (what they like or avoid), relationships (people who matter \
to them and how), context (their work, home, routines, plans). Only facts the week clearly supports; no guesses, \
no advice, nothing about health you were not told.

Answer with JSON only: {{"facts": [{{"kind": "preference" | "relationship" | "context", "statement": "one short \
sentence in {language}, about the person in the third person", "confidence": 0.0-1.0}}]}}, at most 5 facts. \
Confidence: 0.9 when they said it in so many words, 0.6 when the week shows it clearly, 0.3 when it only hints at it."""


@dataclass(frozen=True)
class ProposedFact:
    kind: str
    statement: str
    confidence: float

    @property
    def key(self) -> str:
        normal = " ".join(re.findall(r"\w+", self.statement.casefold()))
        return "model:" + hashlib.sha1(normal.encode()).hexdigest()[:16]


def parse_proposals(reply: str) -> list[ProposedFact]:
    """The facts of the model's answer; anything that is not the asked shape is left out (never an error)."""
    start, end = reply.find("{"), reply.rfind("}")
    if start < 0 or end <= start:
        return []
    try:
        data = json.loads(reply[start:end + 1])
    except ValueError:
        return []
    items = data.get("facts") if isinstance(data, dict) else None
    found: list[ProposedFact] = []
    for item in items if isinstance(items, list) else []:
        if not isinstance(item, dict):
            continue
        kind, statement, confidence = item.get("kind"), item.get("statement"), item.get("confidence")
        if kind not in KINDS or not isinstance(statement, str) or not isinstance(confidence, int | float):
            continue
        text = " ".join(statement.split())[:MAX_STATEMENT]
        if text and "\x00" not in text:
            found.append(ProposedFact(kind, text, max(0.0, min(float(confidence), MAX_CONFIDENCE))))
    return found[:MAX_FACTS]


async def propose_facts(brain: Brain, llm: LLM, now: datetime, *, budget: timedelta = DEFAULT_BUDGET,
                        monotonic: Callable[[], float] = monotonic_clock.monotonic) -> dict[uuid.UUID, int]:
    """Asks the model about everyone whose weekly run is due (a week since the last, and a week of data); returns
    how many facts were written per person. A person whose model call fails is tried again at the next run."""
    from brain.companion.llm import ModelUnavailable, PrivacyBlocked

    async with brain.transactions.read() as session:
        people = await _due(session, now)
    written: dict[uuid.UUID, int] = {}
    started = monotonic()
    for user_id in people:
        if monotonic() - started > budget.total_seconds():
            break
        try:
            written[user_id] = await _propose_for(brain, llm, user_id, now)
        except (ModelUnavailable, PrivacyBlocked) as problem:
            log.info("weekly facts for %s: %s", user_id, problem)
            break  # the model is away: everyone else waits for the next run too
    return written


async def _due(session: AsyncSession, now: datetime) -> list[uuid.UUID]:
    last = select(LearningRun.last_run_at).where(LearningRun.user_id == User.id, LearningRun.kind == WEEKLY_MODEL) \
        .scalar_subquery()
    week_old = exists().where(and_(EventRecord.user_id == User.id, EventRecord.occurred_at < now - FIRST_WEEK))
    rows = (await session.execute(select(User.id, last).where(week_old))).all()
    return [user_id for user_id, ran in rows if ran is None or now - ran >= WEEK]


async def _propose_for(brain: Brain, llm: LLM, user_id: uuid.UUID, now: datetime) -> int:
    async with brain.transactions.read() as session:
        user = await session.get(User, user_id)
        consent = bool(await session.scalar(select(CompanionSettings.remote_consent)
                                            .where(CompanionSettings.user_id == user_id)))
        if user is None:
            return 0
        sensitive_ok = llm.is_local("fast") or privacy.allowed_remote([privacy.SENSITIVE], consent)
        week, sensitive = await week_text(session, user, now, sensitive_ok=sensitive_ok)
        forgotten = await forgotten_keys(session, user_id, now)
    language = LANGUAGES.get(user.locale[:2], "English")
    reply = await llm.chat("fast", [{"role": "system", "content": PROMPT.format(language=language)},
                                    {"role": "user", "content": week}], sensitive=sensitive, consent=consent,
                           options={"temperature": 0})
    proposed = [p for p in parse_proposals(reply.content) if p.key not in forgotten]
    async with brain.transactions.begin() as uow:
        for fact in proposed:
            await _keep(uow.session, user_id, fact, uow.now)
        await mark_run(uow.session, user_id, WEEKLY_MODEL, uow.now)
    return len(proposed)


async def _keep(session: AsyncSession, user_id: uuid.UUID, fact: ProposedFact, now: datetime) -> None:
    known = await session.scalar(select(MemoryFact).where(MemoryFact.user_id == user_id, MemoryFact.key == fact.key)
                                 .with_for_update())
    if known is None:
        session.add(MemoryFact(id=uuid.uuid4(), user_id=user_id, kind=fact.kind, key=fact.key,
                               statement=fact.statement, confidence=fact.confidence, confirmations=0, contradictions=0,
                               last_confirmed=now, created_at=now, source="model", checked_at=now, said=None))
        return
    known.confidence = max(known.confidence, fact.confidence)
    known.confirmations += 1
    known.last_confirmed = now


async def week_text(session: AsyncSession, user: User, now: datetime, *, sensitive_ok: bool) -> tuple[str, bool]:
    """The person's week as the model reads it: what they logged per day (meals and places only when the model may
    see sensitive content), and what they told the companion; and whether anything sensitive is in it."""
    zone = ZoneInfo(user.timezone)
    events = await query_events(session, user.id, since=now - WEEK, until=now, limit=MAX_EVENTS)
    days: dict[str, Counter[str]] = {}
    sensitive = False
    for event in sorted(events, key=lambda e: e.meta.timestamp):
        if privacy.is_sensitive(privacy.module_class(event.meta.module)) and not sensitive_ok:
            continue
        what = _event_words(event.type, event.payload.model_dump(mode="json"))
        if what is None:
            continue
        sensitive = sensitive or privacy.is_sensitive(privacy.module_class(event.meta.module))
        day = event.meta.timestamp.astimezone(zone).strftime("%a %Y-%m-%d")
        days.setdefault(day, Counter())[what] += 1
    lines = ["What they logged:"] + [f"- {day}: " + ", ".join(f"{what} x{n}" if n > 1 else what
                                                               for what, n in counts.items())
                                     for day, counts in days.items()]
    if sensitive_ok:
        said = (await session.scalars(select(MemoryNode.text).where(
            MemoryNode.user_id == user.id, MemoryNode.speaker == "user", MemoryNode.captured_at >= now - WEEK)
            .order_by(MemoryNode.captured_at).limit(MAX_MEMORIES))).all()
        if said:
            sensitive = True
            lines += ["What they told you:", *(f"- {text[:300]}" for text in said)]
    return "\n".join(lines), sensitive


def _event_words(kind: str, payload: dict[str, Any]) -> str | None:
    """One logged thing in a few English words (titles and names as the person wrote them)."""
    words: dict[str, Callable[[dict[str, Any]], str]] = {
        "DrinkLogged": lambda p: f"drank {p.get('drink_type')}",
        "MealLogged": lambda p: f"ate {p.get('meal_type')}: {p.get('description', '')}"[:80],
        "TaskCompleted": lambda p: f"finished task '{p.get('title')}'",
        "TaskCreated": lambda p: f"planned task '{p.get('title')}'",
        "CalendarEventCreated": lambda p: f"appointment '{p.get('title')}'",
        "PlaceVisited": lambda p: f"visited {p.get('name')}",
        "GoalCreated": lambda p: f"set goal '{p.get('title')}'",
        "ReminderCreated": lambda p: f"asked to be reminded: {p.get('text')}",
    }
    make = words.get(kind)
    return make(payload) if make is not None else None
