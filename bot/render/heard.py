"""The words heard in a voice note, shown on top of the reply to them ("🎙 …", `bot.voice`): a platform that can
fold a quote shows them folded, so the answer stays in view. Pure functions."""

from __future__ import annotations

HEARD_MARK = "🎙 "


def split_heard(text: str) -> tuple[str | None, str]:
    """(the "🎙 …" line, the rest) of a reply that starts with the words heard; (None, text) for any other."""
    if not text.startswith(HEARD_MARK):
        return None, text
    heard, _, rest = text.partition("\n\n")
    return heard, rest
