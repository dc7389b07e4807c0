"""An `Outbound` as the Telegram messages that carry it: the text HTML-escaped (replies are plain text, and
text from a model must never break the markup), split into parts of at most 4096 characters at line breaks
where possible, the inline keyboard on the last part, a picture as a photo (a file as a document) with the
first part of the text as its caption (1024 characters). Pure functions; `delivery.py` sends the parts.

Lengths are counted in UTF-16 code units, as Telegram counts them (an emoji outside the basic plane is two)."""

from __future__ import annotations

import html
import logging
from dataclasses import dataclass, field

from brain.outbox.models import Button, Outbound

log = logging.getLogger(__name__)

MAX_TEXT = 4096
MAX_CAPTION = 1024
MAX_CALLBACK_DATA_BYTES = 64


@dataclass(frozen=True)
class Part:
    """One Telegram call: a message, a photo or a document with a caption. `plain` is the unescaped text, sent
    as is when Telegram rejects the HTML."""

    plain: str
    keyboard: list[list[Button]] = field(default_factory=list)
    photo: bytes | None = None
    document: bytes | None = None
    document_name: str | None = None

    @property
    def html(self) -> str:
        return escape(self.plain)


def escape(text: str) -> str:
    """Telegram's HTML needs only <, > and & escaped; quotes stay readable in the raw text too."""
    return html.escape(text, quote=False)


def utf16_length(text: str) -> int:
    return len(text) + sum(1 for c in text if ord(c) > 0xFFFF)


def _cut(text: str, limit: int) -> int:
    """The largest index i with utf16_length(text[:i]) <= limit (never inside a character)."""
    units = 0
    for index, char in enumerate(text):
        units += 2 if ord(char) > 0xFFFF else 1
        if units > limit:
            return index
    return len(text)


def split_text(text: str, limit: int = MAX_TEXT) -> list[str]:
    """Parts of at most `limit` UTF-16 units (after HTML escaping, which can make `&` five times longer),
    cut after a line break if one is in the second half of the part, else after a space, else anywhere."""
    parts: list[str] = []
    rest = text
    while utf16_length(escape(rest)) > limit:
        end = _escaped_cut(rest, limit)
        window = rest[:end]
        for separator in ("\n", " "):
            at = window.rfind(separator)
            if at >= end // 2:
                end = at + 1
                break
        parts.append(rest[:end].rstrip("\n") or rest[:end])
        rest = rest[end:]
    if rest or not parts:
        parts.append(rest)
    return parts


def _escaped_cut(text: str, limit: int) -> int:
    """Like `_cut`, but measured on the escaped text."""
    units = 0
    for index, char in enumerate(text):
        units += len(escape(char)) if char in "<>&" else (2 if ord(char) > 0xFFFF else 1)
        if units > limit:
            return max(index, 1)
    return len(text)


def keyboard_rows(buttons: list[list[Button]]) -> list[list[Button]]:
    """The rows Telegram can carry: a token longer than 64 bytes of callback data would be refused with the
    whole message, so such a button is left out (and logged; our tokens are 11 characters)."""
    rows: list[list[Button]] = []
    for row in buttons:
        kept = []
        for button in row:
            if 0 < len(button.token.encode()) <= MAX_CALLBACK_DATA_BYTES:
                kept.append(button)
            else:
                log.warning("button %r left out: its token does not fit Telegram's callback data", button.label)
        if kept:
            rows.append(kept)
    return rows


def render(message: Outbound) -> list[Part]:
    """The parts of one outbox message, in sending order; the keyboard is on the last one."""
    keyboard = keyboard_rows(message.buttons)
    text = message.text
    parts: list[Part] = []
    if message.image_png is not None or message.document is not None:
        caption, *rest = split_text(text, MAX_CAPTION) if text else [""]
        remainder = text[len(caption):].lstrip("\n") if rest else ""
        if message.image_png is not None:
            parts.append(Part(caption, photo=message.image_png))
            caption = ""
        if message.document is not None:
            parts.append(Part(caption, document=message.document, document_name=message.document_name or "file"))
        if remainder:
            parts.extend(Part(chunk) for chunk in split_text(remainder))
    else:
        parts.extend(Part(chunk) for chunk in split_text(text or "…"))
    last = parts[-1]
    parts[-1] = Part(last.plain, keyboard, last.photo, last.document, last.document_name)
    return parts
