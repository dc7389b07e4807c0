"""Every benchmark runs end to end at its quick size (`python -m benchmarks.<name> --quick`) on a database of the test
server and ends with a well-formed RESULT line, so a change elsewhere cannot leave a benchmark broken unnoticed. The
figures of a quick run mean nothing; that it runs, does."""

from __future__ import annotations

import math
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
BENCHMARKS = ("companion", "crash", "events", "load", "memory_recall", "memory_scale", "pulse", "reminders",
              "scheduler", "telegram_load", "voice")
# A quick run takes seconds; the limit only stops one that hangs or has grown, with room for a busy machine.
TIMEOUT_S = 120


def parse_result(line: str) -> dict[str, float]:
    """The figures of a `RESULT <metric>=<value> ... baseline=<value> ratio=<value>` line; ValueError if the line is
    not one, if a value is not a finite number, or if baseline, ratio or a metric besides them is missing."""
    word, *pairs = line.split()
    if word != "RESULT" or not pairs:
        raise ValueError(f"not a RESULT line: {line!r}")
    figures: dict[str, float] = {}
    for pair in pairs:
        name, equals, value = pair.partition("=")
        if not name or not equals or name in figures:
            raise ValueError(f"{pair!r} is not one name=value pair in {line!r}")
        figures[name] = float(value)
        if not math.isfinite(figures[name]):
            raise ValueError(f"{pair!r} is not a finite number in {line!r}")
    if not {"baseline", "ratio"} <= figures.keys() or len(figures) < 3:
        raise ValueError(f"a metric, baseline and ratio expected in {line!r}")
    return figures


def test_a_result_line_gives_its_figures() -> None:
    assert parse_result("RESULT events_per_s=494.7 baseline=637.7 ratio=1.29") == {
        "events_per_s": 494.7, "baseline": 637.7, "ratio": 1.29}


@pytest.mark.parametrize("line", [
    "events_per_s=1 baseline=1 ratio=1",  # no RESULT
    "RESULT crash kills=1 baseline=1 ratio=1",  # a word that is no pair
    "RESULT enqueue_s=2.0 baseline_s=1.1 ratio=1.74",  # no baseline
    "RESULT x=1 baseline=2",  # no ratio
    "RESULT baseline=1 ratio=1",  # no metric
    "RESULT x=1 baseline=nan ratio=1",
    "RESULT x=fast baseline=1 ratio=1",
    "RESULT x=1 x=2 baseline=1 ratio=1",
])
def test_a_malformed_result_line_is_refused(line: str) -> None:
    with pytest.raises(ValueError):
        parse_result(line)


def test_the_benchmarks_readme_is_a_short_reference_that_names_every_benchmark() -> None:
    """benchmarks/README.md says per benchmark what it measures, its command, target and latest figures, in at most
    300 lines; the history of attempts lives in git."""
    readme = (ROOT / "benchmarks" / "README.md").read_text()
    assert len(readme.splitlines()) <= 300
    sections = {line.removeprefix("## ").split(":")[0] for line in readme.splitlines() if line.startswith("## ")}
    assert set(BENCHMARKS) <= sections


def test_every_benchmark_module_is_run_quick() -> None:
    modules = {path.stem for path in (ROOT / "benchmarks").glob("*.py") if not path.stem.startswith("_")}
    assert modules == set(BENCHMARKS), "add a new benchmark to BENCHMARKS (and give it --quick)"


@pytest.mark.slow
@pytest.mark.parametrize("name", BENCHMARKS)
def test_benchmark_runs_quick_and_ends_with_a_result_line(name: str, fresh_database_url: str) -> None:
    done = subprocess.run([sys.executable, "-m", f"benchmarks.{name}", "--quick", "--database-url", fresh_database_url],
                          cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S)
    output = f"stdout:\n{done.stdout[-3000:]}\nstderr:\n{done.stderr[-3000:]}"
    assert done.returncode == 0, output
    lines = done.stdout.strip().splitlines()
    assert len(lines) > 1, output  # the table before the RESULT line
    parse_result(lines[-1])
