"""The bot's Matrix login, kept across restarts in the data directory (`matrix/session.json`, mode 0600):
the device id (one device for the bot's whole life, which end-to-end encryption needs), the access token
a password login produced, and the sync token, so a restart continues where the last sync ended instead
of answering old messages again."""

from __future__ import annotations

import json
import logging
import os
from dataclasses import asdict, dataclass, replace
from pathlib import Path

from nio import AsyncClient, LoginError, WhoamiError, WhoamiResponse

from bot.settings import ConfigurationError

log = logging.getLogger(__name__)

DEVICE_NAME = "Companion"


class MatrixLoginError(ConfigurationError):
    """The bot could not log in; the message says which setting to check."""


@dataclass(frozen=True)
class SavedSession:
    homeserver: str
    user_id: str
    device_id: str | None = None
    access_token: str | None = None  # only from a password login; a configured token is never written
    next_batch: str | None = None


class SessionFile:
    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, homeserver: str, user_id: str) -> SavedSession:
        """The saved session of this account on this homeserver, or an empty one."""
        try:
            data = json.loads(self.path.read_text())
            saved = SavedSession(**{k: data.get(k) for k in SavedSession.__dataclass_fields__})
        except FileNotFoundError:
            return SavedSession(homeserver, user_id)
        except (ValueError, TypeError):
            log.warning("ignoring an unreadable %s", self.path)
            return SavedSession(homeserver, user_id)
        if (saved.homeserver, saved.user_id) != (homeserver, user_id):
            return SavedSession(homeserver, user_id)  # another account: its device and token are not ours
        return saved

    def save(self, session: SavedSession) -> None:
        """Atomic write (a crash leaves the old file or the new one), readable by the owner only."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        tmp = self.path.with_suffix(".tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as out:
            json.dump(asdict(session), out)
        os.replace(tmp, self.path)


async def log_in(client: AsyncClient, saved: SavedSession, *, password: str | None,
                 access_token: str | None) -> SavedSession:
    """Log `client` in: a configured access token first, then the saved token of an earlier password login,
    then the password (keeping the saved device id, so the bot stays one device). Returns what to save."""
    user_id = saved.user_id
    if access_token:
        client.access_token = access_token
        who = await client.whoami()
        if not isinstance(who, WhoamiResponse):
            raise MatrixLoginError(f"MATRIX_ACCESS_TOKEN was refused by the homeserver: {_reason(who)}")
        if who.user_id != user_id:
            raise MatrixLoginError(f"MATRIX_ACCESS_TOKEN belongs to {who.user_id}, not MATRIX_USER_ID {user_id}")
        device_id = who.device_id or saved.device_id
        if device_id is None:
            raise MatrixLoginError("the homeserver did not say which device MATRIX_ACCESS_TOKEN belongs to")
        client.restore_login(user_id, device_id, access_token)
        return replace(saved, device_id=device_id, access_token=None)
    if saved.access_token and saved.device_id:
        client.access_token = saved.access_token
        who = await client.whoami()
        if isinstance(who, WhoamiResponse) and who.user_id == user_id:
            client.restore_login(user_id, saved.device_id, saved.access_token)
            return saved
        log.info("the saved Matrix login is no longer valid (%s); logging in again", _reason(who))
        client.access_token = ""
    if not password:
        raise MatrixLoginError("Matrix needs MATRIX_PASSWORD or MATRIX_ACCESS_TOKEN")
    client.device_id = saved.device_id  # log in again as the same device
    response = await client.login(password=password, device_name=DEVICE_NAME)
    if isinstance(response, LoginError):
        raise MatrixLoginError(f"MATRIX_PASSWORD was refused: the login as {user_id} failed ({response.message})")
    return replace(saved, device_id=response.device_id, access_token=response.access_token)


def _reason(response: object) -> str:
    if isinstance(response, WhoamiError):
        return f"{response.status_code or ''} {response.message}".strip()
    return type(response).__name__
