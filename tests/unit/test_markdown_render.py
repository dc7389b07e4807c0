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


def test_the_words_heard_fold_into_an_expandable_quote_on_top_of_the_first_part() -> None:
    from adapters.telegram.render import MAX_TEXT, render
    from brain.outbox.models import Outbound

    (part,) = render(Outbound(text="🎙 zwei Kaffee <bitte>\n\n2 × 150 ml Kaffee"))
    assert part.html == "<blockquote expandable>🎙 zwei Kaffee &lt;bitte&gt;</blockquote>2 × 150 ml Kaffee"
    assert part.plain == "🎙 zwei Kaffee <bitte>\n\n2 × 150 ml Kaffee"  # sent as is if Telegram refused the HTML
    (alone,) = render(Outbound(text="🎙 hello"))
    assert alone.html == "<blockquote expandable>🎙 hello</blockquote>"
    heard, long = render(Outbound(text="🎙 hello\n\n" + "x" * (MAX_TEXT - 10)))  # no room for both in one message
    assert heard.html == "<blockquote expandable>🎙 hello</blockquote>" and long.plain == "x" * (MAX_TEXT - 10)
    (plain,) = render(Outbound(text="Logged 250 ml water"))
    assert plain.html == "Logged 250 ml water"
