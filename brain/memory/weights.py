"""The arithmetic of the synapse memory, pure and synchronous: damping, decay, half reactivation, the four
edge layers with their depth factors, layer bonus and the sine geometry that makes edges asymmetric.
The promotion job and recall call these; the unit tests pin them to the concept's worked examples."""

from __future__ import annotations

import math
import uuid
from collections.abc import Sequence
from datetime import datetime
from typing import NamedTuple

from brain.memory.models import SECTORS
from brain.memory.settings import MemorySettings

DEFAULTS = MemorySettings()

# An entity as the layers compare it: its uuid, or the uuid's text where many rows are read in bulk (hashing a
# string is cheaper). Only equality matters; the two magnet fields compared must use the same form.
EntityKey = uuid.UUID | str

# Days per unit of each precision, to turn a calendar distance into the precision's own unit.
UNIT_DAYS = {"minute": 1.0, "hour": 1.0, "day": 1.0, "week": 7.0, "month": 30.4375, "quarter": 91.3125,
             "year": 365.25}


def damp(raw: float, cap: float = DEFAULTS.cap, exponent: float = DEFAULTS.damping_exp) -> float:
    """`cap * sin(min(raw / cap, 1) * pi/2) ** exponent`: grows fast at first, never beyond `cap`."""
    if raw <= 0:
        return 0.0
    return cap * math.sin(min(raw / cap, 1.0) * math.pi / 2) ** exponent


def reinforced(w_raw: float, settings: MemorySettings = DEFAULTS) -> tuple[float, float]:
    """New (w_raw, w_abs) after one use in an answer; w_decay is then reset to w_abs by the caller."""
    raw = w_raw + settings.reinforcement_boost
    return raw, damp(raw, settings.cap, settings.damping_exp)


def decayed(w_abs: float, days: float, rate: float = DEFAULTS.decay_rate) -> float:
    """Presence after `days` without reinforcement; the anchor strength w_abs itself never decays."""
    return w_abs * math.exp(-rate * max(days, 0.0))


def half_reactivated(w_abs: float, min_weight: float = DEFAULTS.min_weight) -> float:
    """w_decay of an inactive node touched again by a write: halfway between its strength and the floor."""
    return (w_abs + min_weight) / 2


def entity_depth(a: Sequence[EntityKey], b: Sequence[EntityKey]) -> tuple[float, list[EntityKey]]:
    """One shared entity is enough and counts fully (the layer is binary)."""
    if not a or not b:
        return 0.0, []
    others = set(b)
    shared = [e for e in dict.fromkeys(a) if e in others]
    return (1.0 if shared else 0.0), shared


def embedding_depth(cosine: float, threshold: float) -> float:
    """Position of the cosine between the threshold and 1, clamped to [0, 1]."""
    if threshold >= 1.0:
        return 0.0
    return min(max((cosine - threshold) / (1.0 - threshold), 0.0), 1.0)


def themes_depth(a: Sequence[str], b: Sequence[str]) -> tuple[float, list[str]]:
    """Shared themes over the larger theme list: breadth is penalised (1 of 10 shared -> 0.1)."""
    b_set = set(b)
    shared = [t for t in dict.fromkeys(a) if t in b_set]
    if not shared:
        return 0.0, []
    return len(shared) / max(len(set(a)), len(b_set)), shared


def timeline_distance(a: datetime, b: datetime, precision: str) -> int:
    """Distance between two anchors in the unit of their precision (sub-day precisions count in days)."""
    days = abs((b - a).total_seconds()) / 86400
    return round(days / UNIT_DAYS[precision])


def timeline_depth(
    a_start: datetime | None, a_precision: str | None, b_start: datetime | None, b_precision: str | None,
    tolerance: dict[str, int],
) -> tuple[float, int | None]:
    """(depth, distance) if the layer fires, else (0.0, None). Precision must match exactly: a minute and
    a day never link. At distance == tolerance the layer still fires with depth 0 (it only adds bonus)."""
    if a_start is None or b_start is None or a_precision is None or a_precision != b_precision:
        return 0.0, None
    limit = tolerance.get(a_precision)
    if not limit:
        return 0.0, None
    distance = timeline_distance(a_start, b_start, a_precision)
    if distance > limit:
        return 0.0, None
    return (limit - distance) / limit, distance


def timeline_window_days(precision: str, tolerance: dict[str, int]) -> float:
    """Half-width in days of the window of timeline candidates for an anchor of this precision."""
    return (tolerance.get(precision, 0) + 0.5) * UNIT_DAYS[precision]


def layer_bonus(layers: int, per_layer: float = DEFAULTS.layer_bonus) -> float:
    return per_layer * max(layers - 1, 0)


class LayerHit(NamedTuple):
    """One firing layer of a pair. Named tuples here and below: promotion compares a few hundred pairs per
    second, and a tuple is made several times faster than a frozen dataclass."""

    layer: str  # one of models.LAYERS
    depth: float


class MagnetFields(NamedTuple):
    """What the layers compare: the frozen magnet fields of a node (or of an entry about to become one). A named
    tuple, made cheaply for every candidate node of a promotion."""

    entity_ids: Sequence[EntityKey]
    themes: Sequence[str]
    timeline_start: datetime | None
    timeline_precision: str | None


class LayerComparison(NamedTuple):
    hits: tuple[LayerHit, ...]
    shared_entity_ids: list[EntityKey]
    shared_themes: list[str]
    timeline_days: int | None
    cosine: float

    @property
    def reasons(self) -> list[str]:
        return [hit.layer for hit in self.hits]


def compare_layers(
    new: MagnetFields, old: MagnetFields, cosine: float, settings: MemorySettings = DEFAULTS
) -> LayerComparison | None:
    """Evaluates all four layers (no short-circuit, so the bonus counts every one); None if none fires."""
    hits: list[LayerHit] = []
    depth, shared_entities = entity_depth(new.entity_ids, old.entity_ids)
    if shared_entities:
        hits.append(LayerHit("entity", depth))
    if cosine > settings.embedding_threshold:
        hits.append(LayerHit("embedding", embedding_depth(cosine, settings.embedding_threshold)))
    depth, shared_themes = themes_depth(new.themes, old.themes)
    if shared_themes:
        hits.append(LayerHit("themes", depth))
    depth, distance = timeline_depth(new.timeline_start, new.timeline_precision, old.timeline_start,
                                     old.timeline_precision, settings.timeline_tolerance)
    timeline_days: int | None = None
    if distance is not None:
        hits.append(LayerHit("timeline", depth))
        assert new.timeline_start is not None and old.timeline_start is not None
        timeline_days = round(abs((new.timeline_start - old.timeline_start).total_seconds()) / 86400)
    if not hits:
        return None
    return LayerComparison(tuple(hits), shared_entities, shared_themes, timeline_days, cosine)


class EdgeWeights(NamedTuple):
    """Both directions of one pair, before (raw) and after damping."""

    a_to_b_raw: float
    b_to_a_raw: float
    a_to_b: float
    b_to_a: float
    winner: str
    depth: float
    bonus: float


def sine_pull(weak: float, strong: float, settings: MemorySettings = DEFAULTS) -> tuple[float, float]:
    """(toward the strong node, toward the weak node): the weak one is pulled up a lot, the strong one down a
    little, read on a sine at a quarter of the way; equal strengths give equal values."""
    span = strong - weak
    return weak + span * settings.pull_up, strong - span * settings.pull_down


def edge_weights(
    a_abs: float, b_abs: float, hits: Sequence[LayerHit], settings: MemorySettings = DEFAULTS
) -> EdgeWeights | None:
    """Edge strength per §7.5: the winning layer (largest layer factor) sets factor and depth, every further
    layer adds bonus, the sine geometry is anchored at the weaker node, damping comes last."""
    if not hits:
        return None
    factors = settings.layer_factors
    winner = max(hits, key=lambda hit: factors[hit.layer])
    factor = factors[winner.layer]
    bonus = layer_bonus(len(hits), settings.layer_bonus)
    a_enriched = a_abs * factor + bonus
    b_enriched = b_abs * factor + bonus
    weak, strong = min(a_enriched, b_enriched), max(a_enriched, b_enriched)
    toward_strong, toward_weak = sine_pull(weak, strong, settings)
    weak_to_strong = weak + (toward_strong - weak) * winner.depth
    strong_to_weak = weak + (toward_weak - weak) * winner.depth
    if a_enriched <= b_enriched:
        a_to_b, b_to_a = weak_to_strong, strong_to_weak
    else:
        a_to_b, b_to_a = strong_to_weak, weak_to_strong
    return EdgeWeights(
        a_to_b_raw=a_to_b, b_to_a_raw=b_to_a,
        a_to_b=damp(a_to_b, settings.cap, settings.damping_exp),
        b_to_a=damp(b_to_a, settings.cap, settings.damping_exp),
        winner=winner.layer, depth=winner.depth, bonus=bonus,
    )


def sector_distance(a: str | None, b: str | None) -> int | None:
    """Steps between two Plutchik sectors on the wheel of eight (0..4); None if either is unknown/neutral."""
    if a is None or b is None or a not in SECTORS or b not in SECTORS:
        return None
    d = abs(SECTORS.index(a) - SECTORS.index(b))
    return min(d, len(SECTORS) - d)


def sector_factor(a: str | None, b: str | None, settings: MemorySettings = DEFAULTS) -> float:
    distance = sector_distance(a, b)
    return 1.0 if distance is None else settings.sector_factors[distance]


def pair_strengths(
    new: MagnetFields, w_new: float, olds: Sequence[MagnetFields], w_olds: Sequence[float], cosines: Sequence[float],
    settings: MemorySettings = DEFAULTS,
) -> list[float | None]:
    """For each earlier node, the strength of the pair it would form with a new node: the larger damped
    direction of `edge_weights` over the layers `compare_layers` finds, or None where no layer fires. The same
    arithmetic as those two, in the same order of operations, without building their records, so promotion can
    rank every candidate and build full edge rows only for the strongest few; a unit test pins both paths
    together."""
    # A loop over plain floats: a new node has a few dozen candidates, too few for array arithmetic to pay for
    # itself. The operations and their order are those of `compare_layers` and `edge_weights`.
    entities = set(new.entity_ids)
    themes = set(new.themes)
    new_start, new_precision = new.timeline_start, new.timeline_precision
    tolerance = settings.timeline_tolerance
    threshold = settings.embedding_threshold
    factors = settings.layer_factors
    entity_factor, embedding_factor = factors["entity"], factors["embedding"]
    themes_factor, timeline_factor = factors["themes"], factors["timeline"]
    per_layer, pull_up, pull_down = settings.layer_bonus, settings.pull_up, settings.pull_down
    cap, exponent = settings.cap, settings.damping_exp
    strengths: list[float | None] = []
    for old, w_old, cosine in zip(olds, w_olds, cosines, strict=True):
        # The winner is the firing layer with the largest factor, the first of equals in the order of
        # `compare_layers` (entity, embedding, themes, timeline), as `max` picks it in `edge_weights`.
        hits = 0
        factor = depth = 0.0
        if entities and not entities.isdisjoint(old.entity_ids):
            hits, factor, depth = 1, entity_factor, 1.0
        if cosine > threshold:
            hits += 1
            if hits == 1 or embedding_factor > factor:
                factor, depth = embedding_factor, embedding_depth(cosine, threshold)
        if themes and old.themes:
            old_themes = set(old.themes)
            shared = len(themes & old_themes)
            if shared:
                hits += 1
                if hits == 1 or themes_factor > factor:
                    factor, depth = themes_factor, shared / max(len(themes), len(old_themes))
        if new_precision is not None and old.timeline_precision == new_precision:
            in_time, distance = timeline_depth(new_start, new_precision, old.timeline_start, new_precision,
                                               tolerance)
            if distance is not None:
                hits += 1
                if hits == 1 or timeline_factor > factor:
                    factor, depth = timeline_factor, in_time
        if not hits:
            strengths.append(None)
            continue
        bonus = per_layer * max(hits - 1, 0)
        a_enriched = w_new * factor + bonus
        b_enriched = w_old * factor + bonus
        weak, strong = min(a_enriched, b_enriched), max(a_enriched, b_enriched)
        span = strong - weak
        toward_strong, toward_weak = weak + span * pull_up, strong - span * pull_down
        larger = max(weak + (toward_strong - weak) * depth, weak + (toward_weak - weak) * depth)
        # Damping is monotonic, so the larger damped direction is the damped larger one.
        strengths.append(damp(larger, cap, exponent))
    return strengths
