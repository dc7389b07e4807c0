"""One turn of the dialog for one person: runs tool calls as that person, collects replies with
buttons, and writes them (with their action tokens) to the outbox in one transaction at the end."""

from __future__ import annotations

import secrets
import uuid
from dataclasses import dataclass, field
from datetime import date, datetime, timedelta
from typing import Any

from sqlalchemy.dialects.postgresql import insert

from bot.inbound import Inbound
from bot.models import DeliveryState
from brain.actions.service import DEFAULT_TTL
from brain.core import Brain
from brain.events.actor import USER
from brain.i18n import Renderer, Text, tr
from brain.outbox.models import Button, Outbound
from brain.outbox.service import enqueue
from brain.people.local_time import local_date
from brain.people.models import User
from brain.tools.spec import ToolResult

# The action kinds of a proposal's Approve and Reject buttons (handled by bot.commands.proposals).
APPROVE = "proposal_approve"
REJECT = "proposal_reject"
NO_REASON = "proposal_no_reason"  # the "No reason" button after a rejection; unused, it waits for the reason


@dataclass
class PendingButton:
    label: str
    kind: str
    payload: dict[str, Any]
    token: str = field(default_factory=lambda: secrets.token_urlsafe(8))


@dataclass
class Reply:
    text: str
    buttons: list[list[PendingButton]] = field(default_factory=list)
    image_png: bytes | None = None
    document: bytes | None = None  # a file sent with the text as its caption (e.g. the /export JSON)
    document_name: str | None = None
    markdown: bool = False  # the language model's answer: Markdown the platform shows formatted
    asks_reply: bool = False  # a question the person answers with their next message
    shown: list[str] | None = None  # the messages that showed it while it was written (`bot.delivery.stream`)


class Turn:
    def __init__(self, brain: Brain, user: User, inbound: Inbound) -> None:
        self.brain = brain
        self.user = user
        self.inbound = inbound
        self.render = Renderer(user.locale, user.timezone)
        self.replies: list[Reply] = []
        # Whether the companion's model answered (its words are conversation worth remembering; a canned reply such
        # as "Logged 250 ml water" or "I didn't understand that" is not).
        self.model_answered = False
        # Free text the rule-based path ran as a command or an entry ("zwei Kaffee", "sprich Deutsch", "remind me at
        # 5 ..."): like a command, what it changed is in the logs, so it is no conversation to remember.
        self.ran_as_entry = False
        # A voice note's words as shown on top of the first reply ("🎙 …"): the person's words, not the answer.
        self.heard_line: str | None = None

    @property
    def now(self) -> datetime:
        return self.brain.clock.now()

    @property
    def today(self) -> date:
        return local_date(self.user, self.now)

    def t(self, text: Text | str) -> str:
        return self.render(text)

    def button(self, label: Text | str, kind: str, **payload: Any) -> PendingButton:
        return PendingButton(self.t(label), kind, payload)

    def tool_button(self, label: Text | str, name: str, **args: Any) -> PendingButton:
        return self.button(label, "tool", name=name, args=args)

    def say(self, *lines: Text | str | None, buttons: list[list[PendingButton]] | None = None,
            image_png: bytes | None = None, document: bytes | None = None, document_name: str | None = None) -> None:
        text = "\n".join(self.t(line) for line in lines if line is not None)
        self.replies.append(Reply(text, buttons or [], image_png, document, document_name))

    def say_markdown(self, text: str, buttons: list[list[PendingButton]] | None = None) -> None:
        """The language model's answer, as it wrote it (Markdown, rendered by each platform)."""
        self.replies.append(Reply(text, buttons or [], markdown=True))

    def ask(self, *lines: Text | str) -> None:
        """A question whose answer is the person's next message (Telegram opens the reply field for it)."""
        self.replies.append(Reply("\n".join(self.t(line) for line in lines), asks_reply=True))

    async def tool(self, name: str, args: dict[str, Any] | None = None, *,
                   caused_by: uuid.UUID | None = None) -> ToolResult:
        # The person as read for this turn (commands that change their settings update `self.user` too).
        return await self.brain.tools.execute(self.user.id, name, args or {}, USER, caused_by=caused_by,
                                              user=self.user)

    def proposal_buttons(self, proposal_id: str | uuid.UUID) -> list[list[PendingButton]]:
        """One row: Approve and Reject for this proposal (the action token checks the owner when pressed)."""
        pid = str(proposal_id)
        return [[self.button(tr("Approve"), APPROVE, proposal_id=pid),
                 self.button(tr("Reject"), REJECT, proposal_id=pid)]]

    def say_result(self, result: ToolResult, buttons: list[list[PendingButton]] | None = None) -> None:
        """Say a tool's result; a staged AI call (data `proposal_id`) gets its Approve / Reject buttons."""
        if result.message is None:
            return
        if result.ok and result.data.get("proposal_id"):
            buttons = [*self.proposal_buttons(str(result.data["proposal_id"])), *(buttons or [])]
        self.say(result.message, buttons=buttons if result.ok else None)

    async def flush(self) -> list[Outbound]:
        """Persist replies to the outbox, each with its buttons' tokens in the same statement. One reply commits
        on its own; several go in one transaction, so no reply is stored without the others. A reply shown while
        it was written is stored with the ids of the messages that showed it, in the same transaction: the delivery
        finishes those messages instead of sending the reply again."""
        if not self.replies:
            return []
        expires = self.brain.clock.now() + DEFAULT_TTL
        pending: list[tuple[Outbound, list[dict[str, Any]]]] = []
        for reply in self.replies:
            rows = [[Button(label=b.label, token=b.token) for b in row] for row in reply.buttons]
            tokens = [{"token": b.token, "kind": b.kind, "payload": b.payload, "single_use": b.kind != "command"}
                      for row in reply.buttons for b in row]
            pending.append((Outbound(text=reply.text, buttons=rows, image_png=reply.image_png,
                                     document=reply.document, document_name=reply.document_name,
                                     markdown=reply.markdown, asks_reply=reply.asks_reply), tokens))
        db = self.brain.db
        alone = len(pending) == 1 and self.replies[0].shown is None
        if not alone:
            await db.release()  # not two connections at once (`Database.sharing`)
        async with db.autocommit() if alone else db.engine.begin() as connection:
            for index, ((message, tokens), reply) in enumerate(zip(pending, self.replies, strict=True)):
                row = await enqueue(
                    connection, self.user.id, message, kind=message.kind,
                    slot=f"{self.inbound.platform}:{self.inbound.chat_id}:{self.inbound.message_id}:{index}",
                    platform=self.inbound.platform, chat_id=self.inbound.chat_id, tokens=tokens, expires_at=expires,
                )
                if row is not None and reply.shown:
                    await connection.execute(insert(DeliveryState).values(
                        user_id=self.user.id, outbox_id=row, parts_sent=0, not_before=None, in_flight=False,
                        shown=reply.shown))
        return [message for message, _ in pending]


TOKEN_TTL = timedelta(days=2)
