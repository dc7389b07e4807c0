"""What an adapter hands the dialog: one person's message, command or button press."""

from __future__ import annotations

from dataclasses import dataclass

MAX_TEXT_LENGTH = 4000


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
