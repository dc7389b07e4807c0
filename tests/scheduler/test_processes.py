"""Real scheduler processes (`python -m app.scheduler`) on one real PostgreSQL database: two of them run each job
once, and when the leader is killed (SIGKILL, holding the lock) the other takes over within seconds with nothing
lost or run twice. The jobs are one-off probes added to the shared job store; each appends a line when it runs."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from apscheduler.jobstores.sqlalchemy import SQLAlchemyJobStore
from apscheduler.schedulers.background import BackgroundScheduler

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
LEADS = "this process leads now"
STARTED = "Scheduler started"
# Deadlines, not expectations: a process imports the app and migrates before it starts, which takes many times
# longer on a loaded machine than on an idle one.
START_S = 120.0
RUN_S = 60.0


class Process:
    def __init__(self, name: str, database_url: str, tmp: Path) -> None:
        self.log = tmp / f"{name}.log"
        env = {**os.environ, "DATABASE_URL": database_url, "LOG_LEVEL": "INFO", "SCHEDULER_LOCK_POLL_SECONDS": "0.5",
               "COMPANION_LLM": "false", "PYTHONUNBUFFERED": "1"}
        with self.log.open("w") as out:
            self.popen = subprocess.Popen([sys.executable, "-m", "app.scheduler"], cwd=ROOT, env=env, stdout=out,
                                          stderr=subprocess.STDOUT)

    @property
    def pid(self) -> int:
        return self.popen.pid

    def says(self, text: str) -> bool:
        return text in self.log.read_text(errors="replace")

    def stop(self) -> int:
        if self.popen.poll() is None:
            self.popen.send_signal(signal.SIGTERM)
        try:
            return self.popen.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.popen.kill()
            return self.popen.wait()


def wait_for(condition, timeout: float, what: str) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.1)


def add_probes(database_url: str, path: Path, count: int, first_in: float) -> None:
    """One-off jobs at 1 s intervals, written to the shared store by a paused scheduler of this process."""
    aps = BackgroundScheduler(jobstores={"default": SQLAlchemyJobStore(url=database_url)}, timezone="UTC")
    aps.start(paused=True)
    start = datetime.now(UTC) + timedelta(seconds=first_in)
    for n in range(count):
        aps.add_job("tests.scheduler.probe:record", "date", run_date=start + timedelta(seconds=n), args=[str(path), n],
                    id=f"probe-{n}", misfire_grace_time=None, replace_existing=True)
    aps.shutdown(wait=False)


def records(path: Path) -> list[tuple[int, int, float]]:
    if not path.exists():
        return []
    rows = []
    for line in path.read_text().splitlines():
        pid, n, at = line.split()
        rows.append((int(pid), int(n), float(at)))
    return rows


@pytest.fixture
def processes(database_url: str, tmp_path: Path) -> Iterator[list[Process]]:
    started: list[Process] = []
    yield started
    for process in started:
        process.stop()


def test_two_scheduler_processes_run_each_job_once(database_url: str, tmp_path: Path, processes: list[Process]) -> None:
    a = Process("a", database_url, tmp_path)
    b = Process("b", database_url, tmp_path)
    processes += [a, b]
    wait_for(lambda: a.says(STARTED) and b.says(STARTED) and (a.says(LEADS) or b.says(LEADS)), START_S, "both started")
    probe = tmp_path / "probe.txt"
    add_probes(database_url, probe, count=8, first_in=1.0)
    wait_for(lambda: len(records(probe)) >= 8, RUN_S, "every probe to run")
    time.sleep(1.0)  # a second run of any of them would show up by now
    rows = records(probe)
    assert sorted(n for _, n, _ in rows) == list(range(8))
    leader = a if a.says(LEADS) else b
    assert {pid for pid, _, _ in rows} == {leader.pid}
    assert not (a.says(LEADS) and b.says(LEADS))
    assert a.stop() == 0 and b.stop() == 0


def test_a_killed_leader_hands_over_and_nothing_is_lost_or_doubled(
        database_url: str, tmp_path: Path, processes: list[Process]) -> None:
    a = Process("a", database_url, tmp_path)
    b = Process("b", database_url, tmp_path)
    processes += [a, b]
    wait_for(lambda: a.says(STARTED) and b.says(STARTED) and (a.says(LEADS) or b.says(LEADS)), START_S, "both started")
    leader, standby = (a, b) if a.says(LEADS) else (b, a)
    probe = tmp_path / "probe.txt"
    add_probes(database_url, probe, count=10, first_in=1.0)
    wait_for(lambda: any(n == 2 for _, n, _ in records(probe)), RUN_S, "the leader to run three probes")
    leader.popen.kill()  # SIGKILL while it holds the lock: no clean shutdown, no unlock
    killed_at = time.time()
    leader.popen.wait()
    wait_for(lambda: len(records(probe)) >= 10, RUN_S, "the stand-by to run the rest")
    time.sleep(1.0)
    rows = records(probe)
    assert sorted(n for _, n, _ in rows) == list(range(10))  # nothing lost, nothing twice
    assert {pid for pid, _, _ in rows} == {leader.pid, standby.pid}
    assert all(pid == leader.pid for pid, n, _ in rows if n <= 2)
    assert standby.says(LEADS)
    took_over = min(at for pid, _, at in rows if pid == standby.pid)
    assert took_over - killed_at < 5.0  # the hand-over took seconds
    assert standby.stop() == 0
