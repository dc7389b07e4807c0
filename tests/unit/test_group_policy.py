"""The group policy (`bot.groups`): by default every group and channel is left; with groups allowed, only a command
addressed to this bot or a reply to its messages is read, and a command for another bot is ignored."""

from __future__ import annotations

import pytest

from bot.groups import IGNORE, LEAVE, READ, GroupMessage, addressed_bot, group_verdict

ME = "companion_bot"


@pytest.mark.parametrize("message", [
    GroupMessage(command="/today@companion_bot"), GroupMessage(replies_to_bot=True), GroupMessage(),
    GroupMessage(channel=True, command="/today@companion_bot"),
])
def test_without_groups_allowed_every_group_is_left(message: GroupMessage) -> None:
    assert group_verdict(message, allow_groups=False, bot_username=ME) == LEAVE


@pytest.mark.parametrize(("message", "verdict"), [
    (GroupMessage(command="/today@companion_bot"), READ),
    (GroupMessage(command="/Today@Companion_Bot"), READ),  # bot names are case-insensitive
    (GroupMessage(command="/water@other_bot"), IGNORE),
    (GroupMessage(command="/water@other_bot", replies_to_bot=True), IGNORE),  # addressed to the other bot
    (GroupMessage(command="/water"), IGNORE),  # a bare command in a group may be meant for any bot
    (GroupMessage(command="/water", replies_to_bot=True), READ),
    (GroupMessage(replies_to_bot=True), READ),
    (GroupMessage(), IGNORE),
    (GroupMessage(channel=True, replies_to_bot=True), LEAVE),  # a channel has nobody to talk with
])
def test_with_groups_allowed_only_what_is_addressed_to_this_bot_is_read(message: GroupMessage, verdict: str) -> None:
    assert group_verdict(message, allow_groups=True, bot_username=ME) == verdict


def test_the_addressed_bot_is_read_from_the_command() -> None:
    assert addressed_bot("/water@Other_Bot") == "other_bot"
    assert addressed_bot("/water") is None
    assert addressed_bot("/water@") is None
