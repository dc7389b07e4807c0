"""Terminal chat adapter. Reads lines until end of input (so it can be scripted with a pipe), hands
each to the dialog, then prints this person's pending outbox rows through the one outbox delivery
(`bot.delivery`; the terminal is the transport, the person's chat is their name). A companion answer is printed
as the model writes it (`PrintedAnswer`); its outbox row then prints only what follows the words (its buttons).
A bare number picks one of the numbered buttons of the last reply; `/quit` or `/exit` (or the end of input) ends
the chat."""

from __future__ import annotations

import asyncio
import getpass
import sys
import tempfile
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TextIO

from bot.delivery.pushes import PrivateChat
from bot.delivery.sender import OutboxSender
from bot.delivery.stream import Shown
from bot.delivery.transport import Outgoing
from bot.dialog import Dialog
from bot.inbound import Inbound
from bot.render.markdown import plain_text
from bot.settings import Settings
from brain.core import Brain
from brain.i18n import Renderer, tr
from brain.outbox.models import Button, Outbound

PLATFORM = "console"
# Lines that end the chat (what people type to leave a terminal program), in any case.
QUIT_WORDS = frozenset({"/quit", "/exit", "/q", "/beenden", "/ende"})


@dataclass(frozen=True)
class ConsoleConfig:
    """Where the chat reads and writes, who is writing (the machine's user by default), and where pictures and
    files are saved (a terminal cannot show them)."""

    stdin: TextIO = field(default_factory=lambda: sys.stdin)
    stdout: TextIO = field(default_factory=lambda: sys.stdout)
    person: str | None = None
    pictures_dir: Path | None = None

    @classmethod
    def from_settings(cls, settings: Settings) -> ConsoleConfig:
        return cls(pictures_dir=settings.data_dir / "pictures")


class ConsoleChat:
    """The terminal chat of one person, and its outbox transport: a message is printed in one part."""

    platform = PLATFORM
    idempotent = False  # a line printed again after a crash would read as said twice

    def __init__(self, brain: Brain, dialog: Dialog, config: ConsoleConfig) -> None:
        self.brain = brain
        self.dialog = dialog
        self.config = config
        self.stdin = config.stdin
        self.stdout = config.stdout
        self.person = config.person or _local_person()
        self.choices: list[Button] = []
        self.pictures_dir = config.pictures_dir or Path(tempfile.gettempdir()) / "companion-pictures"
        self.sender = OutboxSender(brain, self, PrivateChat(PLATFORM))
        self._printed: list[Button] = []  # the numbered buttons of the drain under way

    def _inbound(self, *, text: str | None = None, action: str | None = None) -> Inbound:
        return Inbound(platform=PLATFORM, platform_user_id=self.person, chat_id=self.person,
                       message_id=uuid.uuid4().hex[:16], text=text, action=action, display_name=None)

    async def run(self) -> int:
        interactive = self.stdin.isatty()
        loop = asyncio.get_running_loop()
        # The person exists before the first line (their pushes), and is at the terminal: no reminder interrupts the
        # first minutes (the idle hold), as after a first message on a chat app.
        user = await self.dialog.user_for(self._inbound(), writing=True)
        if interactive:
            greeting = tr("Companion. /help lists what I understand; /quit or Ctrl-D ends the chat.")
            self.stdout.write(Renderer(user.locale, user.timezone)(greeting) + "\n")
        while True:
            if interactive:
                self.stdout.write("> ")
                self.stdout.flush()
            line = await loop.run_in_executor(None, self.stdin.readline)
            if line == "":
                break
            text = line.strip()
            if not text:
                continue
            if text.lower() in QUIT_WORDS:
                break
            if text.isascii() and text.isdigit() and self.choices and 1 <= int(text) <= len(self.choices):
                inbound = self._inbound(action=self.choices[int(text) - 1].token)
            else:
                inbound = self._inbound(text=text)
            live = PrintedAnswer(self.stdout) if self.brain.companion is not None else None
            await self.dialog.handle(inbound, live=live)
            await self.drain()
        if interactive:
            self.stdout.write("\n")
        return 0

    async def drain(self) -> None:
        """Print and settle every pending message of this chat, oldest first: the person's replies and pushes
        (after /delete_me, also the goodbye to the person who was). A bare number then picks among the buttons
        printed by this drain."""
        self._printed = []
        await self.sender.deliver(self.person)
        self.choices = self._printed
        self.stdout.flush()

    # ---- the outbox transport (`bot.delivery.transport.Transport`) ----------------------------------------
    def parts(self, message: Outbound) -> Sequence[Outbound]:
        return [message]

    async def throttle(self, chat_id: str) -> None:
        """A terminal takes any rate."""

    async def send(self, outgoing: Outgoing, part: Outbound) -> None:
        self._print(part, self._printed)

    # ---- an answer printed while it was written (`bot.delivery.stream.Finishing`) ---------------------------
    async def finish(self, outgoing: Outgoing, message_id: str, part: Outbound) -> None:
        """Its words are on the screen already: what follows them (buttons, a picture)."""
        self._print(part, self._printed, words=False)

    async def retract(self, chat_id: str, message_id: str) -> None:
        """Printed lines stay."""

    def _print(self, message: Outbound, choices: list[Button], *, words: bool = True) -> None:
        if words:
            # A model's answer shows its words without the Markdown markers (a terminal shows no formatting).
            self.stdout.write((plain_text(message.text) if message.markdown else message.text) + "\n")
        if message.image_png is not None:
            # A terminal cannot show the picture: save it and say where it is.
            self.pictures_dir.mkdir(parents=True, exist_ok=True)
            path = self.pictures_dir / f"{uuid.uuid4().hex[:12]}.png"
            path.write_bytes(message.image_png)
            self.stdout.write(f"  [picture: {path}]\n")
        if message.document is not None:
            # Saved under its own name in a folder of its own, so two files of one day do not overwrite each other.
            folder = self.pictures_dir / uuid.uuid4().hex[:12]
            folder.mkdir(parents=True, exist_ok=True)
            path = folder / Path(message.document_name or "file").name
            path.write_bytes(message.document)
            self.stdout.write(f"  [file: {path}]\n")
        if message.buttons:
            labels = []
            for button in message.flat_buttons():
                choices.append(button)
                labels.append(f"[{len(choices)}] {button.label}")
            self.stdout.write("  " + "   ".join(labels) + "\n")


class PrintedAnswer:
    """A companion answer printed as the model writes it (`bot.delivery.stream.AnswerStream`): its outbox row is
    then shown already, and only its buttons follow."""

    PRINTED = "printed"  # the one "message" of a terminal

    def __init__(self, stdout: TextIO) -> None:
        self.stdout = stdout
        self.text = ""
        self._closed = False

    async def piece(self, text: str) -> None:
        if self._closed:
            return
        if not self.text:
            text = text.lstrip()  # the answer is stored stripped
        if text:
            self.stdout.write(text)
            self.stdout.flush()
            self.text += text

    async def close(self) -> Shown | None:
        if not self.text:
            return None
        if not self._closed:
            self._closed = True
            self.stdout.write("\n")
        return Shown([self.PRINTED], [self.text])


def _local_person() -> str:
    try:
        return getpass.getuser()
    except Exception:
        return "local"
