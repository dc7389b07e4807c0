"""Crash safety under SIGKILL: the real bot process (`python -m app.cli run` on the fake Telegram Bot API, with its
scheduler and memory promotion) is killed at random moments while several people write to it, restarted each
time, stopped cleanly at the end and checked (tests/reliability/crash.py holds the harness and the invariants).

    python -m benchmarks.crash [--kills 30] [--people 6] [--seed 1] [--push-minutes N] [--without-memory-traffic]
        [--quick] [--database-url URL]

It starts its own embedded PostgreSQL (benchmarks/_pg.py) and runs the fake Bot API and a fake model server in
this process. Run from the repository root (it imports the fakes from tests/). Each kill costs a restart of the
whole bot; the scheduled pushes and the final settling add up to two minutes, as the pushes fall due at whole
minutes, and the memory's promotion runs once a minute. `--quick` (one kill, two people) sets no pushes and sends
nothing the memory captures, so it need not wait for a minute to come.

Last line: `RESULT kills=<n> acknowledged=<writes> lost=<n> doubled=<n> unsent_after_kill=<n>
unsent_arrived=<n> orphans=<n> slots=<due> slots_lost=<n> memory_pending=<n> unanswered=<n> seconds=<s>
baseline=<acknowledged writes> ratio=<share of them found in the database>`; everything but `acknowledged`,
`slots`, `unanswered`, `unsent_after_kill`, `unsent_arrived`, `seconds` and `baseline` must be 0, and `ratio` 1.
The exit code is 1 if an invariant was violated.
"""

from __future__ import annotations

import argparse
import asyncio
import logging
import sys
import time

from benchmarks._options import add_common_options, parse_sizes
from benchmarks._pg import bench_database
from tests.reliability.crash import KINDS, REMEMBERED_KINDS, CrashConfig, CrashReport, percentile, run_crashes

DATABASE = "crash_bench"
QUICK = {"kills": 1, "people": 2, "push_minutes": 0, "without_memory_traffic": True}


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
    acknowledged = sum(report.acknowledged.values())
    kept = (acknowledged - len(report.lost)) / acknowledged if acknowledged else float("nan")
    lines.append(f"RESULT {report.summary()} baseline={acknowledged} ratio={kept:.2f}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.crash", description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=30, help="SIGKILLs (default 30)")
    parser.add_argument("--people", type=int, default=6, help="people writing at once (default 6)")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--push-minutes", type=int, default=None,
                        help="minutes the morning and evening pushes are spread over (default: one per six kills, "
                             "at most two per person; 0: no pushes)")
    parser.add_argument("--without-memory-traffic", action="store_true",
                        help="no /remember and no free text: nothing waits for the memory's next promotion minute")
    parser.add_argument("--quiet", action="store_true", help="no progress lines")
    add_common_options(parser)
    args = parse_sizes(parser, argv, QUICK)
    if args.kills < 0 or args.people < 1 or (args.push_minutes or 0) < 0:
        parser.error("--kills and --push-minutes must be at least 0 and --people at least 1")

    def progress(line: str) -> None:
        if not args.quiet:
            print(f"{time.strftime('%H:%M:%S')} {line}", file=sys.stderr, flush=True)

    # A kill cuts requests to the fake Bot API short; aiohttp logs each as an error in this process.
    logging.getLogger("aiohttp.server").setLevel(logging.CRITICAL)
    # Push slots spread over the minutes the kills take, at most two per person (a morning and an evening push).
    minutes = max(1, min(2 * args.people, args.kills // 6)) if args.push_minutes is None else args.push_minutes
    with bench_database(DATABASE, prefix="cbc", url=args.database_url) as database:
        kinds = tuple(k for k in KINDS if not (args.without_memory_traffic and k in REMEMBERED_KINDS))
        config = CrashConfig(database.url, kills=args.kills, seed=args.seed, people=args.people, slots=minutes,
                             kinds=kinds, log=progress)
        report = asyncio.run(run_crashes(config))
    print(table(report))
    return 1 if report.violations else 0


if __name__ == "__main__":
    sys.exit(main())
