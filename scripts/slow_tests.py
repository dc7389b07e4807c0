"""Writes tests/slow_tests.txt, the tests that `make test-fast` leaves out, from the timings of a run.

    SLOW_LIST=off .venv/bin/python -m pytest -q -n 2 -m "not slow" --durations=0 > durations.log
    .venv/bin/python scripts/slow_tests.py durations.log [--over 0.2]

A test function is slow when one of its cases takes longer than `--over` seconds on average (setup, call and
teardown together; the cases of a parametrized test count together). SLOW_LIST=off times the listed tests again;
the tests marked slow in their file, or on a server of their own, are not in the timings and stay slow. Run it on a
quiet machine after the suite changed: the list only decides what the quick loop runs; CI runs everything."""

from __future__ import annotations

import argparse
import re
from collections import defaultdict
from pathlib import Path

LIST = Path(__file__).resolve().parent.parent / "tests" / "slow_tests.txt"
TIMING = re.compile(r"([\d.]+)s (?:setup|call|teardown)\s+(\S+)")
HEADER = """\
# Test functions that `make test-fast` leaves out: one of their cases takes longer than {over} s on 2 cores (measured
# with --durations=0 and written by scripts/slow_tests.py). tests/conftest.py marks them slow; CI runs them all.
"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("log", type=Path, help="the output of a pytest run with --durations=0")
    parser.add_argument("--over", type=float, default=0.2, help="seconds per case above which a test is slow")
    args = parser.parse_args()
    cases: dict[str, float] = defaultdict(float)
    for line in args.log.read_text().splitlines():
        match = TIMING.match(line)
        if match:
            cases[match[2]] += float(match[1])
    per_function: dict[str, list[float]] = defaultdict(list)
    for nodeid, seconds in cases.items():
        per_function[nodeid.split("[", 1)[0]].append(seconds)
    # A case that took less than 5 ms is not in the log at all; it counts as 0 s, which keeps it fast.
    slow = sorted(name for name, times in per_function.items() if sum(times) / len(times) > args.over)
    LIST.write_text(HEADER.format(over=args.over) + "".join(f"{name}\n" for name in slow))
    print(f"{len(slow)} slow test functions written to {LIST}")


if __name__ == "__main__":
    main()
