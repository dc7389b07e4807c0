"""Who may talk to the companion. Every update passes `Access.gate` before anything else in the dialog: an
admitted account goes on; anyone else gets a short notice straight in their chat (at most once a day) and
nothing more: no person, no stored message, no memory, no model call.

An account is admitted when it is
- listed in its platform's allowlist (TELEGRAM_ALLOWED_USERS: ids and @usernames; MATRIX_ALLOWED_USERS: Matrix
  ids and whole servers);
- granted in `access_grants`: by an invite code (`companion invite`, then `/start CODE` or `!start CODE` on a
  platform without an allowlist; the first such account is the owner), or by `companion access admit`;
- on a trusted platform (the terminal chat, which only the machine's user can reach);
- or anyone, with COMPANION_ACCESS=open (tests, or a bot only reachable from a private network).

Grants are read from the database and kept for a couple of seconds at most, so a running bot follows
`companion access` without a restart. Adapters only hand over the sender (their id and, on Telegram, username)."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING

from sqlalchemy import delete, exists, func, select, update
from sqlalchemy.dialects.postgresql import insert
from sqlalchemy.ext.asyncio import AsyncSession

from bot.inbound import Inbound, split_command
from bot.models import AccessGrant, AccessInvite, AccessRefusal, InstallationSecret
from brain.core import Brain
from brain.i18n import Text, tr

if TYPE_CHECKING:
    from bot.settings import Settings

PAIRING, OPEN = "pairing", "open"
OWNER, MEMBER = "owner", "member"
INVITE_TTL = timedelta(hours=24)
NOTICE_EVERY = timedelta(days=1)
MAX_FAILED_CODES = 5  # wrong invite codes checked per stranger and day; later ones are not even looked at
GRANTS_CACHED_FOR = timedelta(seconds=2)
CODE_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"  # no 0/O or 1/I to mix up
CODE_LENGTH = 10
STRANGERS_KEY = "strangers"  # the name of the installation secret that keys the strangers' hashes
TRUSTED_PLATFORMS = frozenset({"console"})  # the terminal chat: whoever runs it holds the machine
_OWNER_LOCK = 0x0AC0E55  # serializes the choice of the owner among pairings at once

# Sends one text straight to the sender's chat, outside the outbox (which is only for admitted people).
Tell = Callable[[str], Awaitable[None]]


class NotAdmitted(Exception):
    """The sender may not talk to the companion (see `Access.gate`)."""


@dataclass(frozen=True)
class Sender:
    platform: str
    account: str  # the platform's id of the account: a Telegram user id, a Matrix id
    username: str | None = None  # Telegram's @username, without the @

    @classmethod
    def of(cls, inbound: Inbound) -> Sender:
        return cls(inbound.platform, inbound.platform_user_id, inbound.username)

    def names(self) -> tuple[str, ...]:
        """How a grant or an allowlist entry may name this account: its id, and "@username" in lower case."""
        return (self.account, f"@{self.username.lower()}") if self.username else (self.account,)

    @property
    def key(self) -> str:
        return f"{self.platform}:{self.account}"


def listed(sender: Sender, entries: tuple[str, ...]) -> bool:
    """Whether an allowlist names the sender: by id, by @username (any case), or, for Matrix ids, by their server."""
    names = {name.lower() for name in sender.names()}
    server = sender.account.partition(":")[2] if sender.account.startswith("@") else ""
    for entry in entries:
        if entry.lower() in names:
            return True
        if server and not entry.startswith("@") and entry.lstrip(":") == server:
            return True
    return False


def parse_account(text: str) -> tuple[str, str]:
    """"telegram:12345", "telegram:@alice" or "matrix:@alice:example.org" -> (platform, account as stored)."""
    platform, _, account = text.strip().partition(":")
    platform, account = platform.lower(), account.strip()
    if platform not in ("telegram", "matrix") or not account:
        raise ValueError(f"{text.strip()!r} is not platform:account, e.g. telegram:12345, telegram:@alice or "
                         "matrix:@alice:example.org")
    if platform == "telegram":
        if account.startswith("@") and re.fullmatch(r"@\w{1,64}", account):
            return platform, account.lower()
        if not account.isdigit():
            raise ValueError(f"{account!r} is neither a Telegram user id (digits) nor an @username")
    elif not re.fullmatch(r"@[^:\s]+:\S+", account):
        raise ValueError(f"{account!r} is not a full Matrix id such as @alice:example.org")
    return platform, account


@dataclass(frozen=True)
class AccessPolicy:
    """What the settings say: the mode (COMPANION_ACCESS) and each platform's allowlist."""

    mode: str = PAIRING
    allowlists: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    trusted_platforms: frozenset[str] = TRUSTED_PLATFORMS

    @classmethod
    def from_settings(cls, settings: Settings) -> AccessPolicy:
        return cls(mode=settings.companion_access,
                   allowlists={"telegram": settings.telegram_allowed_user_list,
                               "matrix": settings.matrix_allowed_user_list})

    @classmethod
    def open(cls) -> AccessPolicy:
        return cls(mode=OPEN)

    def pairs(self, platform: str) -> bool:
        """Whether invite codes admit accounts of `platform` (only where no allowlist is set)."""
        return self.mode == PAIRING and not self.allowlists.get(platform)


@dataclass(frozen=True)
class Verdict:
    admitted: bool
    notice: Text | None = None  # for someone not admitted: sent straight to their chat
    welcome: tuple[Text, ...] = ()  # for an account an invite code just admitted: said before its /start


@dataclass(frozen=True)
class Listed:
    """One row of `companion access`."""

    platform: str
    account: str
    role: str  # "owner", "member", or "allowlist" (from the settings)
    label: str | None = None
    admitted_at: datetime | None = None


class Access:
    """The gate of one process (see the module docstring)."""

    def __init__(self, brain: Brain, policy: AccessPolicy | None = None) -> None:
        self.brain = brain
        self.policy = policy or AccessPolicy()
        self._grants: frozenset[tuple[str, str]] | None = None
        self._read_at: datetime | None = None
        self._strangers_key: bytes | None = None  # read (or made) once per process

    def forget(self) -> None:
        """Drops the grants read last: the next update reads them again."""
        self._grants = None

    async def admits(self, sender: Sender) -> bool:
        policy = self.policy
        if policy.mode == OPEN or sender.platform in policy.trusted_platforms:
            return True
        if listed(sender, policy.allowlists.get(sender.platform, ())):
            return True
        grants = await self._current_grants()
        return any((sender.platform, name) in grants for name in sender.names())

    async def reachable(self, sender: Sender) -> bool:
        """Whether the sender may at least reach the bot: admitted, or on a platform where an invite code works."""
        return self.policy.pairs(sender.platform) or await self.admits(sender)

    async def gate(self, inbound: Inbound) -> Verdict:
        sender = Sender.of(inbound)
        if await self.admits(sender):
            return Verdict(admitted=True)
        code = invite_code_in(inbound)
        if code is not None and self.policy.pairs(sender.platform):
            return await self._pair(sender, code, inbound.display_name)
        return await self._refuse(sender)

    async def _current_grants(self) -> frozenset[tuple[str, str]]:
        now = self.brain.clock.now()
        if self._grants is None or self._read_at is None or not now - GRANTS_CACHED_FOR < self._read_at <= now:
            async with self.brain.db.autocommit() as connection:
                rows = await connection.execute(select(AccessGrant.platform, AccessGrant.account))
                self._grants = frozenset((platform, account) for platform, account in rows)
            self._read_at = now
        return self._grants

    async def _stranger_key(self) -> bytes:
        if self._strangers_key is None:
            self._strangers_key = await installation_secret(self.brain, STRANGERS_KEY)
        return self._strangers_key

    async def _refuse(self, sender: Sender) -> Verdict:
        key = await self._stranger_key()
        async with self.brain.transactions.begin() as uow:
            day = await _stranger_day(uow.session, stranger_hash(sender, key), uow.now)
            if day.told:
                return Verdict(admitted=False)
            day.told = True
        command = "!start" if sender.platform == "matrix" else "/start"
        if self.policy.pairs(sender.platform):
            return Verdict(admitted=False, notice=tr(
                "This is a private companion; ask its owner for an invite. With an invite code, send {command} "
                "CODE.", command=command))
        return Verdict(admitted=False, notice=tr("This is a private companion; ask its owner for an invite."))

    async def _pair(self, sender: Sender, code: str, label: str | None) -> Verdict:
        key = await self._stranger_key()
        async with self.brain.transactions.begin() as uow:
            session = uow.session
            day = await _stranger_day(session, stranger_hash(sender, key), uow.now)
            if day.failed_codes >= MAX_FAILED_CODES:
                return Verdict(admitted=False)
            used = await session.scalar(
                update(AccessInvite)
                .where(AccessInvite.code_hash == code_hash(code), AccessInvite.used_at.is_(None),
                       AccessInvite.expires_at > uow.now)
                .values(used_at=uow.now, used_by=sender.key[:280])
                .returning(AccessInvite.code_hash))
            if used is None:
                day.failed_codes += 1
                return Verdict(admitted=False, notice=tr(
                    "That invite code does not work: it was used already, has expired or is mistyped. Ask the "
                    "owner for a new one."))
            role = await grant(session, sender.platform, sender.account, label=label or sender.username,
                               via="invite", now=uow.now)
            await session.delete(day)
        self.forget()
        welcome = [tr("Welcome! Your invite code worked: from now on I talk with you.")]
        if role == OWNER:
            welcome.append(tr("You are my owner: `companion invite` makes codes for others, and `companion access` "
                              "shows who may talk with me."))
        return Verdict(admitted=True, welcome=tuple(welcome))


def invite_code_in(inbound: Inbound) -> str | None:
    """The code of "/start CODE" (or "!start CODE"; Telegram's deep link t.me/<bot>?start=CODE sends the same)."""
    if inbound.action is not None or not inbound.is_command or inbound.text is None:
        return None
    name, args = split_command(inbound.text)
    code = normalize_code(args)
    return code if name == "start" and code else None


def normalize_code(text: str) -> str:
    return "".join(c for c in text.upper() if c.isalnum())[:64]


def code_hash(code: str) -> str:
    return hashlib.sha256(normalize_code(code).encode()).hexdigest()


def stranger_hash(sender: Sender, key: bytes) -> str:
    """What the refusals are keyed by: an HMAC-SHA-256 of the account under the installation's secret `key`, so the
    stored value cannot be matched by hashing candidate ids."""
    return hmac.new(key, f"stranger:{sender.key}".encode(), hashlib.sha256).hexdigest()


async def installation_secret(brain: Brain, name: str) -> bytes:
    """The installation's secret `name`: made (32 random bytes) by the first process that asks, read after that."""
    async with brain.transactions.begin() as uow:
        await uow.session.execute(insert(InstallationSecret)
                                  .values(name=name, value=secrets.token_hex(32), created_at=uow.now)
                                  .on_conflict_do_nothing())
        value = await uow.session.scalar(select(InstallationSecret.value).where(InstallationSecret.name == name))
    assert value is not None
    return bytes.fromhex(value)


async def _stranger_day(session: AsyncSession, key: str, now: datetime) -> AccessRefusal:
    """The refusal row of the stranger hashed to `key` for the current day (locked until the transaction ends);
    older days are dropped."""
    await session.execute(delete(AccessRefusal).where(AccessRefusal.day_started_at <= now - NOTICE_EVERY))
    await session.execute(insert(AccessRefusal)
                          .values(account_hash=key, day_started_at=now, told=False, failed_codes=0)
                          .on_conflict_do_nothing())
    day = await session.scalar(select(AccessRefusal).where(AccessRefusal.account_hash == key).with_for_update()
                               .execution_options(populate_existing=True))
    assert day is not None
    return day


async def grant(session: AsyncSession, platform: str, account: str, *, label: str | None, via: str,
                now: datetime) -> str:
    """Admits an account; the first one admitted ever is the owner. Returns its role (an account admitted before
    keeps its own)."""
    await session.execute(select(func.pg_advisory_xact_lock(_OWNER_LOCK)))
    has_owner = await session.scalar(select(exists().where(AccessGrant.role == OWNER)))
    role = MEMBER if has_owner else OWNER
    kept = await session.scalar(
        insert(AccessGrant)
        .values(platform=platform, account=account, role=role, label=(label or None) and label[:128], via=via,
                admitted_at=now)
        .on_conflict_do_update(index_elements=["platform", "account"], set_={"label": label and label[:128]})
        .returning(AccessGrant.role))
    return str(kept)


def new_code() -> str:
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


async def create_invite(brain: Brain) -> tuple[str, datetime]:
    """A new one-time invite code and when it expires; only its hash is stored."""
    code = new_code()
    async with brain.transactions.begin() as uow:
        await uow.session.execute(delete(AccessInvite).where(AccessInvite.expires_at <= uow.now - INVITE_TTL))
        expires = uow.now + INVITE_TTL
        uow.session.add(AccessInvite(code_hash=code_hash(code), created_at=uow.now, expires_at=expires))
    return code, expires


async def admit(brain: Brain, platform: str, account: str, *, label: str | None = None) -> str:
    """`companion access admit`: grants the account (see `grant`); returns its role."""
    async with brain.transactions.begin() as uow:
        return await grant(uow.session, platform, account, label=label, via="cli", now=uow.now)


async def remove(brain: Brain, platform: str, account: str) -> bool:
    """`companion access remove`: the account may no longer talk (its person and data stay, should it be admitted
    again). False when it had no grant."""
    async with brain.transactions.begin() as uow:
        removed = await uow.session.scalar(
            delete(AccessGrant).where(AccessGrant.platform == platform, AccessGrant.account == account)
            .returning(AccessGrant.account))
    return removed is not None


async def forget_accounts(session: AsyncSession, accounts: Sequence[tuple[str, str]]) -> None:
    """A person erased their data (/delete_me): the grants of their accounts (`(platform, id or "@username")`) go,
    and the invites they used no longer name them. Their next message is a stranger's."""
    for platform, account in accounts:
        await session.execute(delete(AccessGrant).where(AccessGrant.platform == platform,
                                                        AccessGrant.account == account))
        await session.execute(update(AccessInvite).where(AccessInvite.used_by == f"{platform}:{account}"[:280])
                              .values(used_by=None))


async def is_owner(brain: Brain, platform: str, account: str) -> bool:
    """Whether the account is the owner (the first one admitted): an administrator, as COMPANION_ADMINS names them."""
    async with brain.db.autocommit() as connection:
        return bool(await connection.scalar(select(exists().where(
            AccessGrant.platform == platform, AccessGrant.account == account, AccessGrant.role == OWNER))))


async def listing(brain: Brain, policy: AccessPolicy) -> list[Listed]:
    """Who may talk: the grants (owner first), then the allowlists of the settings."""
    async with brain.transactions.read() as session:
        grants = (await session.scalars(select(AccessGrant).order_by(AccessGrant.role != OWNER,
                                                                     AccessGrant.admitted_at))).all()
        rows = [Listed(g.platform, g.account, g.role, g.label, g.admitted_at) for g in grants]
    for platform, entries in policy.allowlists.items():
        rows += [Listed(platform, entry, "allowlist") for entry in entries]
    return rows
