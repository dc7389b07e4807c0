"""Pure parts of the Matrix adapter: which choice a reaction or a typed number picks, which reactions the bot
adds, the event contents it sends (escaped HTML, numbered list, edit), and what it reads from people (reply
fallback, location)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from adapters.matrix.choices import KEYCAPS, choice_for_key, choice_for_number, reaction_keys
from adapters.matrix.render import (
    closed_content,
    image_content,
    message_content,
    parse_geo_uri,
    png_size,
    strip_reply_fallback,
)
from bot.delivery.choices import APPROVE, REJECT, SNOOZE, Choice, role_of

PROPOSAL = [Choice("Approve", "tok-approve", APPROVE), Choice("Reject", "tok-reject", REJECT)]
NUDGE = [Choice("Log 250 ml water", "t-act"), Choice("Snooze 15 min", "t-s15", SNOOZE), Choice("1 h", "t-s60", SNOOZE),
         Choice("Tomorrow", "t-tomorrow"), Choice("Dismiss", "t-dismiss", REJECT)]
LANGUAGES = [Choice("English", "t-en"), Choice("Deutsch", "t-de")]


def test_roles_come_from_the_action_kind_or_its_operation() -> None:
    assert role_of("proposal_approve", {"proposal_id": "x"}) == APPROVE
    assert role_of("proposal_reject", {}) == REJECT
    assert role_of("nudge", {"op": "dismiss"}) == REJECT
    assert role_of("nudge", {"op": "snooze", "minutes": 15}) == SNOOZE
    assert role_of("nudge", {"op": "tomorrow"}) is None
    assert role_of("nudge", {"op": "act", "index": 0}) is None
    assert role_of("set_locale", {"locale": "de"}) is None


def test_check_and_cross_pick_approve_and_reject_and_sleep_the_first_snooze() -> None:
    assert choice_for_key(PROPOSAL, "✅") == PROPOSAL[0]
    assert choice_for_key(PROPOSAL, "❌") == PROPOSAL[1]
    assert choice_for_key(PROPOSAL, "👍") is None  # only the reactions the bot put under the message count
    assert choice_for_key(PROPOSAL, "1️⃣") is None  # Approve / Reject went out as ✅ ❌, without numbers
    assert choice_for_key(NUDGE, "💤") == NUDGE[1]
    assert choice_for_key(NUDGE, "❌") == NUDGE[4]
    assert choice_for_key(NUDGE, "✅") == NUDGE[0]  # no approve button: the first one
    assert choice_for_key(LANGUAGES, "❌") is None  # nothing to reject here
    assert choice_for_key(LANGUAGES, "🎉") is None


def test_keycaps_pick_by_position_with_or_without_the_variation_selector() -> None:
    assert choice_for_key(NUDGE, "3️⃣") == NUDGE[2]
    assert choice_for_key(NUDGE, "3\u20e3") == NUDGE[2]
    assert choice_for_key(LANGUAGES, "3️⃣") is None
    assert choice_for_key([], "✅") is None


def test_the_bot_adds_role_reactions_and_numbers_only_when_needed() -> None:
    assert reaction_keys(PROPOSAL) == ["✅", "❌"]
    assert reaction_keys(NUDGE) == ["✅", "❌", "💤", KEYCAPS[2], KEYCAPS[3]]  # only what the roles do not reach
    assert reaction_keys(LANGUAGES) == list(KEYCAPS[:2])
    many = [Choice(f"c{i}", f"t{i}") for i in range(12)]
    assert reaction_keys(many) == list(KEYCAPS)  # ten at most; numbers typed reach the others
    assert choice_for_number(many, "12") == many[11]
    assert reaction_keys([]) == []


@given(st.lists(st.text(min_size=1, max_size=8), min_size=1, max_size=15), st.data())
def test_a_typed_number_picks_that_position_and_nothing_else_does(labels: list[str], data: st.DataObject) -> None:
    choices = [Choice(label, f"t{i}") for i, label in enumerate(labels)]
    position = data.draw(st.integers(min_value=1, max_value=len(choices)))
    assert choice_for_number(choices, f" {position}. ") == choices[position - 1]
    outside = data.draw(st.integers().filter(lambda n: not 1 <= n <= len(choices)))
    assert choice_for_number(choices, str(outside)) is None
    text = data.draw(st.text(max_size=6))
    picked = choice_for_number(choices, text)
    assert picked is None or picked in choices


def test_a_message_is_escaped_html_with_the_choices_as_a_numbered_list() -> None:
    content = message_content("Added <b>milk</b> & eggs\nsecond line", LANGUAGES)
    assert content["msgtype"] == "m.text"
    assert content["body"] == "Added <b>milk</b> & eggs\nsecond line\n\n1. English\n2. Deutsch"
    assert content["formatted_body"] == ("Added &lt;b&gt;milk&lt;/b&gt; &amp; eggs<br>second line"
                                         "<ol><li>English</li><li>Deutsch</li></ol>")
    assert message_content("plain")["body"] == "plain"


def test_an_edit_replaces_the_message_and_drops_its_choices() -> None:
    content = closed_content("$event", "Drink water?", "Chosen: <Dismiss>")
    assert content["m.relates_to"] == {"rel_type": "m.replace", "event_id": "$event"}
    assert content["m.new_content"]["body"] == "Drink water?\n\nChosen: <Dismiss>"
    assert content["m.new_content"]["formatted_body"] == "Drink water?<br><br><em>Chosen: &lt;Dismiss&gt;</em>"
    assert content["body"].startswith("* ")


def test_a_picture_is_a_plain_or_an_encrypted_file() -> None:
    assert image_content("mxc://hs/abc", 10)["url"] == "mxc://hs/abc"
    encrypted = image_content("mxc://hs/abc", 10, keys={"key": {"k": "x"}, "iv": "y", "hashes": {}, "v": "v2"})
    assert "url" not in encrypted and encrypted["file"]["url"] == "mxc://hs/abc" and encrypted["file"]["iv"] == "y"


def test_the_quoted_part_of_a_reply_is_not_the_message() -> None:
    assert strip_reply_fallback("> <@bot:hs> Drink water?\n> 1. Yes\n\n2") == "2"
    assert strip_reply_fallback("just text\n> not a quote") == "just text\n> not a quote"


def test_a_geo_uri_gives_latitude_and_longitude() -> None:
    assert parse_geo_uri("geo:52.52,13.405;u=35") == (52.52, 13.405)
    assert parse_geo_uri("geo:52.52,13.405,30") == (52.52, 13.405)
    assert parse_geo_uri("geo:952.52,13.405") is None
    assert parse_geo_uri("https://example.org") is None
    assert parse_geo_uri("geo:north") is None


@given(st.floats(min_value=-90, max_value=90), st.floats(min_value=-180, max_value=180))
def test_any_position_survives_its_geo_uri(lat: float, lng: float) -> None:
    assert parse_geo_uri(f"geo:{lat!r},{lng!r};u=10") == (lat, lng)


def test_a_picture_carries_its_size_and_a_thumbnail() -> None:
    import io

    import matplotlib
    matplotlib.use("Agg")
    from matplotlib import pyplot

    figure = pyplot.figure(figsize=(3, 2), dpi=100)
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png")
    pyplot.close(figure)
    png = buffer.getvalue()
    assert png_size(png) == (300, 200)
    assert png_size(b"not a png") is None
    info = image_content("mxc://hs/abc", len(png), dimensions=png_size(png))["info"]
    assert (info["w"], info["h"], info["mimetype"]) == (300, 200, "image/png")
    assert info["thumbnail_url"] == "mxc://hs/abc" and info["thumbnail_info"]["w"] == 300
