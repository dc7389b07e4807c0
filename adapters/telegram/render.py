"""An `Outbound` as the Telegram messages that carry it: the text HTML-escaped (replies are plain text, and
text from a model must never break the markup), split into parts of at most 4096 characters at line breaks
where possible, the inline keyboard on the last part, a picture as a photo (a file as a document) with the
first part of the text as its caption (1024 characters). A model's answer (Markdown) is shown in Telegram's HTML
subset (`bot.render.markdown`) and split between its blocks, so no part breaks the nesting of its tags. Pure
functions; `outbound.py` sends the parts.

Lengths are counted in UTF-16 code units, as Telegram counts them (an emoji outside the basic plane is two)."""

from __future__ import annotations

import html
import logging
from collections.abc import Sequence
from dataclasses import dataclass, field

from bot.render.heard import split_heard
from bot.render.markdown import Block, blocks
from brain.outbox.models import Button, Outbound

log = logging.getLogger(__name__)

MAX_TEXT = 4096
MAX_CAPTION = 1024
MAX_CALLBACK_DATA_BYTES = 64


@dataclass(frozen=True)
class Part:
    """One Telegram call: a message, a photo or a document with a caption. `plain` is the unescaped text, sent
    as is when Telegram rejects the HTML; `formatted` the HTML of a model's answer (else `plain` escaped)."""

    plain: str
    keyboard: list[list[Button]] = field(default_factory=list)
    photo: bytes | None = None
    document: bytes | None = None
    document_name: str | None = None
    formatted: str | None = None
    force_reply: bool = False  # a question: Telegram opens the reply field (only on a part without a keyboard)
    edits: str | None = None  # the id of a message sent before: this part edits it (`Outbound.edits`)

    @property
    def html(self) -> str:
        return self.formatted if self.formatted is not None else escape(self.plain)


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
    """The parts of one outbox message, in sending order; the keyboard is on the last one. The words heard in a
    voice note come first, in a quote folded to its first lines (an expandable blockquote). An edit of a message
    sent before is one part: its keyboard goes, and its words become the edit's text (when it has one)."""
    if message.edits is not None:
        return [Part(split_text(message.text)[0] if message.text else "", edits=message.edits)]
    keyboard = keyboard_rows(message.buttons)
    heard, text = split_heard(message.text) if message.image_png is None and message.document is None else (
        None, message.text)
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
    elif message.markdown and (answer := blocks(text)):
        parts.extend(formatted_parts(answer))
    elif text or heard is None:
        parts.extend(Part(chunk) for chunk in split_text(text or "…"))
    if heard is not None:
        parts = _with_heard(heard, parts)
    last = parts[-1]
    parts[-1] = Part(last.plain, keyboard, last.photo, last.document, last.document_name, last.formatted,
                     force_reply=message.asks_reply and not keyboard)
    return parts


def _with_heard(heard: str, parts: list[Part]) -> list[Part]:
    """The "🎙 …" line as an expandable quote on top of the first part, or as a part of its own when both do
    not fit in one message."""
    quote = f"<blockquote expandable>{escape(heard)}</blockquote>"
    if parts and utf16_length(quote + parts[0].html) <= MAX_TEXT:
        first = parts[0]
        return [Part(f"{heard}\n\n{first.plain}", formatted=quote + first.html), *parts[1:]]
    return [Part(heard, formatted=quote), *parts]


def formatted_parts(answer: Sequence[Block], limit: int = MAX_TEXT, separator: str = "\n\n") -> list[Part]:
    """The blocks of a model's answer packed into messages of at most `limit` UTF-16 units of HTML, cut only
    between blocks (a long list between its items); a block too long for one message on its own goes as plain
    text parts (its words matter more than its formatting)."""
    parts: list[Part] = []
    plain: list[str] = []
    formatted: list[str] = []

    def close() -> None:
        if formatted:
            parts.append(Part(separator.join(plain), formatted=separator.join(formatted)))
            plain.clear()
            formatted.clear()

    for block in answer:
        if utf16_length(block.telegram) > limit:
            close()
            if block.items:
                parts.extend(formatted_parts(block.items, limit, "\n"))
            else:
                parts.extend(Part(chunk) for chunk in split_text(block.plain, limit))
            continue
        if formatted and utf16_length(separator.join([*formatted, block.telegram])) > limit:
            close()
        plain.append(block.plain)
        formatted.append(block.telegram)
    close()
    return parts
