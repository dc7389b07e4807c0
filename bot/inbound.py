"""What an adapter hands the dialog: one person's message, command or button press."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Literal

MAX_TEXT_LENGTH = 4000


@dataclass(frozen=True)
class Media:
    """A voice note or a photo, as the platform described it; its bytes are fetched only when needed (`fetch`,
    the adapter's download), after the limits and the person's consent allow it, and are never stored."""

    kind: Literal["voice", "photo"]
    fetch: Callable[[], Awaitable[bytes]] = field(compare=False, repr=False)
    duration_s: int | None = None  # as the platform reports it (voice)
    size: int | None = None  # bytes, as the platform reports it
    mime: str | None = None
    file_name: str | None = None
    caption: str | None = None  # the text sent with a photo
    media_id: str | None = None  # the platform's stable id of the file (not its content)


@dataclass(frozen=True)
class Inbound:
    platform: str
    platform_user_id: str
    chat_id: str
    message_id: str
    text: str | None = None
    action: str | None = None  # the opaque token of a pressed button
    display_name: str | None = None
    language_code: str | None = None
    location: tuple[float, float] | None = None  # a shared position: (latitude, longitude)
    username: str | None = None  # the platform's @username of the sender, where it has one (Telegram)
    media: Media | None = None  # a voice note or a photo (then `text` is None)
    edited: bool = False  # an edit of an earlier message: not applied (`Dialog` says how to fix the entry)
    forwarded: bool = False  # someone else's words passed on: never run as a command or logged as an entry

    @property
    def is_command(self) -> bool:
        return self.text is not None and self.text.lstrip()[:1] in ("/", "!") and not self.forwarded

    @property
    def is_own_words(self) -> bool:
        """A new message of the person's own: neither an edit nor forwarded."""
        return not (self.edited or self.forwarded)


def split_command(text: str) -> tuple[str, str]:
    """'/water@CompanionBot 250 ml' -> ('water', '250 ml'). Commands are case-insensitive."""
    head, _, rest = text.strip()[1:].partition(" ")
    name = head.split("@", 1)[0].lower()
    return name, rest.strip()
