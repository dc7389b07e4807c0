"""A Telegram update as an `Inbound` for the dialog: a text or command, a shared location, a voice note (voice or
audio) or a photo as `Media` whose download runs only when the dialog asks for it, any other message (the dialog says it
reads text only), or a button press whose callback data is the action token. Pure functions over
python-telegram-bot's objects; updates the bot does not act on give None."""

from __future__ import annotations

import warnings
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta

from telegram import Audio, CallbackQuery, Chat, Message, User, Voice
from telegram.constants import ChatType
from telegram.warnings import PTBDeprecationWarning

from bot.groups import GroupMessage
from bot.inbound import Inbound, Media

PLATFORM = "telegram"


@dataclass(frozen=True)
class Press:
    """A button press: the inbound for the dialog and where the pressed message is (to edit its keyboard)."""

    inbound: Inbound
    chat_type: str | None
    message_id: int | None
    question: tuple[str, ...] = ()  # the tokens of every button of the pressed message


def _display_name(user: User) -> str:
    return " ".join(part for part in (user.first_name, user.last_name) if part)[:128]


def message_inbound(message: Message, *, edited: bool = False) -> Inbound | None:
    """A message from a person (not a bot, not a channel post); `edited`: an edit of an earlier one. A forwarded
    message is marked so: someone else's words are never run or logged."""
    sender = message.from_user
    if sender is None or sender.is_bot:
        return None
    location = message.location or (message.venue.location if message.venue else None)
    text = message.text  # a command stays text: the dialog routes "/water 250" itself
    return Inbound(
        platform=PLATFORM, platform_user_id=str(sender.id), chat_id=str(message.chat.id),
        # An edit keeps the message's id: its own (the reply's outbox slot is made of it) tells each edit apart.
        message_id=f"edit:{message.message_id}:{_edit_time(message)}" if edited else str(message.message_id),
        text=text, display_name=_display_name(sender) or None,
        language_code=sender.language_code, username=sender.username,
        location=(location.latitude, location.longitude) if location is not None and text is None else None,
        media=_media(message) if text is None and not edited else None,
        edited=edited, forwarded=message.forward_origin is not None,
    )


def _edit_time(message: Message) -> int:
    return int(message.edit_date.timestamp()) if message.edit_date is not None else 0


def _media(message: Message) -> Media | None:
    """A voice note (`voice`), a sent audio file (`audio`) or a photo (its largest size), described as Telegram
    reports it."""
    if message.photo:
        largest = message.photo[-1]
        return Media(kind="photo", fetch=_download(message, largest.file_id), size=largest.file_size,
                     mime="image/jpeg", file_name="photo.jpg", caption=message.caption,
                     media_id=largest.file_unique_id)
    sound = message.voice or message.audio
    if sound is None:
        return None
    name = getattr(sound, "file_name", None) or ("voice.ogg" if message.voice is not None else "audio")
    return Media(kind="voice", fetch=_download(message, sound.file_id), duration_s=_seconds(sound),
                 size=sound.file_size, mime=sound.mime_type, file_name=name, media_id=sound.file_unique_id)


def _seconds(sound: Voice | Audio) -> int:
    """The duration in whole seconds, whichever type this version of the library reports it as."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", PTBDeprecationWarning)  # the int form is deprecated in favour of timedelta
        duration = sound.duration
    return int(duration.total_seconds()) if isinstance(duration, timedelta) else int(duration)


def _download(message: Message, file_id: str) -> Callable[[], Awaitable[bytes]]:
    """getFile, then the file's bytes (in memory only), through the bot the update came with."""

    async def fetch() -> bytes:
        found = await message.get_bot().get_file(file_id)
        return bytes(await found.download_as_bytearray())

    return fetch


def press_inbound(query: CallbackQuery) -> Press | None:
    """A pressed inline button; the callback data is the opaque action token. Buttons on messages the bot
    cannot see any more (inline mode, very old messages) still act; only the keyboard edit needs the message."""
    if query.from_user is None or query.from_user.is_bot or not query.data:
        return None
    message = query.message
    chat_id = str(message.chat.id) if message is not None else str(query.from_user.id)
    chat_type = message.chat.type if message is not None else None
    return Press(
        inbound=Inbound(
            platform=PLATFORM, platform_user_id=str(query.from_user.id), chat_id=chat_id,
            # Unique per press: the reply's outbox slot is made of it.
            message_id=f"cb:{query.id}", action=query.data, display_name=_display_name(query.from_user) or None,
            language_code=query.from_user.language_code, username=query.from_user.username,
        ),
        chat_type=chat_type,
        message_id=message.message_id if message is not None else None,
        question=_keyboard_tokens(message),
    )


def _keyboard_tokens(message: object) -> tuple[str, ...]:
    markup = getattr(message, "reply_markup", None)
    if markup is None:
        return ()
    return tuple(str(button.callback_data) for row in markup.inline_keyboard for button in row
                 if isinstance(button.callback_data, str))


def group_message(message: Message, bot_id: int) -> GroupMessage:
    """A message in a group, supergroup or channel as the group policy reads it (`bot.groups`)."""
    text = message.text or ""
    command = text.split(maxsplit=1)[0] if text.startswith("/") else None
    replied = message.reply_to_message
    replies_to_bot = replied is not None and replied.from_user is not None and replied.from_user.id == bot_id
    return GroupMessage(channel=message.chat.type == ChatType.CHANNEL, command=command, replies_to_bot=replies_to_bot)


def is_private(chat: Chat | None) -> bool:
    return chat is None or chat.type == ChatType.PRIVATE
