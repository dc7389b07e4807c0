"""The model's Markdown as Telegram parts (pure): whatever the model writes, every part fits Telegram's 4096
UTF-16 units and its tags nest; nothing the model wrote is lost."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from adapters.telegram.render import MAX_TEXT, render, utf16_length
from bot.render.markdown import matrix_html, plain_text, telegram_html
from brain.outbox.models import Outbound
from tests.telegram.test_formatting import balanced

PIECES = st.sampled_from(["**", "*", "`", "_", "- ", "1. ", "\n", "\n\n", "[a](https://x.org/?q=<&>)", "> ",
                          "```\n", "# ", "<b>", "&", "word ", "Wörter 😀 ", "    ", "|a|b|\n|-|-|\n", "~~"])


@settings(max_examples=60, deadline=None)
@given(st.lists(PIECES, max_size=80), st.integers(min_value=1, max_value=60))
def test_every_part_fits_and_nests(pieces: list[str], repeat: int) -> None:
    text = "".join(pieces) * repeat
    for part in render(Outbound(text=text, markdown=True)):
        assert utf16_length(part.html) <= MAX_TEXT
        assert balanced(part.html), part.html[:300]
    assert balanced(matrix_html(text))


def test_only_the_supported_formatting_becomes_tags() -> None:
    assert telegram_html("# Title\n\n![pic](https://x.org/p.png) [js](javascript:alert(1))") == \
        "<b>Title</b>\n\npic [js](javascript:alert(1))"
    assert plain_text("**bold** and `code`") == "bold and code"
    assert matrix_html("1. a\n2. b") == "<ol><li>a</li><li>b</li></ol>"
