"""Crash safety under SIGKILL: the real bot process (`python -m app.cli run` on the fake Telegram Bot API, with its
scheduler and memory promotion) is killed at random moments while several people write to it, restarted each
time, stopped cleanly at the end and checked (tests/reliability/crash.py holds the harness and the invariants).

    python -m benchmarks.crash [--kills 30] [--people 6] [--seed 1]

It starts its own embedded PostgreSQL (benchmarks/_pg.py) and runs the fake Bot API and a fake model server in
this process. Run from the repository root (it imports the fakes from tests/). About 10 s per kill (a restart
of the bot takes 5 to 10 s on 2 cores), plus up to two minutes for the scheduled pushes and the final settling.

Last line: `RESULT crash kills=<n> acknowledged=<writes> lost=<n> doubled=<n> unsent_after_kill=<n>
unsent_arrived=<n> orphans=<n> slots=<due> slots_lost=<n> memory_pending=<n> unanswered=<n> seconds=<s>`;
everything but `acknowledged`, `slots`, `unanswered`, `unsent_after_kill`, `unsent_arrived` and `seconds` must
be 0.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time

from benchmarks._pg import bench_database
from tests.reliability.crash import KINDS, CrashConfig, CrashReport, percentile, run_crashes

DATABASE = "crash_bench"


def table(report: CrashReport) -> str:
    lines = [f"{'kind':<10} {'sent':>6} {'acknowledged':>13}"]
    for kind in KINDS:
        if kind == "nudge":
            continue
        lines.append(f"{kind:<10} {report.sent[kind]:>6} {report.acknowledged[kind]:>13}")
    restarts = report.restart_s[1:]
    lines += [
        f"kills {report.kills}, restarts p50 {percentile(restarts, 0.5):.1f} s, max {max(restarts, default=0):.1f} s; "
        f"{report.seconds:.0f} s in all",
        f"sends {report.sends}, outbox rows {report.outbox_rows} (pending {report.outbox_pending}, failed "
        f"{len(report.outbox_failed)}), nudges {report.nudges}, push slots due {report.slots_due}, proposals "
        f"approved {report.proposals_approved}, short-term memories promoted {report.memory_promoted}",
        f"messages without an answer (taken by a killed process) {report.unanswered}, writes whose answer was "
        f"lost {report.silent_writes}, ERROR lines in the bot's log {report.errors_logged}",
    ]
    for title, found in (("VIOLATION", report.violations), ("in flight at a kill, not resent",
                                                              report.unsent_after_kill),
                         ("failed outbox row", report.outbox_failed)):
        lines += [f"{title}: {item}" for item in found]
    lines.append(f"RESULT crash {report.summary()}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.crash", description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=30, help="SIGKILLs (default 30)")
    parser.add_argument("--people", type=int, default=6, help="people writing at once (default 6)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    args = parser.parse_args(argv)
    if args.kills < 0 or args.people < 1:
        parser.error("--kills must be at least 0 and --people at least 1")

    def progress(line: str) -> None:
        if not args.quiet:
            print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)

    # A kill cuts requests to the fake Bot API short; aiohttp logs each as an error in this process.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    # Push slots spread over the minutes the kills take (about 10 s each), two per person.
    minutes = max(1, min(2 * args.people, args.kills // 6))
    with bench_database(DATABASE, prefix="cbc") as database:
        config = CrashConfig(database.url, kills=args.kills, seed=args.seed, people=args.people, slots=minutes,
                             log=progress)
        report = asyncio.run(run_crashes(config))
    print(table(report))
    return 1 if report.violations else 0


if __name__ == "__main__":
    sys.exit(main())
