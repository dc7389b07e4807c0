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
    username: str | None = None  # the platform's @username of the sender, where it has one (Telegram)

    @property
    def is_command(self) -> bool:
        return self.text is not None and self.text.lstrip()[:1] in ("/", "!")


def split_command(text: str) -> tuple[str, str]:
    """'/water@CompanionBot 250 ml' -> ('water', '250 ml'). Commands are case-insensitive."""
    head, _, rest = text.strip()[1:].partition(" ")
    name = head.split("@", 1)[0].lower()
    return name, rest.strip()
