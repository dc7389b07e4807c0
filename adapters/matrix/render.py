"""Matrix event contents for the bot's messages: `m.text` with an escaped HTML `formatted_body` and the
choices as a numbered list, edits (`m.replace`) that close a message's choices, reactions, pictures; and
the reverse for what a person writes (the quoted fallback of a reply is not part of their message)."""

from __future__ import annotations

import html
import re
from collections.abc import Collection, Sequence
from typing import Any

from bot.delivery.choices import SNOOZE, Choice
from bot.render.heard import split_heard
from bot.render.markdown import blocks

HTML_FORMAT = "org.matrix.custom.html"
# "/help" in a text, not inside a path, a URL or a date ("a/b", "https://x/help", "1/2").
_SLASH_COMMAND = re.compile(r"(?<![\w/:.])/(?P<name>[^\W\d_][\w]*)")


def with_bang_commands(text: str, names: Collection[str]) -> str:
    """Every command of ours written with '!' ("/water 250" -> "!water 250"): Element and other clients keep
    '/…' for their own commands and swallow an unknown one, while '!…' always reaches the bot."""
    return _SLASH_COMMAND.sub(lambda m: "!" + m.group("name") if m.group("name").lower() in names else m.group(0),
                              text)


def _html(text: str) -> str:
    return html.escape(text).replace("\n", "<br>")


def message_content(text: str, choices: Sequence[Choice] = (), *, markdown: bool = False) -> dict[str, Any]:
    """The text, and below it the choices numbered from 1 (plain body and HTML alike). `markdown`: the text is a
    model's answer, its formatting shown in the HTML and its plain words in the body."""
    heard, text = split_heard(text)
    answer = blocks(text) if markdown else []
    if answer:
        body = "\n\n".join(b.plain for b in answer)
        formatted = "".join(b.matrix for b in answer)
    else:
        body = text
        formatted = _html(text)
    if heard is not None:  # the words heard in a voice note, quoted on top of the answer to them
        body = f"{heard}\n\n{body}" if body else heard
        formatted = f"<blockquote>{_html(heard)}</blockquote>{formatted}"
    if choices:
        labels = [_listed(c) for c in choices]
        body += "\n\n" + "\n".join(f"{n}. {label}" for n, label in enumerate(labels, start=1))
        formatted += "<ol>" + "".join(f"<li>{html.escape(label)}</li>" for label in labels) + "</ol>"
    return {"msgtype": "m.text", "body": body, "format": HTML_FORMAT, "formatted_body": formatted}


def _listed(choice: Choice) -> str:
    """A choice as the numbered list shows it: a snooze time marked 💤, so "1 h" still reads as snoozing."""
    return f"💤 {choice.label}" if choice.role == SNOOZE and not choice.label.startswith("💤") else choice.label


def replacement(event_id: str, new: dict[str, Any]) -> dict[str, Any]:
    """An edit (`m.replace`) of `event_id` into the message `new`. Clients without edit support show the fallback
    starting with '* '."""
    return {
        "msgtype": "m.text", "body": "* " + new["body"], "format": HTML_FORMAT,
        "formatted_body": "* " + new["formatted_body"],
        "m.new_content": new,
        "m.relates_to": {"rel_type": "m.replace", "event_id": event_id},
    }


def closed_content(event_id: str, text: str, note: str) -> dict[str, Any]:
    """An edit of `event_id`: its text without the choices, and a note in italics (what was chosen, or
    that the choices expired)."""
    return replacement(event_id, {"msgtype": "m.text", "body": f"{text}\n\n{note}", "format": HTML_FORMAT,
                                  "formatted_body": f"{_html(text)}<br><br><em>{_html(note)}</em>"})


def reaction_content(event_id: str, key: str) -> dict[str, Any]:
    return {"m.relates_to": {"rel_type": "m.annotation", "event_id": event_id, "key": key}}


def png_size(png: bytes) -> tuple[int, int] | None:
    """(width, height) from a PNG's header, or None when the bytes are no PNG."""
    if len(png) < 24 or not png.startswith(b"\x89PNG\r\n\x1a\n") or png[12:16] != b"IHDR":
        return None
    return int.from_bytes(png[16:20], "big"), int.from_bytes(png[20:24], "big")


def image_content(content_uri: str, size: int, *, name: str = "picture.png",
                  keys: dict[str, Any] | None = None, dimensions: tuple[int, int] | None = None) -> dict[str, Any]:
    """A PNG picture with its size, so clients lay it out before loading it, and the picture itself as its
    thumbnail (a chart is small); with `keys` (from an encrypted upload) as an encrypted file."""
    info: dict[str, Any] = {"mimetype": "image/png", "size": size}
    if dimensions is not None:
        info["w"], info["h"] = dimensions
    thumbnail_info = dict(info)
    content: dict[str, Any] = {"msgtype": "m.image", "body": name, "info": info}
    if keys:
        content["file"] = {**keys, "url": content_uri}
        info["thumbnail_file"] = {**keys, "url": content_uri}
    else:
        content["url"] = content_uri
        info["thumbnail_url"] = content_uri
    info["thumbnail_info"] = thumbnail_info
    return content


def strip_reply_fallback(body: str) -> str:
    """'> <@bot:hs> quoted\\n> more\\n\\nmy answer' -> 'my answer' (the spec's reply fallback)."""
    lines = body.split("\n")
    if not lines or not lines[0].startswith("> "):
        return body
    index = 0
    while index < len(lines) and lines[index].startswith(">"):
        index += 1
    return "\n".join(lines[index:]).strip()


def parse_geo_uri(uri: str) -> tuple[float, float] | None:
    """'geo:52.52,13.405;u=35' -> (52.52, 13.405), from an `m.location` message; None when unreadable."""
    if not uri.startswith("geo:"):
        return None
    parts = uri[4:].split(";", 1)[0].split(",")
    try:
        lat, lng = float(parts[0]), float(parts[1])
    except (IndexError, ValueError):
        return None
    if not (-90 <= lat <= 90 and -180 <= lng <= 180):
        return None
    return lat, lng
