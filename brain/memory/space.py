"""The vector space of the memory: which embedder made a vector and how long it is. Every stored vector carries
its space's key, so vectors of another embedder are never compared with the query (their cosine would mean
nothing) and a change of embedder is found row by row. Each space has its own partial HNSW index."""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass

from sqlalchemy import text
from sqlalchemy.ext.asyncio import AsyncSession

# Names of the partial HNSW indexes, one per space; the migrations leave the ones made at run time alone.
INDEX_PREFIX = "ix_memory_nodes_hnsw_"
_SLUG = re.compile(r"[^a-z0-9]+")


@dataclass(frozen=True)
class VectorSpace:
    """An embedder's name and the length of its vectors. `key` is what each row stores."""

    name: str
    dim: int

    @property
    def key(self) -> str:
        return f"{self.name}@{self.dim}"

    @property
    def half(self) -> str:
        """The type the space's HNSW index holds its vectors as (half precision)."""
        return f"halfvec({int(self.dim)})"

    @property
    def literal(self) -> str:
        """The key as an SQL literal: statements name it literally so that the planner matches the partial index
        whatever plan it makes (a parameter would hide the value from a generic plan)."""
        return "'" + self.key.replace("'", "''") + "'"

    @property
    def index_name(self) -> str:
        slug = _SLUG.sub("_", self.key.lower()).strip("_")
        digest = hashlib.sha1(self.key.encode()).hexdigest()[:8]
        return f"{INDEX_PREFIX}{slug[:63 - len(INDEX_PREFIX) - 9]}_{digest}"

    def nearest(self, column: str, query: str) -> str:
        """The ORDER BY expression that the space's index answers: both sides cast to half precision."""
        return f"CAST({column} AS {self.half}) <=> CAST(CAST({query} AS vector) AS {self.half})"


# The default embedder (see brain.memory.embedder.E5Embedder); migration 0029 builds its index.
DEFAULT_SPACE = VectorSpace("multilingual-e5-small", 384)
# What every vector written before migration 0029 was made with.
WORDLLAMA_256 = VectorSpace("wordllama", 256)


# How the HNSW graph of a space is built: each node keeps up to HNSW_M neighbours per layer (2 x HNSW_M on the
# bottom one), chosen among the HNSW_EF_CONSTRUCTION nearest that an insert's search keeps. pgvector allows no fewer
# than 2 x HNSW_M. The insert's cost grows with it (at 64 it was the largest part of what promotion costs the
# database server); the coarser graph of 32 is searched a little wider instead (MemorySettings.hnsw_ef_search and
# promotion_ef_search), which finds as many of the true nearest (migration 0045 has the figures).
HNSW_M = 16
HNSW_EF_CONSTRUCTION = 32


def index_ddl(space: VectorSpace) -> str:
    return (f"CREATE INDEX IF NOT EXISTS {space.index_name} ON memory_nodes USING hnsw "
            f"((CAST(embedding AS {space.half})) halfvec_cosine_ops) "
            f"WITH (m = {HNSW_M}, ef_construction = {HNSW_EF_CONSTRUCTION}) "
            f"WHERE embedder = {space.literal}")


async def ensure_index(session: AsyncSession, space: VectorSpace) -> bool:
    """Creates the space's HNSW index if it is missing (the default space's comes with the migrations). Returns
    whether it had to be made."""
    exists = await session.scalar(text("SELECT to_regclass(:name) IS NOT NULL"), {"name": space.index_name})
    if exists:
        return False
    await session.execute(text(index_ddl(space)))
    return True
