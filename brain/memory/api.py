"""The memory as the companion, the bot and the benchmarks use it: remember a message, promote the queue,
recall with reasons, reinforce what an answer used, forget. Everything is per person; nothing here
crosses users. The write path (capture, promotion) and the read path (recall) live in their own modules."""

from __future__ import annotations

import collections
import contextlib
import logging
import re
import uuid
from collections.abc import AsyncIterator, Sequence
from dataclasses import dataclass, replace
from datetime import datetime, timedelta
from typing import Any, Protocol
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from sqlalchemy import delete, or_, select, text, update
from sqlalchemy.ext.asyncio import AsyncSession

from brain.clock import Clock
from brain.companion.models import ConversationMessage
from brain.events.actor import USER
from brain.events.catalog import MemoryForgotten
from brain.goals.service import goals_progress
from brain.memory.background import BACKGROUND, background_cosine, centroid
from brain.memory.capture import Message, capture_many, passage_texts, read_emotion, tokenize
from brain.memory.capture import capture as capture_entry
from brain.memory.embedder import Embedder, embedded, on_scale, space_of
from brain.memory.models import (
    ASKED_FOR,
    MemoryEdge,
    MemoryEntity,
    MemoryFact,
    MemoryNode,
    MemoryNodeEntity,
    MemoryNodeTheme,
    PipelineLogEntry,
    ShortTermEntry,
)
from brain.memory.promotion import hold_promotion, promote_pending
from brain.memory.recall import (
    MODES,
    GoalPull,
    Recalled,
    count_population,
    gravitate,
    lexeme_shares,
    recall_nodes,
    unprepared,
)
from brain.memory.reinforcement import answer_similarities, choose_used, reinforce_nodes
from brain.memory.settings import MemorySettings
from brain.memory.space import ensure_index
from brain.memory.timeline import find_time_anchor
from brain.outbox.models import SENT, OutboxMessage
from brain.people.models import User
from brain.pipeline_log import PipelineLog, Span
from brain.store.unit_of_work import Transactions

__all__ = ["Memory", "Recalled"]

logger = logging.getLogger(__name__)

# Goal titles are embedded once per process; goals change rarely and titles are short.
GOAL_VECTOR_CACHE = 256
RECENT_PASSAGES = 32  # passage vectors kept (see Memory._passages)
# What recall needs to know about the person besides the query (time zone, active goals, how many memories
# they have) changes slowly; reading it once a minute keeps two or three statements out of every recall.
PERSON_TTL = timedelta(minutes=1)
# The table's most common words change only when ANALYZE runs; reading them every few minutes is plenty.
LEXEME_SHARES_TTL = timedelta(minutes=10)


@dataclass(frozen=True)
class _Person:
    zone: ZoneInfo
    goals: list[GoalPull]
    population: int
    read_at: datetime


# How many of a person's latest memories "what do you know about me?" looks through, and what tells about oneself.
TOLD_LOOKED_AT = 300
_FIRST_PERSON = re.compile(r"^\s*(?:i|i'm|i’m|i've|i’ve|i'd|my|mine|we|our|ich|mein|meine|meinen|meinem|meiner|mir|mich"
                           r"|wir|unser|unsere)\b", re.I)


class MemoryHost(Protocol):
    """What the memory works through: transactions on the brain's database, and its clock (a Brain is one)."""

    @property
    def transactions(self) -> Transactions: ...

    @property
    def clock(self) -> Clock: ...


class Memory:
    def __init__(self, brain: MemoryHost, embedder: Embedder, settings: MemorySettings = MemorySettings(), *,
                 log: PipelineLog | None = None) -> None:
        self.brain = brain
        self.embedder = embedder
        # Every statement compares vectors of the embedder's space only (see brain.memory.space).
        self.settings = calibrated(settings, embedder)
        self.log = log
        self._goal_vectors: dict[str, list[float]] = {}
        self._background: list[float] | None = None  # the centroid of BACKGROUND's vectors, from the first recall
        # The latest passages embedded: a companion's answer is embedded for reinforcement, then captured.
        self._recent: collections.OrderedDict[str, list[float]] = collections.OrderedDict()
        self._people: dict[uuid.UUID, _Person] = {}
        self._shares: tuple[datetime, dict[str, float]] | None = None
        self._index_ready = False

    # -- write path -------------------------------------------------------------------------------------

    async def remember(self, user_id: uuid.UUID, text: str, at: datetime, speaker: str = "user",
                       source_key: str | None = None) -> uuid.UUID:
        """Short-term capture of one message; promotion into the graph happens later (or on demand)."""
        async with self.brain.transactions.begin() as uow:
            captured = await capture_entry(uow.session, self.embedder, user_id, text, at, speaker=speaker,
                                           source_key=source_key, now=uow.now, log=self.log)
        return captured.id

    async def remember_many(self, user_id: uuid.UUID, messages: Sequence[Message], at: datetime,
                            zone: str | None = None) -> list[uuid.UUID]:
        """`remember` for messages of one moment (a person's message and the answer to it): one transaction, one
        embedding call, one insert. `zone`: the person's time zone, when the caller has it at hand."""
        vectors = await self._passages(passage_texts(messages))  # before the transaction: it takes e5 a while
        async with self.brain.transactions.begin() as uow:
            captured = await capture_many(uow.session, self.embedder, user_id, messages, at, now=uow.now, zone=zone,
                                          log=self.log, vectors=vectors)
        return [entry.id for entry in captured]

    async def _passages(self, texts: Sequence[str]) -> list[list[float]]:
        """The texts' passage vectors, the latest `RECENT_PASSAGES` kept: the answer embedded to reinforce what it
        drew on is embedded once, not again when the turn is captured (with e5 a long answer costs a lot)."""
        known = {passage: self._recent[passage] for passage in texts if passage in self._recent}
        missing = list(dict.fromkeys(passage for passage in texts if passage not in known))
        if missing:  # another call may change the kept ones meanwhile: what is known here stays in `known`
            known.update(zip(missing, await embedded(self.embedder, missing), strict=True))
        for passage, vector in known.items():
            self._recent[passage] = vector
            self._recent.move_to_end(passage)
        while len(self._recent) > RECENT_PASSAGES:
            self._recent.popitem(last=False)
        return [known[passage] for passage in texts]

    async def ensure_index(self) -> None:
        """Makes the HNSW index of the embedder's vector space if it is missing (once per process): the default
        space's comes with the migrations, another's is made when an installation changes to it."""
        if self._index_ready:
            return
        async with self.brain.transactions.begin() as uow:
            if await ensure_index(uow.session, self.settings.space):
                logger.info("made the vector index of %s", self.settings.space.key)
        self._index_ready = True

    async def ingest_until_promoted(self, user_id: uuid.UUID | None = None, max_rounds: int | None = None) -> int:
        """Runs promotion until no mature entry is left (for one person, or for everyone), or for at most
        `max_rounds` batches (a caller that waits on it: a backlog is the background job's). Returns how many
        entries left the queue into a node (new, duplicate or reactivated)."""
        await self.ensure_index()
        total = 0
        rounds = 0
        while max_rounds is None or rounds < max_rounds:
            rounds += 1
            report = await promote_pending(self.brain.transactions, self.settings, user_id=user_id, log=self.log)
            total += report.promoted + report.duplicates + report.reactivated
            if report.promoted:
                self._forget_person(user_id)
            # One person's batch that was not full took every mature entry there was: no round to find none.
            if report.claimed == 0 or (user_id is not None and report.claimed < self.settings.promotion_batch):
                return total
        return total

    # -- read path --------------------------------------------------------------------------------------

    async def recall(self, user_id: uuid.UUID, query: str, at: datetime, k: int = 5,
                     mode: str = "chat") -> list[Recalled]:
        """The k memories that best answer `query` as of `at`, each with why it came."""
        if mode not in MODES:
            raise ValueError(f"unknown recall mode {mode!r}; one of {', '.join(MODES)}")
        if not query.strip() or k <= 0:
            return []
        await self.ensure_index()
        [raw] = await embedded(self.embedder, [query], query=True)
        if self._background is None:  # once per process, before a connection is taken
            self._background = centroid(await embedded(self.embedder, BACKGROUND))
        sector = read_emotion(query, tokenize(query))[1]
        # Outside a transaction (see `UnitOfWork.glance`): a recall only reads, each statement sees the committed
        # state as a READ COMMITTED transaction would, and BEGIN and ROLLBACK would be two round trips more.
        async with self._span("memory.recall", user_id) as span, self.brain.transactions.glance() as session, \
                unprepared(session):
            person = await self._person(session, user_id, at)
            if person is None:
                return []
            anchor = find_time_anchor(query, at, person.zone)
            factor = self.settings.gravitation_by_mode.get(mode, 0.0)
            gravitation = gravitate(raw, person.goals, factor, self.settings.gravitation_threshold)
            found = await recall_nodes(
                session, self.settings, user_id=user_id, query_text=query, query=gravitation.vector, at=at, k=k,
                mode=mode, query_sector=sector, window=(anchor.start, anchor.end) if anchor else None,
                population=person.population, shares=await self._lexeme_shares(session),
                background=background_cosine(gravitation.vector, self._background),
            )
            if span is not None:
                span.log("calculation", "memory.recall", {
                    "mode": mode, "k": k, "gravitation": gravitation.outcome, "factor": gravitation.factor,
                    "goals": [title for title, _strength in gravitation.activated], "sector": sector,
                    "window": anchor.precision if anchor else None,
                    "ids": [item.id for item in found], "scores": [item.score for item in found],
                })
        return found

    async def told_about_self(self, user_id: uuid.UUID, limit: int = 5) -> list[tuple[str, datetime]]:
        """What the person told about themselves, newest first: their own statements in the first person ("I am
        vegetarian", "Meine Schwester wohnt in Hamburg"), not questions, of their latest `TOLD_LOOKED_AT` memories
        (text, when said). For "what do you know about me?", which no recall query words."""
        async with self.brain.transactions.glance() as session:
            rows = (await session.execute(
                select(MemoryNode.text, MemoryNode.captured_at)
                .where(MemoryNode.user_id == user_id, MemoryNode.speaker == "user", MemoryNode.active)
                .order_by(MemoryNode.id.desc()).limit(TOLD_LOOKED_AT))).all()
        told: list[tuple[str, datetime]] = []
        for said, at in rows:
            if _FIRST_PERSON.match(said) and not said.rstrip().endswith("?") and said not in {t for t, _ in told}:
                told.append((said, at))
        return told[:limit]

    async def _person(self, session: AsyncSession, user_id: uuid.UUID, at: datetime) -> _Person | None:
        now = self.brain.clock.now()
        known = self._people.get(user_id)
        if known is not None and abs(now - known.read_at) <= PERSON_TTL:
            return known
        user = await session.get(User, user_id)
        if user is None:
            return None
        known = _Person(_zone(user.timezone), await self._goal_pulls(session, user, at),
                        await count_population(session, user_id), now)
        self._people[user_id] = known
        return known

    async def _lexeme_shares(self, session: AsyncSession) -> dict[str, float]:
        now = self.brain.clock.now()
        if self._shares is None or abs(now - self._shares[0]) > LEXEME_SHARES_TTL:
            self._shares = (now, await lexeme_shares(session))
        return self._shares[1]

    def _forget_person(self, user_id: uuid.UUID | None) -> None:
        if user_id is None:
            self._people.clear()
        else:
            self._people.pop(user_id, None)

    async def _goal_pulls(self, session: AsyncSession, user: User, at: datetime) -> list[GoalPull]:
        """Active goals as perception sees them: their titles' vectors, each wanted fully (motivation 1.0)."""
        titles = [goal.title for goal in await goals_progress(session, user, at) if goal.status == "active"]
        missing = [title for title in dict.fromkeys(titles) if title not in self._goal_vectors]
        if missing:
            if len(self._goal_vectors) + len(missing) > GOAL_VECTOR_CACHE:
                self._goal_vectors.clear()
            # Goals pull the query toward them (gravitation), so they are embedded as queries are.
            self._goal_vectors.update(zip(missing, await embedded(self.embedder, missing, query=True), strict=True))
        return [GoalPull(title, self._goal_vectors[title], 1.0) for title in titles]

    # -- usage reinforcement ----------------------------------------------------------------------------

    async def reinforce(self, user_id: uuid.UUID, ids: Sequence[int]) -> None:
        """Reinforces these nodes of the person (w_raw + boost, re-damped, edges recomputed)."""
        async with self.brain.transactions.begin() as uow:
            await reinforce_nodes(uow.session, self.settings, user_id, ids, uow.now)

    async def reinforce_from_answer(self, user_id: uuid.UUID, answer: str, recalled: Sequence[Recalled]) -> list[int]:
        """After an answer: the recalled memories it drew on (similarity >= threshold, at most three) are
        reinforced; nothing else is. Returns their ids."""
        if not answer.strip() or not recalled:
            self._note(user_id, {"outcome": "empty_answer" if not answer.strip() else "no_candidate"})
            return []
        [vector] = await self._passages([answer.strip()])
        async with self.brain.transactions.begin() as uow:
            similarities = await answer_similarities(uow.session, user_id, vector, [item.id for item in recalled],
                                                     self.settings.space)
            decision = choose_used(similarities, self.settings.reinforce_similarity, self.settings.reinforce_max)
            chosen = await reinforce_nodes(uow.session, self.settings, user_id, decision.chosen, uow.now)
        self._note(user_id, {
            "outcome": decision.outcome, "similarities": {str(k): round(v, 4) for k, v in similarities.items()},
            "closest_rejected": decision.closest_rejected, "threshold": self.settings.reinforce_similarity,
            "cap": self.settings.reinforce_max, "ids": chosen,
        })
        return chosen

    # -- forgetting -------------------------------------------------------------------------------------

    async def remember_on_request(self, user_id: uuid.UUID, text: str, at: datetime) -> int | None:
        """What the person asked to be remembered (/remember): captured as their own words, marked as asked for (so
        /undo can take it back, `latest_asked_for`), and promoted at once, so it is recallable right away. Returns
        the memory it only repeated, if it did (None when it is a memory of its own)."""
        entry_id = await self.remember(user_id, text, at, speaker="user", source_key=f"{ASKED_FOR}{uuid.uuid4()}")
        await self.ingest_until_promoted(user_id)
        async with self.brain.transactions.read() as session:
            row = (await session.execute(
                select(ShortTermEntry.node_id, MemoryNode.source_key == ShortTermEntry.source_key)
                .outerjoin(MemoryNode, (MemoryNode.user_id == ShortTermEntry.user_id)
                           & (MemoryNode.id == ShortTermEntry.node_id))
                .where(ShortTermEntry.user_id == user_id, ShortTermEntry.id == entry_id))).first()
        return int(row[0]) if row is not None and row[0] is not None and not row[1] else None

    async def latest_asked_for(self, user_id: uuid.UUID, since: datetime) -> AskedFor | None:
        """The person's newest memory asked for with /remember since `since`: when it was said, and the node it made
        (None when it only repeated a memory there was already)."""
        async with self.brain.transactions.read() as session:
            row = (await session.execute(
                select(ShortTermEntry.at, MemoryNode.id, ShortTermEntry.id, ShortTermEntry.node_id)
                .outerjoin(MemoryNode, (MemoryNode.user_id == ShortTermEntry.user_id)
                           & (MemoryNode.source_key == ShortTermEntry.source_key))
                .where(ShortTermEntry.user_id == user_id, ShortTermEntry.source_key.startswith(ASKED_FOR),
                       ShortTermEntry.at >= since)
                .order_by(ShortTermEntry.at.desc(), ShortTermEntry.created_at.desc()).limit(1))).first()
        if row is None or row[0] is None:
            return None
        return AskedFor(at=row[0], node_id=row[1], entry_id=row[2], repeated=row[3] if row[1] is None else None)

    async def drop_repeat(self, user_id: uuid.UUID, entry_id: uuid.UUID) -> bool:
        """Takes back a /remember that only repeated a memory there was already: its short-term entry goes, the
        memory it repeated stays. False if there is no such entry (any more)."""
        async with self.brain.transactions.begin() as uow:
            await hold_promotion(uow.session, user_id)
            gone = (await uow.session.execute(delete(ShortTermEntry).where(
                ShortTermEntry.user_id == user_id, ShortTermEntry.id == entry_id,
                ShortTermEntry.source_key.startswith(ASKED_FOR)).returning(ShortTermEntry.id))).first()
        return gone is not None

    async def forget(self, user_id: uuid.UUID, node_id: int, *, undoing: bool = False) -> bool:
        """Removes one memory of the person: its node, its edges (both directions), the short-term entries
        that became it, and the pipeline log rows that name it. False if the person has no such node. A forgetting
        is a step /undo stops at (MemoryForgotten), unless it is itself the undo of a /remember (`undoing`)."""
        if self.log is not None:
            await self.log.flush()  # rows about this node still in the buffer must reach the table first
        async with self.brain.transactions.begin() as uow:
            session = uow.session
            await hold_promotion(session, user_id)
            node = (await session.execute(select(MemoryNode.id, MemoryNode.themes, MemoryNode.entity_ids,
                                                 MemoryNode.text).where(
                MemoryNode.user_id == user_id, MemoryNode.id == node_id).with_for_update())).one_or_none()
            if node is None:
                return False
            entries = [str(e) for e in (await session.scalars(select(ShortTermEntry.id).where(
                ShortTermEntry.user_id == user_id, ShortTermEntry.node_id == node_id))).all()]
            await session.execute(delete(ShortTermEntry).where(ShortTermEntry.user_id == user_id,
                                                               ShortTermEntry.node_id == node_id))
            # Edges, theme and entity rows have no foreign keys that would cascade: they go here, in the same
            # transaction.
            await session.execute(_FORGET_EDGES, {"user_id": user_id, "node": node_id})
            await session.execute(delete(MemoryNodeTheme).where(MemoryNodeTheme.user_id == user_id,
                                                                MemoryNodeTheme.theme.in_(list(node.themes or [])),
                                                                MemoryNodeTheme.node_id == node_id))
            await session.execute(delete(MemoryNodeEntity).where(
                MemoryNodeEntity.user_id == user_id, MemoryNodeEntity.entity_id.in_(list(node.entity_ids or [])),
                MemoryNodeEntity.node_id == node_id))
            await session.execute(delete(MemoryNode).where(MemoryNode.user_id == user_id, MemoryNode.id == node_id))
            await session.execute(_FORGET_LOG_ROWS, {"user_id": user_id, "node": str(node_id),
                                                     "node_json": f"[{node_id}]", "entries": entries})
            # Names only this memory held, and the messages already sent that quote it (a /recall answer lists it
            # as "#12 · ..."; /export would still hold them): gone with it, as with forgetting everything.
            await session.execute(_FORGET_LONE_ENTITIES, {"user_id": user_id, "ids": list(node.entity_ids or [])})
            quoted = " ".join(str(node.text).split())[:QUOTE_CHARS]
            quotes = [OutboxMessage.text.contains(f"#{node_id} · ", autoescape=True)]
            if len(quoted) >= QUOTE_CHARS:
                quotes.append(OutboxMessage.text.contains(quoted, autoescape=True))
            await session.execute(
                update(OutboxMessage).where(OutboxMessage.user_id == user_id, OutboxMessage.status == SENT,
                                            or_(*quotes))
                .values(text="", document=None, document_name=None, image_png=None))
            if not undoing:
                uow.emit(MemoryForgotten(), user_id=user_id, record_id="", actor=USER)
        self._forget_person(user_id)
        return True

    async def forget_everything(self, user_id: uuid.UUID, *, step: bool = True) -> None:
        """Everything the memory holds about the person: nodes, edges, short-term entries, entities, facts and
        their pipeline log; and what would bring it back: the conversation the model reads as its history, and the
        texts of the messages already sent (a /recall answer quotes memories; /export would still hold them). The
        person's logs stay, and so do messages still waiting to be sent."""
        if self.log is not None:
            self.log.discard(user_id)
        async with self.brain.transactions.begin() as uow:
            await hold_promotion(uow.session, user_id)
            for table in (MemoryEdge, MemoryNodeTheme, MemoryNodeEntity, ShortTermEntry, MemoryNode, MemoryEntity,
                          MemoryFact, PipelineLogEntry, ConversationMessage):
                await uow.session.execute(delete(table).where(table.user_id == user_id))
            await uow.session.execute(
                update(OutboxMessage).where(OutboxMessage.user_id == user_id, OutboxMessage.status == SENT)
                .values(text="", document=None, document_name=None, image_png=None))
            if step:  # a step /undo stops at; not when the whole person is being erased (nothing may stay)
                uow.emit(MemoryForgotten(everything=True), user_id=user_id, record_id="", actor=USER)
        self._forget_person(user_id)

    # -- pipeline log -----------------------------------------------------------------------------------

    @contextlib.asynccontextmanager
    async def _span(self, name: str, user_id: uuid.UUID) -> AsyncIterator[Span | None]:
        if self.log is None:
            yield None
        else:
            async with self.log.span(name, user_id=user_id, turn_id=None) as span:
                yield span

    def _note(self, user_id: uuid.UUID, content: dict[str, Any]) -> None:
        if self.log is not None:
            self.log.log("calculation", "memory.reinforcement", content, user_id=user_id)


def calibrated(settings: MemorySettings, embedder: Embedder) -> MemorySettings:
    """The settings for this embedder: its vector space, and the cosine thresholds (duplicate, embedding layer,
    anchor, usage) on its scale (see `embedder.on_scale`)."""
    floor = settings.cosine_floor

    def moved(threshold: float) -> float:
        return round(on_scale((threshold - floor) / (1.0 - floor), embedder), 6)

    if settings.space == space_of(embedder) and floor == embedder.unrelated_cosine:
        return settings
    return replace(settings, space=space_of(embedder), cosine_floor=embedder.unrelated_cosine,
                   duplicate_cosine=moved(settings.duplicate_cosine),
                   embedding_threshold=moved(settings.embedding_threshold),
                   anchor_min_similarity=moved(settings.anchor_min_similarity),
                   reinforce_similarity=moved(settings.reinforce_similarity))


@dataclass(frozen=True)
class AskedFor:
    """A memory the person asked for (/remember): when, its short-term entry, and the node it made, or (`repeated`)
    the memory there was already that it only repeated."""

    at: datetime
    node_id: int | None
    entry_id: uuid.UUID | None = None
    repeated: int | None = None


def _zone(name: str | None) -> ZoneInfo:
    try:
        return ZoneInfo(name or "UTC")
    except (ZoneInfoNotFoundError, ValueError):
        return ZoneInfo("UTC")


# A sent message that holds this many characters of a forgotten memory's text (or all of a longer one's start)
# quotes it; a shorter text ("ok") is found only by its number.
QUOTE_CHARS = 24
# Entities of a forgotten memory that no other memory of the person, kept or waiting for promotion, names.
_FORGET_LONE_ENTITIES = text("""
    DELETE FROM memory_entities e
    WHERE e.user_id = :user_id AND e.id = ANY(CAST(:ids AS uuid[]))
      AND NOT EXISTS (SELECT FROM memory_node_entities n WHERE n.user_id = :user_id AND n.entity_id = e.id)
      AND NOT EXISTS (SELECT FROM memory_short_term s WHERE s.user_id = :user_id AND e.id = ANY(s.entity_ids))""")


# Both rows of every pair of the node: its outgoing rows, and the rows into it, which are exactly the reverse rows
# of those (found through the (user_id, a_id, b_id) index, as there is none on b_id).
_FORGET_EDGES = text("""
    WITH outgoing AS (
        DELETE FROM memory_edges WHERE user_id = :user_id AND a_id = :node RETURNING b_id
    )
    DELETE FROM memory_edges e USING outgoing o WHERE e.user_id = :user_id AND e.a_id = o.b_id AND e.b_id = :node""")


# Log rows that name the node (its id in `node_id`/`id`, in an `ids` list or among reinforcement similarities) or
# one of its short-term entries.
_FORGET_LOG_ROWS = text("""
    DELETE FROM pipeline_log
    WHERE user_id = :user_id AND content IS NOT NULL AND jsonb_typeof(content) = 'object' AND (
        content->>'node_id' = :node OR content->>'id' = :node
        OR content->'ids' @> CAST(:node_json AS jsonb) OR jsonb_exists(content->'similarities', :node)
        OR content->>'entry_id' = ANY(CAST(:entries AS text[])) OR content->>'id' = ANY(CAST(:entries AS text[])))""")
