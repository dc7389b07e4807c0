"""A real Synapse homeserver for the Matrix tests: installed once into its own virtualenv under the test
cache (`~/.cache/companion-tests/synapse-<version>`, or $COMPANION_TEST_CACHE) and reused while the version
stays the same; started per test session on 127.0.0.1 and a free port with SQLite, a hand-written config
(relaxed rate limits, bcrypt_rounds 4, no federation) and shared-secret registration."""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import platformdirs

SYNAPSE_VERSION = "1.163.2"
SHARED_SECRET = "companion-test-shared-secret"
RELAXED = {"per_second": 10000, "burst_count": 100000}


def cache_dir() -> Path:
    return Path(os.environ.get("COMPANION_TEST_CACHE") or platformdirs.user_cache_dir("companion-tests"))


@contextlib.contextmanager
def _locked(path: Path) -> Iterator[None]:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # two test runs at once install once
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def ensure_installed(version: str = SYNAPSE_VERSION) -> Path:
    """The Python of a virtualenv with matrix-synapse `version`; installed on first use (with uv, which `make`
    installs beside the tests' Python, in seconds; with pip about a minute)."""
    root = cache_dir()
    venv = root / f"synapse-{version}"
    python = venv / "bin" / "python"
    marker = venv / ".companion-installed"
    if marker.exists() and python.exists():
        return python
    with _locked(root / f"synapse-{version}.lock"):
        if marker.exists() and python.exists():
            return python
        shutil.rmtree(venv, ignore_errors=True)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        uv = Path(sys.executable).with_name("uv")
        install = ([str(uv), "pip", "install", "--quiet", "--python", str(python)] if uv.exists() else
                   [str(python), "-m", "pip", "install", "--quiet", "--disable-pip-version-check"])
        subprocess.run([*install, f"matrix-synapse=={version}"], check=True, timeout=1200)
        marker.write_text(version)
        for old in root.glob("synapse-*"):  # earlier versions are not used any more
            if old.is_dir() and old != venv:
                shutil.rmtree(old, ignore_errors=True)
    return python


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def write_config(directory: Path, port: int) -> Path:
    """homeserver.yaml (JSON is YAML), its log config and a fresh signing key."""
    directory.mkdir(parents=True, exist_ok=True)
    seed = base64.b64encode(secrets.token_bytes(32)).decode().rstrip("=")
    (directory / "signing.key").write_text(f"ed25519 a_test {seed}\n")
    log_config = {
        "version": 1,
        "formatters": {"plain": {"format": "%(asctime)s %(name)s %(levelname)s %(message)s"}},
        "handlers": {"file": {"class": "logging.FileHandler", "formatter": "plain",
                              "filename": str(directory / "homeserver.log")}},
        "root": {"level": "WARNING", "handlers": ["file"]},
        "disable_existing_loggers": False,
    }
    (directory / "log.yaml").write_text(json.dumps(log_config))
    config = {
        "server_name": "localhost",
        "pid_file": str(directory / "homeserver.pid"),
        "listeners": [{"port": port, "bind_addresses": ["127.0.0.1"], "type": "http", "tls": False,
                       "x_forwarded": False, "resources": [{"names": ["client"], "compress": False}]}],
        "database": {"name": "sqlite3", "args": {"database": str(directory / "homeserver.db")}},
        "log_config": str(directory / "log.yaml"),
        "media_store_path": str(directory / "media"),
        "signing_key_path": str(directory / "signing.key"),
        "registration_shared_secret": SHARED_SECRET,
        "macaroon_secret_key": secrets.token_hex(16),
        "form_secret": secrets.token_hex(16),
        "report_stats": False,
        "enable_registration": False,
        "bcrypt_rounds": 4,  # the default 12 costs about 0.25 s per login
        "suppress_key_server_warning": True,
        "trusted_key_servers": [],
        "federation_domain_whitelist": [],
        "presence": {"enabled": False},
        "url_preview_enabled": False,
        # The default limits make nio sleep on 429s: 60 quick sends took minutes instead of a second.
        "rc_message": RELAXED, "rc_registration": RELAXED,
        "rc_login": {"address": RELAXED, "account": RELAXED, "failed_attempts": RELAXED},
        "rc_joins": {"local": RELAXED, "remote": RELAXED}, "rc_joins_per_room": RELAXED,
        "rc_invites": {"per_room": RELAXED, "per_user": RELAXED, "per_issuer": RELAXED},
        "rc_room_creation": RELAXED, "rc_admin_redaction": RELAXED, "rc_3pid_validation": RELAXED,
        "rc_presence": {"per_user": RELAXED}, "rc_delayed_event_mgmt": RELAXED,
        "rc_registration_token_validity": RELAXED,
    }
    path = directory / "homeserver.yaml"
    path.write_text(json.dumps(config, indent=1))
    return path


@dataclass(frozen=True)
class Account:
    user_id: str
    password: str
    access_token: str
    device_id: str


class Synapse:
    def __init__(self, python: Path, directory: Path) -> None:
        self.python = python
        self.directory = directory
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process: subprocess.Popen[bytes] | None = None

    def start(self, timeout_s: float = 90.0) -> None:
        config = write_config(self.directory, self.port)
        output = (self.directory / "stdout.log").open("wb")
        self.process = subprocess.Popen([str(self.python), "-m", "synapse.app.homeserver", "-c", str(config)],
                                        cwd=self.directory, stdout=output, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"Synapse exited with {self.process.returncode}:\n{self.log_tail()}")
            try:
                with urllib.request.urlopen(f"{self.url}/_matrix/client/versions", timeout=2) as reply:
                    if reply.status == 200:
                        return
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                pass
            time.sleep(0.1)  # polling a ready check
        self.stop()
        raise RuntimeError(f"Synapse did not answer within {timeout_s:.0f} s:\n{self.log_tail()}")

    def stop(self) -> None:
        if self.process is None or self.process.poll() is not None:
            return
        self.process.send_signal(signal.SIGTERM)
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=10)

    def log_tail(self, lines: int = 40) -> str:
        text = ""
        for name in ("stdout.log", "homeserver.log"):
            path = self.directory / name
            if path.exists():
                text += "\n".join(path.read_text(errors="replace").splitlines()[-lines:]) + "\n"
        return text

    def register(self, name: str | None = None, *, admin: bool = False) -> Account:
        """A new account by the shared-secret admin API (no registration flow, no rate limit)."""
        name = name or f"u{secrets.token_hex(5)}"
        password = secrets.token_hex(8)
        url = f"{self.url}/_synapse/admin/v1/register"
        with urllib.request.urlopen(url, timeout=10) as reply:
            nonce = json.loads(reply.read())["nonce"]
        mac = hmac.new(SHARED_SECRET.encode(), digestmod=hashlib.sha1)
        mac.update(b"\x00".join([nonce.encode(), name.encode(), password.encode(),
                                 b"admin" if admin else b"notadmin"]))
        body = json.dumps({"nonce": nonce, "username": name, "password": password, "admin": admin,
                           "mac": mac.hexdigest()}).encode()
        request = urllib.request.Request(url, data=body, headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=10) as reply:
            data = json.loads(reply.read())
        return Account(data["user_id"], password, data["access_token"], data["device_id"])
