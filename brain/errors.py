"""The one exception the brain raises for a request it refuses: it carries a translatable reason."""

from __future__ import annotations

from brain.i18n import Text


class DomainError(Exception):
    """A refused request (not found, out of range, not allowed). Nothing was written."""

    def __init__(self, text: Text, code: str = "invalid") -> None:
        super().__init__(text.msgid)
        self.text = text
        self.code = code
