"""Compaction: when the live history of a person's conversation passes 0.6 x the model's input budget,
everything but the last 3 turns is folded into one summary (## Goal / ## Decisions / ## Progress) written by
the fast tier. The summary is stored as a `summary` row; the folded rows are archived, not deleted (they
stay for the person's record and are simply no longer sent). An earlier summary is folded into the new one.

Privacy as everywhere: the fast tier sees sensitive rows only if it may (local, or the person consented);
otherwise they reach it as placeholders, and the summary is marked sensitive only if it was made from them."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import TYPE_CHECKING

from sqlalchemy import update

from brain.companion.conversation import History, StoredMessage, message_tokens, transcript_text
from brain.companion.models import ConversationMessage

if TYPE_CHECKING:
    from brain.companion.llm import LLM, Tier
    from brain.kernel import Kernel

COMPACT_RATIO = 0.6
KEEP_TURNS = 3
SECTIONS = ("## Goal", "## Decisions", "## Progress")
MAX_TRANSCRIPT_CHARS = 60_000  # what the summariser reads at most (the newest part, if more)

SUMMARISER = """You fold the earlier part of a conversation between a person and their personal assistant into \
a short summary that will replace it. Write exactly these three sections, in this order:
## Goal
What the person wants (one or two lines).
## Decisions
What was decided or done: tool results that matter, proposals and whether they were approved or rejected.
## Progress
What is done and what is still open.
Keep names, numbers, dates and ids. Write in the language of the conversation. At most 200 words. If a \
section has nothing, write "-"."""


@dataclass(frozen=True)
class Compaction:
    history: History  # the live history after folding
    folded: int  # rows archived
    summary_tokens: int


def needs_compaction(history_tokens: int, input_tokens: int, ratio: float = COMPACT_RATIO) -> bool:
    return input_tokens > 0 and history_tokens > ratio * input_tokens


def rows_to_fold(history: History, keep_turns: int = KEEP_TURNS) -> tuple[list[StoredMessage],
                                                                          list[StoredMessage]]:
    """(rows to fold: the summary and every turn but the newest `keep_turns`, rows kept). Nothing to fold
    when there are no more turns than that."""
    turns = history.turns()
    if len(turns) <= keep_turns:
        return [], history.rows
    old = [row for turn in turns[:len(turns) - keep_turns] for row in turn]
    kept = [row for turn in turns[len(turns) - keep_turns:] for row in turn]
    return ([history.summary] if history.summary is not None else []) + old, kept


def shaped_summary(text: str) -> str:
    """The summary with all three sections; a reply without them becomes the Decisions section."""
    text = text.strip()
    if all(section in text for section in SECTIONS):
        return text[text.index(SECTIONS[0]):]
    return f"{SECTIONS[0]}\n-\n{SECTIONS[1]}\n{text or '-'}\n{SECTIONS[2]}\n-"


async def compact(brain: Kernel, llm: LLM, user_id: uuid.UUID, history: History, *, allow_sensitive: bool,
                  consent: bool, keep_turns: int = KEEP_TURNS, tier: Tier = "fast") -> Compaction | None:
    """Fold the history (see the module docstring); None when there is nothing to fold. Raises the LLM's
    ModelUnavailable when the summariser does not answer (nothing is changed then)."""
    fold, kept = rows_to_fold(history, keep_turns)
    if not any(row.kind != "summary" for row in fold):
        return None
    transcript, sensitive = transcript_text(fold, allow_sensitive=allow_sensitive)
    messages = [{"role": "system", "content": SUMMARISER},
                {"role": "user", "content": "The conversation so far:\n" + transcript[-MAX_TRANSCRIPT_CHARS:]}]
    reply = await llm.chat(tier, messages, sensitive=sensitive, consent=consent)
    summary = shaped_summary(reply.content)
    async with brain.transactions.begin() as uow:
        row = ConversationMessage(user_id=user_id, turn_id=uuid.uuid4(), at=uow.now, role="assistant", kind="summary",
                                  content=summary, tokens=message_tokens(summary), sensitive=sensitive)
        uow.session.add(row)
        await uow.session.execute(
            update(ConversationMessage)
            .where(ConversationMessage.user_id == user_id, ConversationMessage.id.in_([r.id for r in fold]))
            .values(archived=True))
    return Compaction(History(row, kept), folded=len(fold), summary_tokens=row.tokens)
