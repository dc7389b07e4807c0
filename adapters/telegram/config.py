"""The Telegram adapter's configuration: the token and where the Bot API is, how updates arrive (long polling,
a webhook, or long polling across several processes) and how many are handled and sent at once."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

from bot.delivery.stream import Pace

if TYPE_CHECKING:
    from adapters.telegram.scaleout import Shares
    from bot.settings import Settings

# Updates the bot handles at once, across all its processes (TELEGRAM_PROCESSES). With several, each process takes
# its part, as with Telegram's overall send rate: given each the whole, the processes together held more database
# connections and were slower on a small machine than one process alone.
LANES = 16
TYPING_AFTER_S = 0.3  # a reply faster than this needs no "typing" (and saves a request)
STREAM_PACE = Pace()  # an answer is shown after about 1 s and edited at most once a second


@dataclass(frozen=True)
class Webhook:
    """Webhook mode: Telegram posts updates to `url` (public, https); we listen on `listen:port` behind the
    reverse proxy that terminates TLS. Telegram sends `secret` in a header, so forged posts are refused."""

    url: str
    listen: str = "127.0.0.1"
    port: int = 8443
    secret: str | None = None

    @property
    def path(self) -> str:
        return urlsplit(self.url).path.strip("/")


@dataclass(frozen=True)
class TelegramConfig:
    """How the adapter reaches Telegram and takes its updates.

    `other_platforms` are the chat platforms served beside Telegram (a push then goes where the person last
    talked). `shares`: this process polls and passes the updates of other processes' chats on (several
    processes, `scaleout`); `fed`: this process is such a worker, handed its updates (it neither polls nor
    runs the background pass of the outbox)."""

    token: str = field(repr=False)
    base_url: str | None = None  # a self-hosted Bot API server (or the tests' fake)
    webhook: Webhook | None = None
    max_rate: float = 30.0  # messages per second over all chats; 0: no limit
    concurrency: int = LANES  # updates handled at once
    send_concurrency: int = 8  # chats sent to at once
    poll_timeout: float = 30.0
    sender_poll_interval: float = 2.0
    typing_after: float = TYPING_AFTER_S
    stream: Pace | None = STREAM_PACE  # how a companion answer is shown while it is written; None: not at all
    other_platforms: tuple[str, ...] = ()
    shares: Shares | None = None
    fed: bool = False
    allow_groups: bool = False  # TELEGRAM_ALLOW_GROUPS (`bot.groups`)

    @classmethod
    def from_settings(cls, settings: Settings, other_platforms: tuple[str, ...] = (), *,
                      shares: Shares | None = None, fed: bool = False) -> TelegramConfig:
        """The configuration the settings describe (TELEGRAM_TOKEN must be set). With TELEGRAM_PROCESSES > 1
        each process handles and sends its part of the whole."""
        if settings.telegram_token is None:
            raise ValueError("TELEGRAM_TOKEN is not set")
        webhook = None
        if settings.telegram_webhook_url:
            host, _, port = settings.telegram_webhook_listen.rpartition(":")
            secret = settings.telegram_webhook_secret.get_secret_value() if settings.telegram_webhook_secret else None
            webhook = Webhook(url=settings.telegram_webhook_url, listen=host.strip("[]"), port=int(port),
                              secret=secret)
        max_rate = settings.telegram_max_messages_per_second
        lanes = LANES
        if settings.telegram_processes > 1 and webhook is None:
            max_rate /= settings.telegram_processes  # Telegram's overall limit is per bot: each process keeps its part
            lanes = lanes_per_process(LANES, settings.telegram_processes)
        return cls(token=settings.telegram_token.get_secret_value(), base_url=settings.telegram_base_url,
                   webhook=webhook, max_rate=max_rate, concurrency=lanes, other_platforms=other_platforms,
                   shares=shares, fed=fed, allow_groups=settings.telegram_allow_groups)


def lanes_per_process(lanes: int, processes: int) -> int:
    """Each process's part of the updates handled at once (see LANES), rounded up."""
    return max(1, -(-lanes // max(1, processes)))
