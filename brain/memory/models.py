"""Tables of the synapse memory: short-term entries, nodes, directed edges, entities, semantic facts,
and the pipeline log. Every row carries user_id and every index leads with it, because every query is
per person (user A never sees user B's memory)."""

from __future__ import annotations

import uuid
from datetime import datetime
from typing import Any

from pgvector.sqlalchemy import HALFVEC, Vector
from sqlalchemy import (
    BigInteger,
    Boolean,
    CheckConstraint,
    Computed,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
    cast,
    func,
)
from sqlalchemy import column as sql_column
from sqlalchemy import text as sql_text
from sqlalchemy.dialects.postgresql import ARRAY, JSONB, TSVECTOR, UUID
from sqlalchemy.orm import Mapped, mapped_column

from brain.memory.space import DEFAULT_SPACE, HNSW_EF_CONSTRUCTION, HNSW_M
from brain.names import name_key
from brain.store.base import Base

# The longest vector space key (brain.memory.space.VectorSpace.key) a row can carry.
EMBEDDER_CHARS = 80

# Who said a remembered message: the person ("user") or the companion ("assistant"), the two roles of a chat with the
# companion; a memory may also hold the words of another participant (an imported chat, a benchmark of chats between
# two people), stored under their name (see `capture.speaker_of`), at most SPEAKER_CHARS characters.
SPEAKERS = ("user", "assistant")
ASSISTANT = "assistant"
SPEAKER_CHARS = 64
ENTRY_STATUSES = ("pending", "promoted", "rejected")
PRECISIONS = ("minute", "hour", "day", "week", "month", "quarter", "year")
SECTORS = ("joy", "trust", "fear", "surprise", "sadness", "disgust", "anger", "anticipation")
ENTITY_KINDS = ("person", "place", "thing")
FACT_KINDS = ("pattern", "preference", "relationship", "context")
# Names stored in memory_edges.reasons, in the order the layers are evaluated.
LAYERS = ("entity", "embedding", "themes", "timeline")
# A step of a recalled memory's route that is no edge: the turns said around a memory in the same conversation
# (brain.memory.recall.conversation_context).
CONVERSATION = "conversation"
# ... and the step from a reply of the companion to the person's message it answers (the same function).
ANSWERED = "answered"
# The source key prefix of a memory the person asked for with /remember (the rest is random): a note of its own, said
# in no conversation.
ASKED_FOR = "remember:"
LOG_KINDS = (
    "input", "prompt", "calculation", "switch", "db_write", "output", "error", "remark",
    "span_start", "span_end", "token",
)


def _uuid_array() -> Mapped[list[uuid.UUID]]:
    return mapped_column(ARRAY(UUID(as_uuid=True)), default=list, server_default=sql_text("'{}'"))


def _text_array() -> Mapped[list[str]]:
    return mapped_column(ARRAY(Text), default=list, server_default=sql_text("'{}'"))


def _name_key_of_inserted(context: Any) -> str:
    return name_key(context.get_current_parameters()["name"])


def _user_fk() -> Mapped[uuid.UUID]:
    return mapped_column(ForeignKey("users.id", ondelete="CASCADE"))


class ShortTermEntry(Base):
    """One captured message with its magnet fields, waiting for promotion into a node."""

    __tablename__ = "memory_short_term"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = _user_fk()
    speaker: Mapped[str] = mapped_column(String(SPEAKER_CHARS))
    text: Mapped[str] = mapped_column(Text)
    # Message time, never the capture time. Nullable only so that an entry whose time was missing or
    # unreadable can be kept as 'rejected' evidence instead of being silently given "now".
    at: Mapped[datetime | None] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    # Without a fixed length: vectors of the old and the new embedder live side by side while a change of embedder
    # re-embeds the memories (brain.memory.reembed); `embedder` says whose each one is.
    embedding: Mapped[Any | None] = mapped_column(Vector())
    embedder: Mapped[str | None] = mapped_column(String(EMBEDDER_CHARS))
    entity_ids: Mapped[list[uuid.UUID]] = _uuid_array()
    themes: Mapped[list[str]] = _text_array()
    timeline_start: Mapped[datetime | None] = mapped_column()
    timeline_end: Mapped[datetime | None] = mapped_column()
    timeline_precision: Mapped[str | None] = mapped_column(String(8))
    emotion: Mapped[str | None] = mapped_column(String(16))
    sector: Mapped[str | None] = mapped_column(String(16))
    salience: Mapped[float] = mapped_column(Float, default=0.5, server_default="0.5")
    source_key: Mapped[str | None] = mapped_column(Text)
    status: Mapped[str] = mapped_column(String(10), default="pending", server_default="pending")
    # The node this entry became, or the active node it duplicated; forgetting that node removes the entry.
    node_id: Mapped[int | None] = mapped_column(BigInteger, ForeignKey("memory_nodes.id", ondelete="CASCADE"))
    attempts: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    last_error: Mapped[str | None] = mapped_column(Text)

    __table_args__ = (Index("ix_memory_short_term_user_status_at", "user_id", "status", "at"),)


class MemoryNode(Base):
    """A long-term memory: one promoted entry, with raw, damped and decayed weight. Its rows stay whole in their
    page up to 4 kB (toast_tuple_target, set by migration 0042), so the embedding is read without a TOAST lookup."""

    __tablename__ = "memory_nodes"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[uuid.UUID] = _user_fk()
    # External id (e.g. a benchmark memory id) or the short-term entry id; makes promotion idempotent.
    source_key: Mapped[str] = mapped_column(Text)
    speaker: Mapped[str] = mapped_column(String(SPEAKER_CHARS))
    text: Mapped[str] = mapped_column(Text)
    embedding: Mapped[Any] = mapped_column(Vector())
    # The vector space (embedder and length) of `embedding`, see brain.memory.space.
    embedder: Mapped[str] = mapped_column(String(EMBEDDER_CHARS))
    themes: Mapped[list[str]] = _text_array()
    entity_ids: Mapped[list[uuid.UUID]] = _uuid_array()
    timeline_start: Mapped[datetime | None] = mapped_column()
    timeline_end: Mapped[datetime | None] = mapped_column()
    timeline_precision: Mapped[str | None] = mapped_column(String(8))
    emotion: Mapped[str | None] = mapped_column(String(16))
    sector: Mapped[str | None] = mapped_column(String(16))
    salience: Mapped[float] = mapped_column(Float, default=0.5, server_default="0.5")
    # What a message that reads alike must share to repeat this one (`capture.fact_marks`: numbers, a negation, a
    # question mark); NULL for nodes made before migration 0026, which are compared by embedding alone.
    fact_marks: Mapped[list[str] | None] = mapped_column(ARRAY(Text))
    w_raw: Mapped[float] = mapped_column(Float)
    w_abs: Mapped[float] = mapped_column(Float)
    w_decay: Mapped[float] = mapped_column(Float)
    frequency: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    active: Mapped[bool] = mapped_column(Boolean, default=True, server_default=sql_text("true"))
    captured_at: Mapped[datetime] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    reinforced_at: Mapped[datetime] = mapped_column(server_default=func.now())
    decayed_at: Mapped[datetime] = mapped_column(server_default=func.now())
    # 'simple' keeps words as they are: people mix German and English, one language's stemmer would mangle the other.
    # The words are folded (memory_fold, migration 0030: case, umlauts, accents; see lexicon.FOLD_FROM) and lose their
    # plural endings (memory_stem, migration 0041: the S-stemmer, see recall.stem_word).
    search: Mapped[Any] = mapped_column(
        TSVECTOR, Computed("to_tsvector('simple'::regconfig, memory_stem(memory_fold(text)))", persisted=True))

    __table_args__ = (
        UniqueConstraint("user_id", "source_key"),
        Index("ix_memory_nodes_user_active", "user_id", "active"),
        # (Entity and theme candidates are read from memory_node_entities and memory_node_themes.)
        Index("ix_memory_nodes_user_timeline", "user_id", "timeline_start"),
        # Edge candidates in time need the same precision: without it in the index a year-wide window would
        # filter thousands of day-precision rows.
        Index("ix_memory_nodes_user_precision_timeline", "user_id", "timeline_precision", "timeline_start"),
        Index("ix_memory_nodes_search", "search", postgresql_using="gin"),
        # Approximate index for anchors and edge candidates, one per vector space (the default one's here; another
        # space's is made when an installation changes to it, brain.memory.space.ensure_index). Per-user filtering
        # needs `SET LOCAL hnsw.iterative_scan = relaxed_order` at query time. It holds the embeddings in half
        # precision, which makes inserting and searching cheaper; a statement that wants it orders by
        # `VectorSpace.nearest` and names the space literally. Only the choice of the nearest nodes comes from it:
        # every similarity a statement returns is computed on the full vectors.
        Index(
            DEFAULT_SPACE.index_name, cast(sql_column("embedding"), HALFVEC(DEFAULT_SPACE.dim)).label("half"),
            postgresql_using="hnsw", postgresql_with={"m": HNSW_M, "ef_construction": HNSW_EF_CONSTRUCTION},
            postgresql_ops={"half": "halfvec_cosine_ops"},
            postgresql_where=sql_text(f"embedder = {DEFAULT_SPACE.literal}"),
        ),
    )


class MemoryEdge(Base):
    """A directed edge a -> b; each related pair has two rows with asymmetric weights.

    Edges are a cache derived from their nodes, so they carry no foreign keys (each would be checked on every one
    of the ~32 rows a new node writes): whatever deletes nodes or a person deletes their edges in the same
    transaction. The rows into a node X are the reverse rows of X's outgoing ones, so they are found through the
    primary key too: `a_id = ANY(targets of X) AND b_id = X`. The pair is the key: one row per direction, and no
    surrogate id, whose own index and sequence each of the ~32 rows of a new node paid for (migration 0044)."""

    __tablename__ = "memory_edges"

    # One pair, one row per direction; also the index of a node's outgoing edges (recall's hop, forgetting).
    user_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    a_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    b_id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=False)
    w_raw: Mapped[float] = mapped_column(Float)
    w_abs: Mapped[float] = mapped_column(Float)
    # Frozen at creation: which layers fired and what they shared.
    reasons: Mapped[list[str]] = _text_array()
    shared_entity_ids: Mapped[list[uuid.UUID]] = _uuid_array()
    shared_themes: Mapped[list[str]] = _text_array()
    timeline_days: Mapped[int | None] = mapped_column(Integer)
    cosine_initial: Mapped[float | None] = mapped_column(Float)
    layers: Mapped[int] = mapped_column(Integer, default=1, server_default="1")
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())

    __table_args__ = (CheckConstraint("a_id <> b_id", name="not_self"),)


class MemoryNodeTheme(Base):
    """A node's themes, one row each: the theme candidates of promotion are the newest active nodes sharing a
    theme, read backwards per theme from the primary key. Derived from memory_nodes.themes and, like the edges,
    without foreign keys: it is written with its node and deleted with it."""

    __tablename__ = "memory_node_themes"

    user_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    theme: Mapped[str] = mapped_column(Text, primary_key=True)
    node_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)


class MemoryNodeEntity(Base):
    """A node's entities, one row each: the entity candidates of promotion are the newest active nodes naming an
    entity, read backwards per entity from the primary key, which costs the same for a common and a rare entity.
    Derived from memory_nodes.entity_ids and, like the theme rows, without foreign keys: it is written with its
    node and deleted with it."""

    __tablename__ = "memory_node_entities"

    user_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    entity_id: Mapped[uuid.UUID] = mapped_column(primary_key=True)
    node_id: Mapped[int] = mapped_column(BigInteger, primary_key=True)


class MemoryEntity(Base):
    """A person, place or thing the memory links by; aliases resolve other spellings to it, and `name_key` the
    spellings of its name that differ only in case, accents or umlauts ("Jürgen", "Juergen", "Jurgen")."""

    __tablename__ = "memory_entities"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = _user_fk()
    kind: Mapped[str] = mapped_column(String(8))
    name: Mapped[str] = mapped_column(Text)
    # brain.names.name_key(name), computed in Python on insert (the one fold capture also applies to a message's
    # words); the name is never changed to another key, so an update has nothing to follow.
    name_key: Mapped[str] = mapped_column(Text, default=_name_key_of_inserted)
    aliases: Mapped[list[str]] = _text_array()
    place_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("places.id", ondelete="SET NULL"))
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())

    __table_args__ = (
        Index("uq_memory_entities_user_kind_name", "user_id", "kind", func.lower(sql_text("name")), unique=True),
        # Capture's lookup (`capture.resolve_entities`): by name, and by alias among entities that have any.
        Index("ix_memory_entities_user_name_key", "user_id", "name_key"),
        Index("ix_memory_entities_aliases", "aliases", postgresql_using="gin",
              postgresql_where=sql_text("cardinality(aliases) > 0")),
    )


class MemoryFact(Base):
    """A semantic fact with a confidence that rises on confirmation and falls on contradiction or age."""

    __tablename__ = "memory_facts"

    id: Mapped[uuid.UUID] = mapped_column(primary_key=True, default=uuid.uuid4)
    user_id: Mapped[uuid.UUID] = _user_fk()
    kind: Mapped[str] = mapped_column(String(16))
    key: Mapped[str] = mapped_column(Text)
    statement: Mapped[str] = mapped_column(Text)
    confidence: Mapped[float] = mapped_column(Float)
    confirmations: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    contradictions: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    last_confirmed: Mapped[datetime] = mapped_column()
    created_at: Mapped[datetime] = mapped_column(server_default=func.now())
    source: Mapped[str] = mapped_column(String(32))
    # When an extractor last judged it: keeps a daily job from confirming or contradicting more than weekly.
    checked_at: Mapped[datetime | None] = mapped_column()
    # The fact as the person reads it (a translatable Text as JSON), where the extractor wrote one; else it is said
    # from its key (brain.learning.wording).
    said: Mapped[dict[str, Any] | None] = mapped_column(JSONB)

    __table_args__ = (UniqueConstraint("user_id", "key"),)


class PipelineLogEntry(Base):
    """One row of the pipeline log: what went in, what was computed, decided, written and said."""

    __tablename__ = "pipeline_log"

    id: Mapped[int] = mapped_column(BigInteger, primary_key=True, autoincrement=True)
    user_id: Mapped[uuid.UUID | None] = mapped_column(ForeignKey("users.id", ondelete="CASCADE"))
    turn_id: Mapped[uuid.UUID | None] = mapped_column()
    span_id: Mapped[uuid.UUID | None] = mapped_column()
    parent_span_id: Mapped[uuid.UUID | None] = mapped_column()
    kind: Mapped[str] = mapped_column(String(16))
    name: Mapped[str] = mapped_column(Text)
    content: Mapped[Any | None] = mapped_column(JSONB)
    at: Mapped[datetime] = mapped_column()

    __table_args__ = (
        Index("ix_pipeline_log_user_at", "user_id", "at"),
        Index("ix_pipeline_log_turn_id", "turn_id"),
        Index("ix_pipeline_log_span_id", "span_id"),
    )
