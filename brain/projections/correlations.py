"""Which of a person's daily numbers move together across modules: Pearson r with a two-sided p-value
over their recent days, kept when strong (|r| >= 0.3), significant (p < 0.05) and long enough (>= 14
days), each with a translated sentence. Read by the context document and the weekly insight rule."""

from __future__ import annotations

import math
import statistics
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from itertools import combinations
from typing import Literal

from sqlalchemy.ext.asyncio import AsyncSession

from brain.i18n import Percent, Text, tr
from brain.people.models import User
from brain.projections.daily_metrics import METRICS_BY_ID, daily_metrics, metric_modules

MIN_DAYS = 14
MIN_ABS_R = 0.3
MAX_P = 0.05
LOOKBACK_DAYS = 60


@dataclass(frozen=True)
class Correlation:
    metric_a: str
    metric_b: str
    module_a: str
    module_b: str
    r: float
    p: float
    n: int
    direction: Literal["positive", "negative"]
    # How much higher (+) or lower (-) b is, in percent, on days when a is above its median than on the
    # other days; 0 when there is no base (b is 0 on those other days) or the split disagrees with r.
    effect_percent: int
    sentence: Text


def pearson(xs: Sequence[float], ys: Sequence[float]) -> tuple[float, float]:
    """Pearson r and its two-sided p-value: t = r * sqrt((n - 2) / (1 - r^2)) under Student's t with
    n - 2 degrees of freedom. Needs n >= 3 and two non-constant series."""
    n = len(xs)
    if n != len(ys) or n < 3:
        raise ValueError("pearson needs two series of the same length, at least 3 values")
    mean_x, mean_y = math.fsum(xs) / n, math.fsum(ys) / n
    dx = [x - mean_x for x in xs]
    dy = [y - mean_y for y in ys]
    sxx, syy = math.fsum(d * d for d in dx), math.fsum(d * d for d in dy)
    if sxx == 0 or syy == 0:
        raise ValueError("pearson is undefined for a constant series")
    r = math.fsum(a * b for a, b in zip(dx, dy, strict=True)) / math.sqrt(sxx * syy)
    r = max(-1.0, min(1.0, r))
    if abs(r) == 1.0:
        return r, 0.0
    # Imported here, where a correlation is computed: scipy.stats costs every process a second and tens of MB.
    from scipy.stats import t as student_t

    t = r * math.sqrt((n - 2) / (1 - r * r))
    return r, float(2 * student_t.sf(abs(t), n - 2))


def _is_constant(values: Sequence[float]) -> bool:
    return all(v == values[0] for v in values)


def effect_percent(xs: Sequence[float], ys: Sequence[float]) -> int | None:
    """Mean of y on days with x above its median against the other days, in percent of the latter.
    None when y is 0 on the other days. When x is at its median on most days (e.g. usually 0 coffees),
    nothing lies above the median and the split falls back to "at least the median" against below it."""
    median = statistics.median(xs)
    high = [y for x, y in zip(xs, ys, strict=True) if x > median]
    low = [y for x, y in zip(xs, ys, strict=True) if x <= median]
    if not high:
        high = [y for x, y in zip(xs, ys, strict=True) if x >= median]
        low = [y for x, y in zip(xs, ys, strict=True) if x < median]
    if not high or not low:
        return None
    base = statistics.fmean(low)
    if base == 0:
        return None
    return round((statistics.fmean(high) - base) / base * 100)


def consistent_effect(r: float, percent: int | None) -> int:
    """The effect to report: 0 when there is none, or when the median split points the other way than r
    (possible for weak links with outliers), so a sentence never says "more" for a negative r."""
    if percent is None or (percent > 0) != (r > 0):
        return 0
    return percent


def correlation_sentence(label_a: str, label_b: str, r: float, percent: int) -> Text:
    """"On days with more coffee you have less water (−30%)."; with no effect percent (0), the sentence
    names the direction of r only."""
    a, b = tr(label_a), tr(label_b)
    if percent == 0:
        if r > 0:
            return tr("On days with more {a} you have more {b}.", a=a, b=b)
        return tr("On days with more {a} you have less {b}.", a=a, b=b)
    if percent > 0:
        return tr("On days with more {a} you have {percent} more {b}.", a=a, b=b, percent=Percent(percent))
    # The minus stays in the text, as a typographic one; Babel would write a hyphen.
    return tr("On days with more {a} you have less {b} (−{percent}).", a=a, b=b, percent=Percent(-percent))


def correlate(metrics: Mapping[str, Mapping[date, float]], modules: Mapping[str, str]) -> list[Correlation]:
    """Every significant cross-module pair among `metrics` (id -> day -> value), strongest first.
    A pair is compared on the days both series have; labels come from the metric table when known."""
    found: list[Correlation] = []
    for id_a, id_b in combinations(metrics, 2):
        module_a, module_b = modules.get(id_a, id_a), modules.get(id_b, id_b)
        if module_a == module_b:
            continue
        days = sorted(metrics[id_a].keys() & metrics[id_b].keys())
        if len(days) < MIN_DAYS:
            continue
        xs = [float(metrics[id_a][d]) for d in days]
        ys = [float(metrics[id_b][d]) for d in days]
        if _is_constant(xs) or _is_constant(ys):
            continue
        r, p = pearson(xs, ys)
        if abs(r) < MIN_ABS_R or p >= MAX_P:
            continue
        percent = consistent_effect(r, effect_percent(xs, ys))
        label_a = METRICS_BY_ID[id_a].label if id_a in METRICS_BY_ID else id_a
        label_b = METRICS_BY_ID[id_b].label if id_b in METRICS_BY_ID else id_b
        found.append(Correlation(
            metric_a=id_a, metric_b=id_b, module_a=module_a, module_b=module_b, r=r, p=p, n=len(days),
            direction="positive" if r > 0 else "negative", effect_percent=percent,
            sentence=correlation_sentence(label_a, label_b, r, percent),
        ))
    found.sort(key=lambda c: (-abs(c.r), c.metric_a, c.metric_b))
    return found


async def correlations(
    session: AsyncSession, user: User, today: date, lookback_days: int = LOOKBACK_DAYS,
) -> list[Correlation]:
    """Correlations over the `lookback_days` full days before `today` (today is still being lived, its
    numbers are partial), sorted by |r| descending."""
    end = today - timedelta(days=1)
    start = today - timedelta(days=lookback_days)
    metrics = await daily_metrics(session, user, start, end)
    return correlate(_from_first_active_day(metrics), metric_modules())


def _from_first_active_day(metrics: Mapping[str, Mapping[date, float]]) -> dict[str, dict[date, float]]:
    """Drops the days before the person's first logged anything: zero-filled weeks before they started
    would make every pair of modules look correlated (all zero together, then all active together)."""
    active = [day for series in metrics.values() for day, value in series.items() if value]
    if not active:
        return {}
    first = min(active)
    return {metric: {day: v for day, v in series.items() if day >= first} for metric, series in metrics.items()}
