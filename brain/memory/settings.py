"""Tuning of the synapse memory in one frozen dataclass: weights, thresholds, tolerances, recall depth.
Defaults are the issue's numbers and, where it is silent, the live values of the facts file; tests
replace single fields (e.g. the worked examples' embedding threshold 0.85) with `dataclasses.replace`."""

from __future__ import annotations

from dataclasses import dataclass, field

from brain.memory.space import DEFAULT_SPACE, VectorSpace


def _layer_factors() -> dict[str, float]:
    # Entity is the strongest evidence that two memories belong together, timeline the weakest.
    return {"entity": 1.0, "embedding": 0.8, "themes": 0.5, "timeline": 0.4}


def _timeline_tolerance() -> dict[str, int]:
    # In the unit of the precision; sub-day precisions are compared in days.
    return {"minute": 7, "hour": 7, "day": 21, "week": 8, "month": 6, "quarter": 4, "year": 2}


def _hops_by_mode() -> dict[str, int]:
    return {"command": 0, "instruction": 1, "chat": 1, "reflection": 2}


def _gravitation_by_mode() -> dict[str, float]:
    # An instruction means what it says: no pull toward goals at all.
    return {"command": 0.05, "instruction": 0.0, "chat": 0.10, "reflection": 0.30}


def _edges_per_shell() -> dict[int, int]:
    return {1: 3, 2: 2, 3: 2}


@dataclass(frozen=True)
class MemorySettings:
    # The embedder's vector space: the memory's own (`Memory` sets it from its embedder, with the cosine thresholds
    # below put on the embedder's scale, see api.calibrated); statements compare vectors of this space only. The
    # thresholds here are for a scale on which unrelated texts sit at 0 (WordLlama).
    space: VectorSpace = DEFAULT_SPACE
    # The cosine of unrelated texts on the scale the thresholds below are set for (0: as written here).
    cosine_floor: float = 0.0

    # Node weights and decay.
    cap: float = 10.0
    damping_exp: float = 0.5
    decay_rate: float = 0.0015  # per day
    min_weight: float = 0.1
    # The daily decay rewrites a node's stored w_decay only when it moved by more than this share (at the default
    # rate about every two weeks), or when the node falls below min_weight. Recall computes the presence itself
    # from w_abs and reinforced_at; rewriting every row every day would re-index each node's vector (none of the
    # updates in place) and double the table.
    decay_write_tolerance: float = 0.02
    reinforcement_boost: float = 0.1
    duplicate_cosine: float = 0.82

    # Usage reinforcement after an answer.
    reinforce_similarity: float = 0.55
    reinforce_max: int = 3

    # Edges.
    pull_up: float = 0.444  # weaker node pulled up toward the stronger one
    pull_down: float = 0.297  # stronger node pulled down toward the weaker one
    layer_bonus: float = 0.1  # per firing layer beyond the first
    layer_factors: dict[str, float] = field(default_factory=_layer_factors)
    embedding_threshold: float = 0.55  # strict ">" for the embedding layer
    timeline_tolerance: dict[str, int] = field(default_factory=_timeline_tolerance)

    # Edge candidates come from indexes only; these bound each index's contribution.
    ann_candidates: int = 32
    entity_candidates: int = 24
    theme_candidates: int = 24
    timeline_candidates: int = 8  # on each side
    max_edge_pairs: int = 16  # per new node, strongest first
    # HNSW search breadth, wider than the build's (brain.memory.space.HNSW_EF_CONSTRUCTION): at 100,000 memories
    # recall finds 0.944 of the exact 10 nearest with 160 (a graph built with 64 searched with 100: 0.950), and the
    # edge candidates 0.852 of the exact 32 nearest with 64 (0.858). With 200 the planner would price the index
    # above an exact scan for a few thousand memories.
    hnsw_ef_search: int = 160  # recall
    # An iterative HNSW scan with a filter stops after this many index tuples: the default, 20,000, makes an empty
    # period in a large memory slow. (A period that holds few memories is now searched exactly instead, see
    # recall.exact_window_limit; this bounds the scan of a wide one, where the filter passes many.)
    hnsw_max_scan_tuples: int = 2000
    promotion_ef_search: int = 64  # edge candidates: only the nearest ann_candidates are needed

    # Promotion queue.
    promotion_maturity_s: float = 0.0  # e.g. 30 in production, so a correction can still land first
    # Entries per transaction: the claim, the lock, the writes and the commit are paid once for all of them; a
    # batch of 256 holds its person's promotion lock for a second or two.
    promotion_batch: int = 256
    # Entries whose candidates are searched in one statement; the next chunk is searched while one is decided.
    promotion_chunk: int = 32
    promotion_max_attempts: int = 5

    # Recall.
    anchors: int = 3
    anchor_min_similarity: float = 0.40
    # A memory found by meaning alone is meant by the query only if it is this much closer to the query than
    # everyday sentences are (`brain.memory.background`), on the embedder's scale from its unrelated cosine to 1:
    # a short query sits close to everything with e5 ("15:00 Mama anrufen" had 0.83 with "Wasser 0,5").
    meant_margin: float = 0.20
    hops_by_mode: dict[str, int] = field(default_factory=_hops_by_mode)
    k_edges_per_shell: dict[int, int] = field(default_factory=_edges_per_shell)
    shell_factors: tuple[float, ...] = (1.0, 0.75, 0.5, 0.25)
    sector_factors: tuple[float, ...] = (1.0, 0.9, 0.8, 0.7, 0.6)
    gravitation_by_mode: dict[str, float] = field(default_factory=_gravitation_by_mode)
    gravitation_threshold: float = 0.40
    default_motivation: float = 0.5

    # Pipeline log.
    log_retention_days: int = 365
    log_flush_interval_s: float = 10.0

    # Semantic facts. A finding with counts of observations gets the lower bound of the share that supports it;
    # the one-sided 95 % bound: at 0.5 or more it is that likely that the pattern holds more often than not.
    fact_evidence_z: float = 1.645
    # A finding without counts (a bare verdict) starts at `fact_initial` and moves by the steps.
    fact_initial: float = 0.3
    fact_confirm_step: float = 0.15
    fact_contradict_step: float = 0.15
    fact_weekly_fade: float = 0.05
    fact_grace_days: int = 30
    fact_delete_below: float = 0.1
    fact_context_min: float = 0.5
