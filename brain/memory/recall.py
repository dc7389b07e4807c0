"""The read path of the synapse memory: a query becomes anchors (pgvector ANN fused with a lexical BM25
channel over the nodes' full-text index), activation spreads along outgoing edges shell by shell and to the turns
said around each anchor in the same conversation, and the pool is ranked by match x presence x shell factor x sector
factor x speaker factor (the person's own words ahead of the companion's replies), each result with the reason it
came.

The pure part (gravitation, spreading activation, fusion, ranking, explanations) is synchronous and
tested without a database; `recall_nodes` runs it over one person's rows and nothing else."""

from __future__ import annotations

import functools
import math
import re
import uuid
from collections.abc import AsyncIterator, Callable, Collection, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

import numpy as np
from sqlalchemy import column, text
from sqlalchemy.ext.asyncio import AsyncSession

from brain.memory.lexicon import (
    FOLD_FROM,
    FOLD_TO,
    STOPWORDS,
    TELL_EN,
    TOLD_DE,
    TOLD_EN,
    YOUR_WORDS_DE,
    YOUR_WORDS_EN,
)
from brain.memory.models import ANSWERED, ASKED_FOR, ASSISTANT, CONVERSATION
from brain.memory.models import SPEAKERS as ROLES
from brain.memory.settings import MemorySettings
from brain.memory.space import DEFAULT_SPACE, VectorSpace
from brain.memory.weights import decayed, sector_factor
from brain.store.lean import Lean, session_connection

MODES = ("command", "chat", "reflection", "instruction")

# Okapi BM25 constants as published (Robertson et al.); deliberately not fitted to any data set.
BM25_K1 = 1.2
BM25_B = 0.75
# Weight of the vector channel in the fused match. Each channel's scores are z-normalised over the query's direct
# candidates (so a channel is weighed by how far its best hits stand out from the rest, not by its scale: cosines of
# one embedder crowd into a narrow band, BM25 scores spread wide), then blended with equal weights. A channel that
# sees nothing special in a query (flat scores) adds little; one that finds a clear outlier carries the match, so
# the blend does not lose to the better channel. One global constant, set before measuring, not fitted.
VECTOR_SHARE = 0.5
# Where a candidate sits in the period the query names, its lexical part counts at least this many standard
# deviations (and as much as the best lexical hit): being said then is as telling as a rare word.
WINDOW_Z = 1.0
# Query words go to the lexical channel unless they are common: found in more than this share of the person's
# memories, or in LEXICAL_MAX_DF of them or more however many there are. BM25 gives a common word little weight
# anyway; leaving it out bounds the work: counting a word stops one past the limit, and BM25 scores at most that
# many memories per word. A conversation of a few hundred turns keeps all but its commonest words, a memory of
# 100,000 only its rare ones.
LEXICAL_MAX_SHARE = 0.25
LEXICAL_MIN_DF_LIMIT = 2
LEXICAL_MAX_DF = 200
# At most this many postings are read per query, shared among its words: a long message has meaning enough
# for the embedding, so each of its words must be rarer to count.
LEXICAL_BUDGET = 1200
# A word that the table's statistics (ANALYZE's most common lexemes of the full-text column) put in at least this
# many times the rare limit of the person's memories is left out without asking the index: a GIN lookup reads the
# word's whole posting list, the dearest part of the lexical channel, only to find the word common.
SURELY_COMMON = 2.0
_WORD = re.compile(r"\w+", re.UNICODE)
# The longest period a timeline anchor of each precision covers (see brain.memory.timeline: a minute, an hour, a day or
# a weekend, a week, a month, a quarter, a year), each with a day of slack for daylight saving. A memory about a
# period that overlaps the one asked about starts at most this long before it, so the timeline index is read over
# that stretch only, per precision: a year back for the few year-wide anchors, days for the many day-wide ones.
LONGEST_ANCHOR = {
    "minute": timedelta(days=1), "hour": timedelta(days=1), "day": timedelta(days=3), "week": timedelta(days=8),
    "month": timedelta(days=32), "quarter": timedelta(days=93), "year": timedelta(days=367),
}
# A candidate whose lexical score is at least this share of the best lexical hit counts as an anchor.
LEXICAL_ANCHOR = 0.5
# How many candidates each channel contributes per requested result.
CANDIDATES_PER_RESULT = 3
# Presence (the decayed weight) moves a score by at most this share, so a strong but unrelated memory never
# outranks a clearly matching one, while among similar matches the fresher, more used memory wins.
PRESENCE_SHARE = 0.5
# A reply of the companion ranks as if one sector step further away (the step of the sector factors, 1.0 -> 0.9)
# than what the person said in the same words. What the person said is first-hand: their facts, plans and
# preferences, which a later question asks about. A reply restates, suggests or asks back, and it is usually longer,
# so it matches a question's topic words without holding the answer. (Capture already gives a reply less salience,
# but presence moves a score by little.) Questions about what the companion said still find its replies.
COMPANION_TURN_FACTOR = 0.9
# What was said around a memory in the same conversation is its context: "The event was really thought-provoking, I'm
# starting to realize that self-care matters" answers a question about the charity race two turns earlier, without
# the words or the meaning of it; "Besides great views, I also like hotels with a rooftop pool" goes on from the request
# for a hotel two turns before, and says what a later "can you suggest a hotel?" needs.
# So the turns just before and after each anchor (CONVERSATION_TURNS on each side: in a chat of two, the turn it
# answers and the one before, the answer it got and the one after) join the pool as if reached along one full-strength
# edge (shell 1). A conversation is what is said without a pause of CONVERSATION_GAP (the usual session timeout).
CONVERSATION_TURNS = 2
CONVERSATION_GAP = timedelta(minutes=30)


# ---------------------------------------------------------------------------------------------------------
# Results


@dataclass(frozen=True)
class Recalled:
    id: int
    text: str
    score: float
    why: str
    at: datetime
    speaker: str
    # Clearly meant by the query: an anchor, reached from one along edges, or a direct hit above an anchor's bar.
    # The rest are only the nearest of what there is (a question about something never said still has neighbours).
    meant: bool = True
    # `why` in parts, for people (/recall words them in their language): the direct match (cosine, lexical score,
    # inside the period asked about), and for a memory reached along edges the route's nodes and each edge's reasons
    # (models.LAYERS).
    vector: float = 0.0
    lexical: float | None = None
    in_window: bool = False
    route: tuple[int, ...] = ()
    route_reasons: tuple[tuple[str, ...], ...] = ()


# ---------------------------------------------------------------------------------------------------------
# Perception gravitation


@dataclass(frozen=True)
class GoalPull:
    """An active goal as seen by perception: its title's vector and how much the person wants it."""

    title: str
    vector: Sequence[float]
    motivation: float = 1.0


@dataclass(frozen=True)
class Gravitation:
    vector: list[float]
    factor: float
    activated: tuple[tuple[str, float], ...]
    outcome: str  # shifted | instruction | no_goals | none_activated | dimension_mismatch | out_of_range


def cosine(a: Sequence[float], b: Sequence[float]) -> float:
    dot = sum(x * y for x, y in zip(a, b, strict=True))
    na = math.sqrt(sum(x * x for x in a))
    nb = math.sqrt(sum(y * y for y in b))
    return dot / (na * nb) if na > 0 and nb > 0 else 0.0


def gravitate(query: Sequence[float], goals: Sequence[GoalPull], factor: float, threshold: float) -> Gravitation:
    """q' = q (1 - f) + sum(goal * activation) f over goals whose activation = cosine x motivation reaches
    the threshold. Any defect falls back to the raw query: perception may be bent, never broken."""
    raw = [float(x) for x in query]
    if factor <= 0.0:
        return Gravitation(raw, 0.0, (), "instruction")
    if not goals:
        return Gravitation(raw, factor, (), "no_goals")
    if any(len(goal.vector) != len(raw) for goal in goals):
        return Gravitation(raw, factor, (), "dimension_mismatch")
    activated = [(goal, cosine(raw, goal.vector) * goal.motivation) for goal in goals]
    activated = [(goal, strength) for goal, strength in activated if strength >= threshold]
    if not activated:
        return Gravitation(raw, factor, (), "none_activated")
    pull = [0.0] * len(raw)
    for goal, strength in activated:
        for i, x in enumerate(goal.vector):
            pull[i] += x * strength
    shifted = [q * (1.0 - factor) + p * factor for q, p in zip(raw, pull, strict=True)]
    similarity = cosine(raw, shifted)
    if not all(math.isfinite(x) for x in shifted) or not 0.0 < similarity <= 1.0 + 1e-9:
        return Gravitation(raw, factor, (), "out_of_range")
    return Gravitation(shifted, factor, tuple((goal.title, round(s, 4)) for goal, s in activated), "shifted")


# ---------------------------------------------------------------------------------------------------------
# Spreading activation


@dataclass(frozen=True)
class Edge:
    """An outgoing edge as the read path sees it: weight is the damped edge weight (w_abs)."""

    source: int
    target: int
    weight: float
    reasons: tuple[str, ...] = ()


@dataclass(frozen=True)
class Hop:
    source: int
    target: int
    reasons: tuple[str, ...]
    weight: float


@dataclass(frozen=True)
class Reached:
    """A node in the pool: the shell it was reached in and the path of edges from its anchor."""

    node_id: int
    shell: int
    path: tuple[Hop, ...] = ()

    @property
    def anchor(self) -> int:
        return self.path[0].source if self.path else self.node_id

    @property
    def predecessor(self) -> int | None:
        return self.path[-1].source if self.path else None


def strongest_edges(edges: Iterable[Edge], k: int, *, predecessor: int | None,
                    is_active: Callable[[int], bool]) -> list[Edge]:
    """The k strongest outgoing edges, never straight back to the predecessor and never to an inactive node."""
    usable = [e for e in edges if e.target != predecessor and e.target != e.source and is_active(e.target)]
    usable.sort(key=lambda e: (-e.weight, e.target))
    return usable[:max(k, 0)]


def keep_nearest_shell(reached: Iterable[Reached]) -> list[Reached]:
    """One entry per node: the one from the smallest shell (on a tie the first found), in input order."""
    best: dict[int, Reached] = {}
    order: list[int] = []
    for item in reached:
        known = best.get(item.node_id)
        if known is None:
            order.append(item.node_id)
            best[item.node_id] = item
        elif item.shell < known.shell:
            best[item.node_id] = item
    return sorted((best[n] for n in order), key=lambda r: r.shell)


class Spreading:
    """Shell-by-shell expansion from the anchors. The caller supplies each shell's outgoing edges, from a
    dict in tests or from one query per shell in the database, so both run the very same rules."""

    def __init__(self, anchors: Sequence[int], *, depth: int, k_per_shell: Mapping[int, int]) -> None:
        self.depth = max(depth, 0)
        self.k_per_shell = k_per_shell
        self.shell = 0
        self.anchors = list(dict.fromkeys(anchors))
        self.reached: list[Reached] = [Reached(a, 0) for a in self.anchors]
        self._frontier: list[Reached] = list(self.reached)
        self._expanded: set[int] = set()

    @property
    def done(self) -> bool:
        return self.shell >= self.depth or not self._frontier or self.k_per_shell.get(self.shell + 1, 0) <= 0

    def frontier(self) -> list[int]:
        """Nodes whose outgoing edges the next shell needs (empty when the expansion is over)."""
        return [] if self.done else [r.node_id for r in self._frontier]

    def advance(self, outgoing: Mapping[int, Sequence[Edge]],
                is_active: Callable[[int], bool] = lambda _node: True) -> None:
        if self.done:
            return
        self.shell += 1
        k = self.k_per_shell.get(self.shell, 0)
        found: list[Reached] = []
        for item in self._frontier:
            # A node is expanded once, from its nearest shell: a later, longer route adds nothing new.
            self._expanded.add(item.node_id)
            for edge in strongest_edges(outgoing.get(item.node_id, ()), k, predecessor=item.predecessor,
                                        is_active=is_active):
                hop = Hop(edge.source, edge.target, edge.reasons, edge.weight)
                found.append(Reached(edge.target, self.shell, (*item.path, hop)))
        self.reached.extend(found)
        known = {r.node_id for r in self.reached if r.shell < self.shell}
        self._frontier = [r for r in keep_nearest_shell(found)
                          if r.node_id not in known and r.node_id not in self._expanded]

    def result(self) -> list[Reached]:
        return keep_nearest_shell(self.reached)


def spread_activation(anchors: Sequence[int], outgoing: Mapping[int, Sequence[Edge]], *, depth: int,
                      k_per_shell: Mapping[int, int], active: Callable[[int], bool] = lambda _node: True
                      ) -> list[Reached]:
    """Spreading activation over an in-memory graph (`outgoing[node]` = its outgoing edges)."""
    spreading = Spreading(anchors, depth=depth, k_per_shell=k_per_shell)
    while spreading.frontier():
        spreading.advance(outgoing, active)
    return spreading.result()


def hops_for(mode: str, settings: MemorySettings) -> int:
    if mode not in MODES:
        raise ValueError(f"unknown recall mode {mode!r}; one of {', '.join(MODES)}")
    return settings.hops_by_mode.get(mode, 1)


# ---------------------------------------------------------------------------------------------------------
# Ranking


def shell_factor(shell: int, factors: Sequence[float]) -> float:
    return factors[min(shell, len(factors) - 1)] if factors else 1.0


def presence_at(w_abs: float, reinforced_at: datetime, at: datetime, rate: float) -> float:
    """The decayed weight at the moment of recall (what the daily job would have stored by then)."""
    return decayed(w_abs, (at - reinforced_at).total_seconds() / 86400.0, rate)


def fused_match(vector_z: float, lexical_z: float) -> float:
    """The blend of the two channels' z-scores (see `Fusion`), mapped into (0, 1) by the logistic function: the
    ranking multiplies the match by presence, shell and sector factors, which needs a positive match that keeps
    the blend's order."""
    blended = VECTOR_SHARE * vector_z + (1.0 - VECTOR_SHARE) * lexical_z
    return 1.0 / (1.0 + math.exp(-max(min(blended, 50.0), -50.0)))


def rank_score(match: float, presence: float, cap: float, shell: float, sector: float) -> float:
    """match x presence x shell factor x sector factor, presence (w_decay / cap) weighing in at most half."""
    presence_part = 1.0 - PRESENCE_SHARE + PRESENCE_SHARE * min(max(presence / cap, 0.0), 1.0)
    return match * presence_part * shell * sector


def speaker_factor(speaker: str, named: Collection[str] = ()) -> float:
    """People's own words rank ahead of the companion's replies at equal match (see COMPANION_TURN_FACTOR), unless
    the question asks about what the companion said (`named` holds ASSISTANT, see `addresses_companion`). In a chat
    with other participants (an imported chat, a benchmark of chats between two people), a question that names some
    of them (`named`, see `named_speakers`) asks about what they said: another participant's words rank the same
    step behind. The person's own words always count in full."""
    if speaker == ASSISTANT:
        return 1.0 if ASSISTANT in named else COMPANION_TURN_FACTOR
    if speaker == "user" or not named or speaker in named:
        return 1.0
    return COMPANION_TURN_FACTOR


def named_speakers(query_text: str, speakers: Iterable[str]) -> frozenset[str]:
    """The participants other than the person and the companion whose name the query writes (every word of it, in
    any case): "What did Melanie paint?" names Melanie."""
    words = set(_WORD.findall(query_text.lower()))
    return frozenset(speaker for speaker in set(speakers) if speaker not in ROLES
                     and all(part in words for part in _WORD.findall(speaker.lower())))


def _any_of(words: Iterable[str]) -> str:
    return "(?:" + "|".join(sorted((re.escape(word) for word in words), key=len, reverse=True)) + ")"


_ADVERB = r"(?:\w+ly\s+)?"
_COMPANION_ADDRESSED = re.compile(
    # "the list you provided", "you've mentioned", "you specifically recommended" (not "thank you made my day")
    rf"(?<!thank\s)\byou(?:['’]ve|\s+have|['’]d|\s+had)?\s+{_ADVERB}{_any_of(TOLD_EN)}\b"
    # "did you recommend", "what did you say"
    rf"|\bdid\s+you\s+{_ADVERB}{_any_of(TELL_EN)}\b"
    # "your last answer", "your suggestion"
    rf"|\byour\s+(?:(?:previous|last|earlier|first|second|other)\s+)?{_any_of(YOUR_WORDS_EN)}\b"
    # "hast du mir empfohlen", "du hattest ... erwähnt" (the participle closes the clause, a few words on)
    rf"|\b(?:du\s+(?:hast|hattest)|(?:hast|hattest)\s+du)\b(?:\s+\w+){{0,8}}?\s+{_any_of(TOLD_DE)}\b"
    # "deine Antwort", "dein letzter Vorschlag"
    rf"|\bdein(?:e|en|em|er|es)?\s+(?:(?:letzte|vorige|erste|andere)\w*\s+)?{_any_of(YOUR_WORDS_DE)}\b",
    re.IGNORECASE)


def addresses_companion(query_text: str) -> bool:
    """Whether a question asks about what the companion itself said: "remind me of the website you mentioned",
    "what did you recommend?", "welches Bier hast du mir empfohlen?", "deine letzte Antwort". Its replies then count
    as the person's own words do (see `speaker_factor`)."""
    return _COMPANION_ADDRESSED.search(query_text) is not None


def explain(reached: Reached, vector: float, lexical: float | None, in_window: bool = False, *,
            anchor: bool = True) -> str:
    """`anchor (vector 0.83, text 0.41)` for a direct hit that spread activation, `match (vector 0.31)` for a
    weaker direct hit, or the path of edges: `via #12 —entity, themes→ #40`."""
    if not reached.path:
        parts = [f"vector {vector:.2f}"]
        if lexical:
            parts.append(f"text {lexical:.2f}")
        if in_window:
            parts.append("in the time asked about")
        return f"{'anchor' if anchor else 'match'} ({', '.join(parts)})"
    steps = [f"via #{reached.path[0].source}"]
    for hop in reached.path:
        steps.append(f"—{', '.join(hop.reasons) or 'edge'}→ #{hop.target}")
    return " ".join(steps)


# ---------------------------------------------------------------------------------------------------------
# Lexical scoring


# ---------------------------------------------------------------------------------------------------------
# The database side


@dataclass
class _Candidate:
    node_id: int
    text: str
    speaker: str
    captured_at: datetime
    w_abs: float
    reinforced_at: datetime
    sector: str | None
    vector: float
    lexical: float = 0.0  # BM25 relative to the best lexical hit of this query
    bm25: float = 0.0  # BM25 as scored
    embedded: bool = True  # its vector is of the query's space (see `_node_columns`)
    in_window: bool = False  # captured in, or about, the period the query names ("last weekend")


class Fusion:
    """Score fusion over one query's direct candidates: each channel z-normalised over them (cosine; BM25, 0 where a
    candidate has none of the query's rare words), then blended (`fused_match`). A candidate without a vector of the
    query's space (not re-embedded yet) counts as the least similar; one in the period the query names as at least
    the best lexical hit (see WINDOW_Z)."""

    def __init__(self, candidates: Iterable[_Candidate]) -> None:
        pool = list(candidates)
        vectors = [c.vector for c in pool if c.embedded]
        self.floor = min(vectors, default=0.0)
        self.vector_mean, self.vector_sd = _mean_sd([c.vector if c.embedded else self.floor for c in pool])
        self.lexical_mean, self.lexical_sd = _mean_sd([c.bm25 for c in pool])
        self.window_z = max(max((self.lexical_z_of(c.bm25) for c in pool), default=0.0), WINDOW_Z)

    def vector_z(self, candidate: _Candidate) -> float:
        value = candidate.vector if candidate.embedded else self.floor
        return (value - self.vector_mean) / self.vector_sd if self.vector_sd > 0 else 0.0

    def lexical_z_of(self, bm25: float) -> float:
        return (bm25 - self.lexical_mean) / self.lexical_sd if self.lexical_sd > 0 else 0.0

    def lexical_z(self, candidate: _Candidate) -> float:
        z = self.lexical_z_of(candidate.bm25)
        return max(z, self.window_z) if candidate.in_window else z

    def __call__(self, candidate: _Candidate) -> float:
        return fused_match(self.vector_z(candidate), self.lexical_z(candidate))


def _mean_sd(values: Sequence[float]) -> tuple[float, float]:
    if not values:
        return 0.0, 0.0
    mean = sum(values) / len(values)
    return mean, math.sqrt(sum((v - mean) ** 2 for v in values) / len(values))


def _node_columns(space: VectorSpace) -> str:
    """A candidate's columns; its match by meaning only if its vector is of the query's space (NULL for a memory not
    re-embedded yet after a change of embedder, which only the lexical channel and the period can find)."""
    return f"""n.id, n.text, n.speaker, n.captured_at, n.w_abs, n.reinforced_at, n.sector,
                   CASE WHEN n.embedder = {space.literal} THEN 1 - (n.embedding <=> CAST(:q AS vector)) END AS vector"""


def _distance(space: VectorSpace) -> str:
    """Cosine distance to the query, the farthest possible (2) for a vector of another space."""
    return f"CASE WHEN n.embedder = {space.literal} THEN n.embedding <=> CAST(:q AS vector) ELSE 2 END"


def _nearest_on_index(space: VectorSpace) -> str:
    """What a statement orders by to use the space's HNSW index, which holds the embeddings in half precision: which
    memories are the nearest comes from it, their match (`vector` above) from the full vectors. The query is cast to
    vector first: PostgreSQL gives a parameter used in several places one type, and a bare `CAST(:q AS halfvec)`
    could make :q a halfvec everywhere in the statement, the full-precision match included. The statement must also
    name the space (`n.embedder = ...`), which is the index's predicate."""
    return space.nearest("n.embedding", ":q")

_POPULATION_SQL = text("SELECT count(*) FROM memory_nodes WHERE user_id = :user_id AND active")
# The most common lexemes of all memories with the share of memories holding each; the frequencies array ends with
# summary values (minimum, maximum, nulls), which zip() leaves out.
_LEXEME_SHARES_SQL = text("""
    SELECT CAST(CAST(s.most_common_elems AS text) AS text[]) AS lexemes, s.most_common_elem_freqs AS shares
    FROM pg_stats s
    WHERE s.schemaname = current_schema() AND s.tablename = 'memory_nodes' AND s.attname = 'search'""")


_SQL_COMMENT = re.compile(r"--[^\n]*")
_SQL_SPACE = re.compile(r"\s+")
_SQL_TIGHT = re.compile(r" ?([(),]) ?")


def _compact(sql: str) -> str:
    """A statement without its comments and indentation (none of ours has a string literal holding either). psycopg
    caches how it parses a statement's placeholders only for statements up to 4 KB; the candidate statement, written
    out with its indentation, is longer, and parsing it again took about a quarter of a millisecond per recall."""
    return _SQL_TIGHT.sub(r"\1", _SQL_SPACE.sub(" ", _SQL_COMMENT.sub("", sql))).strip()


def _outgoing_edges(space: VectorSpace) -> str:
    """The outgoing edges of the node `f.id` (see `edges_sql`), for a lateral join."""
    return f"""
        SELECT e.a_id, e.b_id, e.w_abs AS edge_weight, e.reasons, {_node_columns(space)}
        FROM (
            SELECT e.a_id, e.b_id, e.w_abs, e.reasons FROM memory_edges e
            WHERE e.user_id = :user_id AND e.a_id = f.id
            ORDER BY e.w_abs DESC, e.b_id
            OFFSET 0  -- keeps the sort below the join: the planner would otherwise join first and sort after
        ) AS e
        JOIN memory_nodes n ON n.id = e.b_id
        WHERE n.user_id = :user_id AND n.active AND n.captured_at <= :at
        ORDER BY e.w_abs DESC, e.b_id
        LIMIT :per_node"""
# How far the statement's fused match may be from Python's (the same formula on the same doubles, but a sum taken in
# another order may round differently): candidates this close to the anchor bounds count as possible anchors.
_ROUNDING = 1e-6


@functools.lru_cache(maxsize=128)
def candidates_sql(lexical: bool, window: bool, first_hop: bool = False, space: VectorSpace = DEFAULT_SPACE) -> Any:
    """All direct candidates of a query in one statement (one round trip), each channel a CTE:

    vector   the nearest memories by cosine (HNSW index, iterative scan for the per-person filter)
    lexical  Okapi BM25 in one pass: for each query word (`:terms`, an array, each word's lookup on the full-text
             index) up to `cap` of the person's memories holding it; a word found in `cap` or more is
             common and left out; the others score the memories found for them. Term frequency = positions
             of the word in the tsvector, document length = distinct words, average length taken over the
             memories scored.
    window   memories captured in, or about, the period the query names, the nearest of them by cosine. A period
             that holds few of the person's memories is searched exactly: its memories are read through btrees
             (those captured in it through the capture log's index on the message time, those about it through
             the timeline index) and sorted by distance. A period that holds many is searched on the HNSW index
             (with iterative scan, no further than hnsw_max_scan_tuples), which finds enough of them within the
             first few hundred tuples. `:exact_max` (see `exact_window_limit`) decides; the count that decides
             stops one past it, so it stays cheap for a wide period.
    The vector channel and a wide period order by the HNSW index's expression (half precision, see
    `_NEAREST_ON_INDEX`); the exact search of a narrow period sorts by the full vectors. Every match returned
    (`vector`) is computed on the full vectors.

    With `first_hop`, the same statement also brings the first shell's edges (as `_EDGES_SQL`, `:per_node` per
    node) of every candidate that may turn out an anchor, which spares spreading activation its first round trip.
    Which candidates are the anchors is decided in Python (`recall_nodes`); the statement takes those whose fused
    match (`Fusion`, computed alike) is within a rounding tolerance of the `:anchors`-th best and that may be clearly
    meant, so it takes every anchor and perhaps a few more. Those rows say `likely`; the edges come as further rows
    whose `a_id` is set, their target's columns in the node columns.
    """
    ctes = [f"""vec AS (
        SELECT n.id FROM memory_nodes n
        WHERE n.user_id = :user_id AND n.active AND n.captured_at <= :at AND n.embedder = {space.literal}
        ORDER BY {_nearest_on_index(space)}
        LIMIT :limit)"""]
    sources = ["SELECT id FROM vec"]
    if lexical:
        # The words come as one array, each looked up on the full-text index in a lateral join: the statement is the
        # same for any number of words, where a branch of its own per word would be planned for each. The
        # full-text vector comes along with the id: the heap row is read for the person filter anyway, and reading
        # it again for BM25 would fetch every page twice.
        ctes.append(f"""hits AS MATERIALIZED (
            SELECT w.pos AS i, h.id, h.search
            FROM unnest(CAST(:terms AS tsquery[])) WITH ORDINALITY AS w(term, pos)
            CROSS JOIN LATERAL (
                SELECT id, search FROM memory_nodes
                WHERE user_id = :user_id AND active AND captured_at <= :at AND search @@ w.term
                LIMIT :cap) AS h
        ), rare AS (
            SELECT h.i, max(t.lexeme) AS lexeme, ln(1.0 + (:n - count(*) + 0.5) / (count(*) + 0.5)) AS idf
            FROM hits h JOIN unnest(CAST(:lexemes AS text[])) WITH ORDINALITY AS t(lexeme, pos) ON t.pos = h.i
            GROUP BY h.i
            HAVING count(*) < :cap
        ), docs AS (
            SELECT DISTINCT ON (h.id) h.id, h.search FROM hits h JOIN rare r ON r.i = h.i
        ), sized AS (
            SELECT d.id, d.search, length(d.search) AS dl, avg(length(d.search)) OVER () AS avgdl FROM docs d
        ), scored AS (
            SELECT s.id, sum(r.idf * (cardinality(u.positions) * ({BM25_K1} + 1.0))
                       / (cardinality(u.positions) + {BM25_K1} * (1.0 - {BM25_B} + {BM25_B} * s.dl / s.avgdl))) AS bm25
            FROM sized s
            CROSS JOIN LATERAL unnest(ts_filter(setweight(s.search, 'A', (SELECT array_agg(lexeme) FROM rare)),
                                                '{{a}}')) AS u
            JOIN rare r ON r.lexeme = u.lexeme
            GROUP BY s.id
            ORDER BY bm25 DESC, s.id
            LIMIT :limit)""")
        sources.append("SELECT id FROM scored")
    if window:
        # The capture log keeps every promoted entry with the node it became (node.captured_at = entry.at); a
        # duplicate's entry points at an older node, which the capture-time condition on the node drops again. A
        # memory's period is half-open, as the one asked about: "tomorrow" ends where the day after begins, so a
        # memory about the day before the period asked about does not touch it.
        in_period = """n.user_id = :user_id AND n.active AND n.captured_at <= :at
              AND ((n.captured_at >= :start AND n.captured_at < :end)
                   OR (n.timeline_start < :end AND (n.timeline_end > :start
                                                     OR (n.timeline_end IS NULL AND n.timeline_start >= :start))))"""
        said_then = """e.user_id = :user_id AND e.status = 'promoted' AND e.at >= :start AND e.at < :end
                AND e.at <= :at"""
        ctes.append(f"""said_then AS (
            SELECT count(*) AS entries
            FROM (SELECT FROM memory_short_term e WHERE {said_then} LIMIT :exact_max + 1) AS e
        ), win AS (
            (SELECT w.id FROM (
                SELECT n.id, {_distance(space)} AS distance
                FROM memory_short_term e JOIN memory_nodes n ON n.id = e.node_id
                WHERE (SELECT entries FROM said_then) <= :exact_max AND {said_then} AND {in_period}
                UNION
                SELECT n.id, {_distance(space)}
                FROM unnest(CAST(:precisions AS text[]), CAST(:longest AS interval[])) AS p(precision, longest)
                JOIN memory_nodes n ON n.user_id = :user_id AND n.timeline_precision = p.precision
                  AND n.timeline_start < :end AND n.timeline_start >= CAST(:start AS timestamptz) - p.longest
                WHERE (SELECT entries FROM said_then) <= :exact_max AND {in_period}
             ) AS w
             ORDER BY w.distance, w.id
             LIMIT :limit)
            UNION ALL
            (SELECT n.id FROM memory_nodes n
             WHERE (SELECT entries FROM said_then) > :exact_max AND {in_period} AND n.embedder = {space.literal}
             ORDER BY {_nearest_on_index(space)}
             LIMIT :limit))""")
        sources.append("SELECT id FROM win")
    bm25 = "s.bm25" if lexical else "NULL::float8"
    direct = f"""
    SELECT {_node_columns(space)}, {bm25} AS bm25, {"w.id IS NOT NULL" if window else "false"} AS in_window
    FROM ({" UNION ".join(sources)}) AS found
    JOIN memory_nodes n ON n.id = found.id
    {"LEFT JOIN scored s ON s.id = n.id" if lexical else ""}
    {"LEFT JOIN win w ON w.id = n.id" if window else ""}"""
    if not first_hop:
        return text(_compact(f"WITH {', '.join(ctes)}{direct}"))
    return text(_compact(f"""
    WITH {", ".join(ctes)}, direct AS ({direct}
    ), channels AS (
        SELECT d.id, d.vector, d.in_window, coalesce(CAST(d.bm25 AS float8), 0) AS bm25,
               coalesce(d.vector, min(d.vector) OVER (), 0) AS v,
               coalesce(CAST(d.bm25 AS float8) / nullif(max(CAST(d.bm25 AS float8)) OVER (), 0), 0) AS lexical
        FROM direct d
    ), scaled AS (
        SELECT c.*, avg(c.v) OVER () AS v_mean, stddev_pop(c.v) OVER () AS v_sd,
               avg(c.bm25) OVER () AS b_mean, stddev_pop(c.bm25) OVER () AS b_sd
        FROM channels c
    ), zs AS (
        SELECT s.id, s.vector, s.lexical, s.in_window,
               CASE WHEN s.v_sd > 0 THEN (s.v - s.v_mean) / s.v_sd ELSE 0 END AS vz,
               CASE WHEN s.b_sd > 0 THEN (s.bm25 - s.b_mean) / s.b_sd ELSE 0 END AS bz
        FROM scaled s
    ), fused AS (
        SELECT z.id, z.vector, z.lexical, z.in_window,
               {VECTOR_SHARE} * z.vz + {1.0 - VECTOR_SHARE} * CASE WHEN z.in_window
                   THEN greatest(z.bz, (SELECT greatest(max(y.bz), {WINDOW_Z}) FROM zs y)) ELSE z.bz END AS match
        FROM zs z
    ), likely AS (
        SELECT f.id FROM fused f
        WHERE f.match >= coalesce((SELECT g.match FROM fused g ORDER BY g.match DESC LIMIT 1 OFFSET :anchors - 1),
                                  '-infinity') - {_ROUNDING}
          AND (f.vector >= :anchor_min - {_ROUNDING} OR f.lexical >= {LEXICAL_ANCHOR} - {_ROUNDING} OR f.in_window)
    )
    SELECT d.*, d.id IN (SELECT id FROM likely) AS likely,
           NULL AS a_id, NULL AS b_id, NULL AS edge_weight, NULL AS reasons
    FROM direct d
    UNION ALL
    SELECT hop.id, hop.text, hop.speaker, hop.captured_at, hop.w_abs, hop.reinforced_at, hop.sector, hop.vector,
           NULL, false, false, hop.a_id, hop.b_id, hop.edge_weight, hop.reasons
    FROM likely f
    CROSS JOIN LATERAL ({_outgoing_edges(space)}) AS hop"""))


# The k+1 strongest outgoing edges of each frontier node to active nodes known at `at` (one more than
# needed, because the predecessor lock may drop one of them). The edges are sorted by weight before their targets are
# looked up, so only the targets of the strongest few are read, not those of all of the node's edges.
@functools.lru_cache(maxsize=16)
def edges_sql(space: VectorSpace) -> Any:
    return text(_compact(f"""
    SELECT hop.*
    FROM unnest(CAST(:frontier AS bigint[])) AS f(id)
    CROSS JOIN LATERAL ({_outgoing_edges(space)}) AS hop"""))

# The columns of a candidate row, of an edge row (its target's columns after the edge's), and of the candidate
# statement's rows when the first shell's edges come along.
_CANDIDATE_COLUMNS = ("id", "text", "speaker", "captured_at", "w_abs", "reinforced_at", "sector", "vector")
_EDGE_COLUMNS = ("a_id", "b_id", "edge_weight", "reasons", *_CANDIDATE_COLUMNS)
_DIRECT_COLUMNS = (*_CANDIDATE_COLUMNS, "bm25", "in_window")
_WITH_HOP_COLUMNS = (*_DIRECT_COLUMNS, "likely", "a_id", "b_id", "edge_weight", "reasons")


def _lean(statement: Any, columns: Sequence[str]) -> Lean:
    """A recall statement run by the driver alone (`brain.store.lean`): a recall's rows are read by attribute, which
    on SQLAlchemy's rows cost about a tenth of a recall's client CPU. Never prepared on the server (see
    `unprepared`): each recall is planned for its own query vector, limits and period."""
    return Lean(statement.columns(*(column(name) for name in columns)), prepare=False)


@functools.lru_cache(maxsize=16)
def _edges_lean(space: VectorSpace) -> Lean:
    return _lean(edges_sql(space), _EDGE_COLUMNS)


@functools.lru_cache(maxsize=128)
def _candidates_lean(lexical: bool, window: bool, first_hop: bool, space: VectorSpace) -> Lean:
    return _lean(candidates_sql(lexical, window, first_hop, space), _WITH_HOP_COLUMNS if first_hop else _DIRECT_COLUMNS)


def query_vector(vector: Sequence[float] | np.ndarray) -> np.ndarray:
    """The query as a statement parameter: pgvector's dumper sends a numpy array as a `vector` (brain.store.vectors)."""
    return np.asarray(vector, dtype=np.float32)


def _candidate(row: Any) -> _Candidate:
    return _Candidate(node_id=row.id, text=row.text, speaker=row.speaker, captured_at=row.captured_at,
                      w_abs=row.w_abs, reinforced_at=row.reinforced_at, sector=row.sector,
                      vector=0.0 if row.vector is None else float(row.vector), embedded=row.vector is not None)


# Where a pooled connection notes the recall settings it holds for its whole session (see `_use_index_scan`); the
# note goes with the connection (SQLAlchemy clears it when the connection is replaced).
_SESSION_SETTINGS = "companion_recall_settings"
_SETTINGS_SQL = text("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', :local), "
                     "set_config('hnsw.ef_search', :ef, :local), "
                     "set_config('hnsw.max_scan_tuples', :scan, :local), "
                     "set_config('max_parallel_workers_per_gather', '0', :local), "
                     "set_config('effective_io_concurrency', '0', :local), "
                     "set_config('jit', 'off', :local)")


async def _use_index_scan(session: AsyncSession, settings: MemorySettings) -> None:
    # The HNSW index knows nothing of users: iterative scans keep going until enough rows of this person
    # pass the filter, instead of returning too few, but no further than hnsw_max_scan_tuples (a period the
    # query names may hold few or none of the memories). Parallel workers cost more to start than a recall takes
    # (the planner cannot know that the exact search of a period, planned for thousands of rows, runs only for a
    # few). No read-ahead: the lexical channel's bitmap heap scans stop after a few rows, one per heap page, and
    # read-ahead fetched pages they never looked at (through PostgreSQL 18's I/O workers); without it a recall at
    # 100,000 memories took about a quarter less server time (with the default 128 MB of shared buffers, the pages
    # coming from the OS cache). No JIT: compiling would cost more than any recall statement runs, should a large
    # graph's cost estimates ever pass jit_above_cost. One round trip for all settings. (Every statement is also
    # planned for its actual values: `Memory.recall` runs them unprepared, see `unprepared`.)
    #
    # On a connection outside any transaction (`Memory.recall` reads on one, see `UnitOfWork.glance`) they are set
    # for the connection's session, once: the next recall on the same pooled connection needs no round trip for
    # them. Whatever else runs on the connection later inherits them; the statements that use the HNSW index
    # otherwise (promotion) set every HNSW setting they rely on for their own transaction. Inside a transaction
    # (which may roll back, taking session settings with it) they are set for the transaction, every time.
    connection = await session.connection()
    values = (str(int(settings.hnsw_ef_search)), str(int(settings.hnsw_max_scan_tuples)))
    if _outside_transaction(connection):
        if connection.info.get(_SESSION_SETTINGS) == values:
            return
        await session.execute(_SETTINGS_SQL, {"ef": values[0], "scan": values[1], "local": False})
        connection.info[_SESSION_SETTINGS] = values
        return
    await session.execute(_SETTINGS_SQL, {"ef": values[0], "scan": values[1], "local": True})


@asynccontextmanager
async def unprepared(session: AsyncSession) -> AsyncIterator[None]:
    """The session's statements are not prepared on the server while this runs. psycopg prepares a statement run
    five times on a connection (outside a transaction, where no ROLLBACK clears it), and PostgreSQL may then plan
    it once for any values: a generic plan, made for any query vector, limit and period, might sort the whole
    table by exact distance instead of reading the index, or the other way round. Not `plan_cache_mode` for the
    connection's session: the other statements that run on a pooled connection keep their generic plans."""
    driver = (await (await session.connection()).get_raw_connection()).driver_connection
    assert driver is not None  # a live pooled connection
    before = driver.prepare_threshold
    driver.prepare_threshold = None
    try:
        yield
    finally:
        driver.prepare_threshold = before


def _outside_transaction(connection: Any) -> bool:
    """Whether the connection runs each statement on its own (autocommit), so that a session setting stays."""
    driver = connection.sync_connection.connection.driver_connection if connection.sync_connection else None
    return bool(getattr(driver, "autocommit", False))


def exact_window_limit(limit: int, population: int) -> int:
    """The most memories captured in a period for which the exact search is the cheaper one. To find `limit` of
    them, the HNSW scan visits about limit x population / count tuples (each a heap row checked against the
    filter); the exact search reads count rows. Both are equal at sqrt(limit x population)."""
    return max(int(math.sqrt(max(limit, 1) * max(population, 1))), limit)


_FOLD = str.maketrans(FOLD_FROM, FOLD_TO)
_SPELLED_UMLAUT = re.compile(r"(?<=[aou])e+")


def fold_word(word: str) -> str:
    """A word as the full-text column stores it (see lexicon.FOLD_FROM and migration 0030's memory_fold)."""
    return _SPELLED_UMLAUT.sub("", word.lower().replace("ß", "ss").translate(_FOLD))


# Harman's S-stemmer (1991), as migration 0041's memory_stem applies it to the full-text column: a plural ending off,
# after a letter (folded words hold a-z), the first rule that fits.
_PLURALS = ((re.compile(r"(?<=[b-df-z])ies$"), "y"), (re.compile(r"(?<=[b-df-np-z])es$"), "e"),
            (re.compile(r"(?<=[a-rtv-z])s$"), ""))


def stem_word(word: str) -> str:
    """A folded word without its plural ending: "hotels" -> "hotel", "stories" -> "story", "houses" -> "house"."""
    for ending, replacement in _PLURALS:
        stemmed, changed = ending.subn(replacement, word)
        if changed:
            return stemmed
    return word


def query_lexemes(query_text: str) -> list[str]:
    """The query's words as the full-text column stores them (folded, plural endings off), without German and
    English function words: those never make a memory stand out, and their posting lists are long."""
    words = _WORD.findall(query_text.lower())
    return list(dict.fromkeys(stem_word(fold_word(w)) for w in words if len(w) > 1 and w not in STOPWORDS))


def rare_word_limit(population: int, words: int = 1) -> int:
    """The most memories a query word may be found in and still count as rare."""
    share = min(max(LEXICAL_MAX_SHARE * population, LEXICAL_MIN_DF_LIMIT), LEXICAL_MAX_DF - 1)
    return int(max(min(share, LEXICAL_BUDGET // max(words, 1) - 1), LEXICAL_MIN_DF_LIMIT))


def surely_common(lexeme: str, shares: Mapping[str, float], population: int) -> bool:
    """Whether the table's statistics show the word so often that the person's memories surely hold it more than
    the rare limit allows (the share of all memories, taken for this person's)."""
    return shares.get(lexeme, 0.0) * population >= SURELY_COMMON * rare_word_limit(population)


async def lexeme_shares(session: AsyncSession) -> dict[str, float]:
    """Lexeme -> share of memories holding it, for the table's most common lexemes (empty before ANALYZE)."""
    row = (await session.execute(_LEXEME_SHARES_SQL)).first()
    if row is None or row.lexemes is None or row.shares is None:
        return {}
    return {str(lexeme): float(share) for lexeme, share in zip(row.lexemes, row.shares, strict=False)}


def _tsquery_term(lexeme: str) -> str:
    return "'" + lexeme.replace("\\", "\\\\").replace("'", "''") + "'"


async def count_population(session: AsyncSession, user_id: uuid.UUID) -> int:
    """How many active memories the person has (BM25's N)."""
    return int(await session.scalar(_POPULATION_SQL, {"user_id": user_id}) or 0)


async def direct_candidates(session: AsyncSession, user_id: uuid.UUID, query_text: str, query: Sequence[float],
                            at: datetime, limit: int, *, window: tuple[datetime, datetime] | None = None,
                            population: int | None = None, shares: Mapping[str, float] | None = None,
                            space: VectorSpace = DEFAULT_SPACE) -> list[_Candidate]:
    """The memories the query reaches directly: by meaning (vector), by its rare words (BM25 over PostgreSQL
    full text, 'simple' configuration, so German and English words are matched as written) and by the period
    it names. `population` (the person's number of active memories) may come from a cache: BM25 needs it
    only roughly. `shares` (see `lexeme_shares`) lets surely common words be left out before the index is read.
    `space` is the query vector's (see brain.memory.space)."""
    found, _first_hop = await _direct_candidates(session, user_id, query_text, query_vector(query), at, limit,
                                                 window=window, population=population, shares=shares, space=space)
    return found


@dataclass(frozen=True)
class _FirstHop:
    """What the first shell needs to know when the candidate statement brought it along (see `candidates_sql`):
    the candidates whose edges came (`sources`) and those edges with their targets, as `outgoing_edges` gives them."""

    per_node: int
    sources: frozenset[int]
    rows: tuple[Any, ...]

    def covers(self, frontier: Sequence[int], per_node: int) -> bool:
        return per_node == self.per_node and self.sources.issuperset(frontier)

    def outgoing(self, frontier: Sequence[int]) -> tuple[dict[int, list[Edge]], dict[int, _Candidate]]:
        wanted = set(frontier)
        return _edges_and_targets(row for row in self.rows if row.a_id in wanted)


async def _direct_candidates(session: AsyncSession, user_id: uuid.UUID, query_text: str, vector: np.ndarray,
                             at: datetime, limit: int, *, window: tuple[datetime, datetime] | None,
                             population: int | None, shares: Mapping[str, float] | None, space: VectorSpace,
                             first_hop: tuple[int, int, float] | None = None
                             ) -> tuple[list[_Candidate], _FirstHop | None]:
    """`direct_candidates`, and with `first_hop` (edges per node, anchors, least similarity of an anchor) the first
    shell's edges of the candidates that may turn out anchors."""
    lexemes = query_lexemes(query_text)
    n = 0
    if lexemes or window is not None:
        n = population or await count_population(session, user_id)  # a cached 0 may be stale: count again
        if n <= 0:
            return [], None
        if shares:
            lexemes = [lexeme for lexeme in lexemes if not surely_common(lexeme, shares, n)]
    params: dict[str, Any] = {"user_id": user_id, "at": at, "q": vector, "limit": limit,
                              "cap": rare_word_limit(n, len(lexemes)) + 1, "n": n, "lexemes": lexemes}
    params["terms"] = [_tsquery_term(lexeme) for lexeme in lexemes]
    if window is not None:
        params.update(start=window[0], end=window[1], exact_max=exact_window_limit(limit, n),
                      precisions=list(LONGEST_ANCHOR), longest=list(LONGEST_ANCHOR.values()))
    if first_hop is not None:
        params.update(per_node=first_hop[0], anchors=first_hop[1], anchor_min=first_hop[2])
    rows = await _candidates_lean(bool(lexemes), window is not None, first_hop is not None, space).rows(
        await session_connection(session), params)
    found = []
    best = 0.0
    sources: set[int] = set()
    hops: list[Any] = []
    for row in rows:
        if first_hop is not None:
            if row.a_id is not None:
                hops.append(row)
                continue
            if row.likely:
                sources.add(row.id)
        candidate = _candidate(row)
        candidate.bm25 = candidate.lexical = float(row.bm25 or 0.0)
        candidate.in_window = bool(row.in_window)
        best = max(best, candidate.lexical)
        found.append(candidate)
    for candidate in found:
        candidate.lexical = candidate.lexical / best if best > 0 else 0.0
    if first_hop is None:
        return found, None
    return found, _FirstHop(first_hop[0], frozenset(sources), tuple(hops))


def _edges_and_targets(rows: Iterable[Any]) -> tuple[dict[int, list[Edge]], dict[int, _Candidate]]:
    edges: dict[int, list[Edge]] = {}
    targets: dict[int, _Candidate] = {}
    for row in rows:
        edges.setdefault(row.a_id, []).append(
            Edge(row.a_id, row.b_id, float(row.edge_weight), tuple(row.reasons or ())))
        targets[row.b_id] = _candidate(row)
    return edges, targets


async def outgoing_edges(session: AsyncSession, user_id: uuid.UUID, frontier: Sequence[int],
                         query: Sequence[float] | np.ndarray, at: datetime, per_node: int, *,
                         space: VectorSpace = DEFAULT_SPACE) -> tuple[dict[int, list[Edge]], dict[int, _Candidate]]:
    rows = await _edges_lean(space).rows(await session_connection(session), {
        "user_id": user_id, "frontier": list(frontier), "at": at, "per_node": per_node,
        "q": query_vector(query)})
    return _edges_and_targets(rows)


def _said(entry: str) -> str:
    """An entry of the capture log said in a conversation: not a note asked for with /remember (ASKED_FOR)."""
    return f"coalesce({entry}.source_key NOT LIKE '{ASKED_FOR}%', true)"


def _turns(priority: int | None = None, *, people_only: bool = False) -> str:
    """The capture log's turns said in a conversation and promoted (with a `priority` column if given), to be narrowed
    to one anchor `a` by one of the conditions below."""
    return f"""SELECT {"" if priority is None else f"{priority} AS p, "}x.node_id FROM memory_short_term x
               WHERE x.user_id = :user_id AND x.status = 'promoted' AND x.node_id IS NOT NULL AND {_said("x")}
                 {f"AND x.speaker <> '{ASSISTANT}'" if people_only else ""}"""


# The turns just before anchor `a`, just after it (never after the recall's time) and captured with it (a message and
# the answer to it are captured in one insert, at one moment: neither comes before the other), in (message time,
# capture time) order within CONVERSATION_GAP, through the capture log's index on the message time.
_BEFORE = """AND x.at BETWEEN a.at - CAST(:gap AS interval) AND a.at AND (x.at, x.created_at) < (a.at, a.created_at)
             ORDER BY x.at DESC, x.created_at DESC"""
_AFTER = """AND x.at BETWEEN a.at AND least(a.at + CAST(:gap AS interval), :at)
            AND (x.at, x.created_at) > (a.at, a.created_at) ORDER BY x.at, x.created_at"""
_TOGETHER = "AND x.at = a.at AND x.created_at = a.created_at AND x.node_id <> a.anchor"


def _around_each(anchors: str, turns: str, *, replies_only: bool = False) -> str:
    """(anchor, node id) for the `turns` (a lateral subquery over `a`) of each node of the array parameter `anchors`
    (`replies_only`: each of the companion's replies among them), found by its first capture: its node's capture time
    on the capture log's index."""
    return f"""
        SELECT a.anchor, x.node_id
        FROM (
            SELECT DISTINCT ON (n.id) n.id AS anchor, e.at, e.created_at
            FROM memory_nodes n
            JOIN memory_short_term e ON e.user_id = :user_id AND e.status = 'promoted' AND e.at = n.captured_at
                                        AND e.node_id = n.id AND {_said("e")}
            WHERE n.user_id = :user_id AND n.id = ANY(CAST(:{anchors} AS bigint[]))
              {f"AND n.speaker = '{ASSISTANT}'" if replies_only else ""}
            ORDER BY n.id, e.created_at
        ) AS a
        CROSS JOIN LATERAL ({turns}) AS x"""


@functools.lru_cache(maxsize=16)
def _context_lean(space: VectorSpace) -> Lean:
    """In one statement: the turns said around each anchor (CONVERSATION_TURNS before, after and with it), and for
    each reply of the companion the person's turn it answers: the one captured with it (the bot captures a message
    and its answer together), or else the one just before it."""
    around = _around_each("anchors", f"""
        ({_turns()} {_BEFORE} LIMIT :turns) UNION ALL ({_turns()} {_AFTER} LIMIT :turns)
        UNION ALL ({_turns()} {_TOGETHER} LIMIT :turns)""")
    answered = _around_each("replies", f"""
        SELECT y.node_id FROM (({_turns(0, people_only=True)} {_TOGETHER} LIMIT 1)
                               UNION ALL ({_turns(1, people_only=True)} {_BEFORE} LIMIT 1)) AS y
        ORDER BY y.p LIMIT 1""", replies_only=True)
    statement = text(_compact(f"""
        SELECT t.answered, t.anchor, {_node_columns(space)}
        FROM (SELECT false AS answered, c.* FROM ({around}) AS c
              UNION ALL
              SELECT true, r.* FROM ({answered}) AS r) AS t
        JOIN memory_nodes n ON n.id = t.node_id
        WHERE n.user_id = :user_id AND n.active AND n.captured_at <= :at AND n.id <> t.anchor"""))
    # Prepared, unlike the other recall statements: its plan (index scans by person, status and time) is the same for
    # any values, and planning it took longer than running it.
    return Lean(statement.columns(*(column(name) for name in ("answered", "anchor", *_CANDIDATE_COLUMNS))))


@dataclass(frozen=True)
class Context:
    """What was said around the anchors, and what the replies answer: (anchor or reply, the turn's candidate)."""

    around: list[tuple[int, _Candidate]]
    answered: list[tuple[int, _Candidate]]


async def conversation_context(session: AsyncSession, user_id: uuid.UUID, anchors: Sequence[int],
                               replies: Sequence[int], query: Sequence[float] | np.ndarray, at: datetime, *,
                               space: VectorSpace = DEFAULT_SPACE) -> Context:
    """The turns said around each anchor in the same conversation (see CONVERSATION_TURNS), and the person's turn each
    of the companion's `replies` answers.

    A reply restates what the person's message asked in other words, and a later question may name the topic in
    either: "can you suggest accessories for my photography setup?" finds the reply about camera flashes, not the
    message "I'm looking to upgrade my camera flash ... compatible with my Sony A7R IV". The two are one exchange, and
    what the person said in it (their camera, their hotel, their preferences) is what the question needs, so the
    message takes the reply's match where that is better (`recall_nodes`)."""
    context = Context([], [])
    if not anchors and not replies:
        return context
    rows = await _context_lean(space).rows(await session_connection(session), {
        "user_id": user_id, "anchors": list(anchors), "replies": list(replies), "q": query_vector(query), "at": at,
        "gap": CONVERSATION_GAP, "turns": CONVERSATION_TURNS})
    for row in rows:
        (context.answered if row.answered else context.around).append((int(row.anchor), _candidate(row)))
    return context


async def recall_nodes(session: AsyncSession, settings: MemorySettings, *, user_id: uuid.UUID,
                       query_text: str, query: Sequence[float], at: datetime, k: int = 5, mode: str = "chat",
                       query_sector: str | None = None, window: tuple[datetime, datetime] | None = None,
                       population: int | None = None, shares: Mapping[str, float] | None = None,
                       background: float | None = None) -> list[Recalled]:
    """The k best memories of one person for a query vector (already gravitated) and its text; `window` is
    the period the query names, if any (its memories join the anchors); `population` is the person's number
    of active memories if the caller knows it (BM25 needs it only roughly); `shares` the table's common lexemes
    (see `lexeme_shares`), if known; `background` the query's cosine with everyday sentences (see
    brain.memory.background), which a memory found by meaning alone must clearly exceed to count as meant."""
    depth = hops_for(mode, settings)
    if k <= 0:
        return []
    per_channel = max(k, settings.anchors) * CANDIDATES_PER_RESULT
    await _use_index_scan(session, settings)
    vector = query_vector(query)  # every statement takes it; converted once
    # The first shell's edges come with the candidates when spreading will need them (one round trip less).
    first_shell = settings.k_edges_per_shell.get(1, 0)
    wants_hop = depth >= 1 and first_shell > 0 and settings.anchors > 0
    found, first_hop = await _direct_candidates(
        session, user_id, query_text, vector, at, per_channel, window=window, population=population, shares=shares,
        space=settings.space,
        first_hop=(first_shell + 1, settings.anchors, settings.anchor_min_similarity) if wants_hop else None)
    pool: dict[int, _Candidate] = {c.node_id: c for c in found}
    if not pool:
        return []

    direct = set(pool)
    fused = Fusion(pool.values())

    matches: dict[int, float] = {}

    def match(node_id: int) -> float:
        known = matches.get(node_id)
        if known is None:
            known = matches[node_id] = fused(pool[node_id])
        return known

    def clearly_meant(c: _Candidate) -> bool:
        return c.vector >= settings.anchor_min_similarity or c.lexical >= LEXICAL_ANCHOR or c.in_window

    standing_out = None if background is None else \
        background + settings.meant_margin * (1.0 - settings.cosine_floor)

    def meant(c: _Candidate) -> bool:
        """Clearly meant, and by more than a similarity the query has with any sentence (the ranking is the same
        either way: an anchor that does not stand out still spreads, but what it brings is only the nearest)."""
        if c.lexical >= LEXICAL_ANCHOR or c.in_window:
            return True
        return c.vector >= settings.anchor_min_similarity and (standing_out is None or c.vector >= standing_out)

    ranked = sorted(direct, key=lambda node_id: (-match(node_id), node_id))
    # The best few direct hits are the anchors (shell 0) that spread activation, and only if the query clearly
    # activates them: a weak match would only pull in noise. Every direct hit is still ranked below.
    anchors = [node_id for node_id in ranked[:settings.anchors] if clearly_meant(pool[node_id])]
    spreading = Spreading(anchors, depth=depth, k_per_shell=settings.k_edges_per_shell)
    while frontier := spreading.frontier():
        per_node = settings.k_edges_per_shell.get(spreading.shell + 1, 0) + 1
        if spreading.shell == 0 and first_hop is not None and first_hop.covers(frontier, per_node):
            edges, targets = first_hop.outgoing(frontier)
        else:  # a later shell (or, should rounding ever have left an anchor out, the first)
            edges, targets = await outgoing_edges(session, user_id, frontier, vector, at, per_node,
                                                  space=settings.space)
        for node_id, candidate in targets.items():
            pool.setdefault(node_id, candidate)
        spreading.advance(edges)

    # The turns said around each anchor in the same conversation, what it answers and what answered it: one hop, so
    # not for a quick command (which does not hop). With them, the person's message that each reply of the companion
    # among the best direct hits answers (see `conversation_context`): it ranks with the better of its own match and
    # the reply's, as said by the person. Not for a question about what the companion said: the reply itself is asked
    # for.
    named = named_speakers(query_text, (c.speaker for c in pool.values()))
    if addresses_companion(query_text):
        named |= {ASSISTANT}
    replies = [] if ASSISTANT in named else [node_id for node_id in ranked if pool[node_id].speaker == ASSISTANT][:k]
    context = Context([], []) if depth < 1 else await conversation_context(
        session, user_id, spreading.anchors, replies, vector, at, space=settings.space)
    for _anchor, candidate in [*context.around, *context.answered]:
        pool.setdefault(candidate.node_id, candidate)
    beside_reached = [Reached(c.node_id, 1, (Hop(anchor, c.node_id, (CONVERSATION,), settings.cap),))
                      for anchor, c in context.around]

    def ranked_as(reached: Reached, match: float) -> float:
        candidate = pool[reached.node_id]
        return rank_score(
            match,
            presence_at(candidate.w_abs, candidate.reinforced_at, at, settings.decay_rate),
            settings.cap,
            shell_factor(reached.shell, settings.shell_factors),
            sector_factor(query_sector, candidate.sector, settings),
        ) * speaker_factor(candidate.speaker, named)

    # Each node's best score with how it came (a direct hit, or the route it was reached by); only the k returned
    # are explained.
    best: dict[int, tuple[float, Reached]] = {}
    for node_id in direct:
        best[node_id] = (ranked_as(Reached(node_id, 0), match(node_id)), Reached(node_id, 0))
    for reply, candidate in context.answered:
        score = ranked_as(Reached(candidate.node_id, 0), max(match(reply), match(candidate.node_id)))
        known = best.get(candidate.node_id)
        if known is None or score > known[0]:
            best[candidate.node_id] = (score, Reached(candidate.node_id, 0, (
                Hop(reply, candidate.node_id, (ANSWERED,), settings.cap),)))
    for reached in [*spreading.result(), *beside_reached]:
        if not reached.path:
            continue
        # Activation flows from the anchor along the path, weakened by each edge's strength; a node the
        # query also reaches directly keeps whichever is stronger.
        flowed = match(reached.anchor)
        for hop in reached.path:
            flowed *= min(hop.weight / settings.cap, 1.0)
        score = ranked_as(reached, max(match(reached.node_id), flowed))
        known = best.get(reached.node_id)
        if known is None or score > known[0]:
            best[reached.node_id] = (score, reached)

    # Once its message carries the exchange's match, the reply is the same exchange said again: it ranks one more
    # sector step behind, after the other exchanges the question finds.
    for reply in {reply for reply, _message in context.answered}:
        best[reply] = (best[reply][0] * COMPANION_TURN_FACTOR, best[reply][1])

    def why(reached: Reached) -> str:
        candidate = pool[reached.node_id]
        if reached.path:
            return explain(reached, candidate.vector, candidate.lexical)
        return explain(reached, candidate.vector, candidate.lexical, candidate.in_window,
                       anchor=reached.node_id in spreading.anchors)

    order = sorted(best, key=lambda node_id: (-best[node_id][0], node_id))[:k]

    def recalled(node_id: int) -> Recalled:
        candidate, reached = pool[node_id], best[node_id][1]
        route = (reached.path[0].source, *(hop.target for hop in reached.path)) if reached.path else ()
        through = bool(reached.path) and meant(pool[reached.anchor])
        return Recalled(node_id, candidate.text, round(best[node_id][0], 4), why(reached), candidate.captured_at,
                        candidate.speaker, meant=meant(candidate) or through,
                        vector=candidate.vector, lexical=candidate.lexical or None,
                        in_window=bool(candidate.in_window) and not reached.path, route=route,
                        route_reasons=tuple(hop.reasons for hop in reached.path))

    return [recalled(node_id) for node_id in order]
