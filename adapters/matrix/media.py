"""A Matrix audio or image message (`m.audio`, `m.image`) as the `Media` of an `Inbound`: what the event says about
the file (duration, size, type, caption), and the download of its `mxc://` content, which the dialog runs only
once the limits and the person's consent allow it. Encrypted files (`file` instead of `url`) are not read."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from nio import RoomMessageAudio, RoomMessageImage

from bot.inbound import Media

Download = Callable[[str], Awaitable[bytes]]  # mxc:// URI -> the file's bytes


def media_of(event: RoomMessageAudio | RoomMessageImage, download: Download) -> Media | None:
    """The event's file as `Media`; None when it has no plain `mxc://` URL."""
    url = str(event.url or "")
    if not url.startswith("mxc://"):
        return None
    content: dict[str, Any] = event.source.get("content", {})
    found = content.get("info")
    info: dict[str, Any] = found if isinstance(found, dict) else {}
    size = _whole(info.get("size"))
    mime = str(info.get("mimetype") or "") or None
    file_name = str(content.get("filename") or event.body or "") or None

    async def fetch() -> bytes:
        return await download(url)

    if isinstance(event, RoomMessageAudio):
        duration_ms = _whole(info.get("duration"))
        return Media(kind="voice", fetch=fetch, duration_s=None if duration_ms is None else -(-duration_ms // 1000),
                     size=size, mime=mime or "audio/ogg", file_name=file_name or "voice.ogg", media_id=url)
    # Since Matrix 1.10 the body is a caption when a file name is given apart from it.
    filename = content.get("filename")
    caption = event.body if filename and event.body and event.body != filename else None
    return Media(kind="photo", fetch=fetch, size=size, mime=mime or "image/jpeg", file_name=file_name,
                 caption=caption, media_id=url)


def _whole(value: object) -> int | None:
    return int(value) if isinstance(value, int | float) and not isinstance(value, bool) and value >= 0 else None
