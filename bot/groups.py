"""Group chats. A personal companion talks with one person at a time: in a group it would show one member's day,
meals and places to everyone. By default it says so once and leaves (`LEAVE`). A deployment may allow groups
(TELEGRAM_ALLOW_GROUPS): then only what is addressed to this bot is read (a command `/cmd@this_bot`, or a reply to
one of its messages), and the answer goes to the person's private chat with a one-line pointer in the group
(`READ`); everything else, commands for other bots included, is not read at all (`IGNORE`). A channel has nobody to
talk with: always left. Pure decisions; each adapter reads its platform's message into a `GroupMessage`."""

from __future__ import annotations

from dataclasses import dataclass

from brain.i18n import Text, tr

LEAVE, IGNORE, READ = "leave", "ignore", "read"

GROUP_NOTICE: Text = tr("Hello! I'm a personal companion and talk with one person at a time, so I'm leaving this "
                        "group. Write to me in a private chat instead.")


@dataclass(frozen=True)
class GroupMessage:
    """What the group policy needs to know of a message in a chat with more than one person."""

    channel: bool = False  # a broadcast channel, not a group
    command: str | None = None  # the command word as typed ("/water@other_bot"), None when it is no command
    replies_to_bot: bool = False  # a reply to one of this bot's messages


def addressed_bot(command: str) -> str | None:
    """'/water@Other_Bot' -> 'other_bot'; None for a command without a bot name."""
    _, at, name = command.partition("@")
    return name.strip().lower() if at and name.strip() else None


def group_verdict(message: GroupMessage, *, allow_groups: bool, bot_username: str) -> str:
    """LEAVE, IGNORE or READ for a message in a group (see the module docstring)."""
    if message.channel or not allow_groups:
        return LEAVE
    if message.command is not None:
        addressed = addressed_bot(message.command)
        if addressed is not None:
            return READ if addressed == bot_username.lower() else IGNORE
    return READ if message.replies_to_bot else IGNORE


def private_pointer(address: str) -> Text:
    """The one line in the group that says where the answer went (`address`: how to open the private chat)."""
    return tr("I answered you in our private chat: {address}", address=address)
