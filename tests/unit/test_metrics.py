"""The counters of bot.metrics as the scheduler and the model client feed them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

from apscheduler.events import EVENT_JOB_SUBMITTED, JobSubmissionEvent
from prometheus_client import REGISTRY

from bot.metrics import model_called
from bot.scheduler import note_lag


def sample(name: str, **labels: str) -> float:
    return REGISTRY.get_sample_value(name, labels) or 0.0


def test_a_job_started_late_is_counted_with_its_lag() -> None:
    before = (sample("companion_scheduler_lag_seconds_count", job="pushes"),
              sample("companion_scheduler_lag_seconds_sum", job="pushes"))
    due = datetime.now(UTC) - timedelta(seconds=30)
    note_lag(JobSubmissionEvent(EVENT_JOB_SUBMITTED, "pushes", "default", [due - timedelta(minutes=1), due]))
    assert sample("companion_scheduler_lag_seconds_count", job="pushes") == before[0] + 1
    # The latest due time counts (coalesced runs are one run): about 30 s late, not 90.
    assert 30 <= sample("companion_scheduler_lag_seconds_sum", job="pushes") - before[1] < 60


def test_a_failed_model_call_counts_as_an_error_and_its_time() -> None:
    errors = sample("companion_model_call_errors_total", tier="primary")
    calls = sample("companion_model_call_seconds_count", tier="primary")
    model_called("primary", 1.5, True)
    model_called("primary", 0.2, False)
    assert sample("companion_model_call_errors_total", tier="primary") == errors + 1
    assert sample("companion_model_call_seconds_count", tier="primary") == calls + 2
