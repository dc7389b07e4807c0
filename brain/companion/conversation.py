"""The companion conversation, stored and as the model sees it: the live history (the latest summary, then
every message that was not folded into it), the Ollama message shape of each row, and one turn's messages
written in one transaction. System prompts and reminders are never stored."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol, cast

from sqlalchemy import Table, bindparam, insert, select
from sqlalchemy.ext.asyncio import AsyncSession

from brain.companion.models import ConversationMessage
from brain.context import estimate_tokens
from brain.tools.coercion import UNSTORABLE

# What a remote model that may not see sensitive content gets instead of a withheld row.
WITHHELD_TOOL = json.dumps({"ok": True, "message": "(withheld: this model may not see this kind of data)"})
WITHHELD_TEXT = "(withheld: this message refers to data this model may not see)"
SUMMARY_PREFIX = "Summary of the earlier conversation:\n"


@dataclass
class TurnMessage:
    """One message of a running turn, as it will be stored (and as the model saw it)."""

    role: str  # user | assistant | tool
    content: str
    tool_name: str | None = None
    tool_calls: list[dict[str, Any]] | None = None
    sensitive: bool = False

    def as_model(self) -> dict[str, Any]:
        return model_message(self.role, self.content, self.tool_name, self.tool_calls)

    @property
    def tokens(self) -> int:
        return message_tokens(self.content, self.tool_calls)


class StoredMessage(Protocol):
    """A stored message as the history uses it: a row of `conversation_messages` as read for a turn (a plain
    row, see `load_history`) or a `ConversationMessage` (the summary compaction has just written)."""

    @property
    def id(self) -> int: ...
    @property
    def turn_id(self) -> uuid.UUID: ...
    @property
    def role(self) -> str: ...
    @property
    def kind(self) -> str: ...
    @property
    def content(self) -> str: ...
    @property
    def tool_name(self) -> str | None: ...
    @property
    def tool_calls(self) -> list[dict[str, Any]] | None: ...
    @property
    def tokens(self) -> int: ...
    @property
    def sensitive(self) -> bool: ...


@dataclass
class History:
    """The live rows of one person's conversation: the summary (if any) and the messages after it, in order."""

    summary: StoredMessage | None
    rows: list[StoredMessage] = field(default_factory=list)

    @property
    def all_rows(self) -> list[StoredMessage]:
        return ([self.summary] if self.summary is not None else []) + self.rows

    @property
    def tokens(self) -> int:
        return sum(row.tokens or message_tokens(row.content, row.tool_calls) for row in self.all_rows)

    def turns(self) -> list[list[StoredMessage]]:
        """The message rows grouped by turn, oldest turn first (a turn's rows stay in their order)."""
        grouped: dict[uuid.UUID, list[StoredMessage]] = {}
        for row in self.rows:
            grouped.setdefault(row.turn_id, []).append(row)
        return list(grouped.values())

    def model_messages(self, *, allow_sensitive: bool, keep_turns: int | None = None) -> tuple[list[dict[str, Any]],
                                                                                                bool]:
        """The history as model messages, and whether any sensitive content is in them. Without
        `allow_sensitive`, sensitive rows are replaced by a short placeholder (the shape of the conversation
        stays: a tool call still gets its answer). `keep_turns` keeps only the newest turns."""
        turns = self.turns()
        if keep_turns is not None:
            turns = turns[-keep_turns:] if keep_turns > 0 else []
        messages: list[dict[str, Any]] = []
        sensitive = False
        rows = ([self.summary] if self.summary is not None else []) + [row for turn in turns for row in turn]
        for row in rows:
            message, carried = row_message(row, allow_sensitive=allow_sensitive)
            messages.append(message)
            sensitive = sensitive or carried
        return messages, sensitive


def message_tokens(content: str, tool_calls: Sequence[dict[str, Any]] | None = None) -> int:
    """Estimated tokens of one message (content plus the JSON of its tool calls)."""
    extra = len(json.dumps(tool_calls, ensure_ascii=False, default=str)) if tool_calls else 0
    return estimate_tokens(content) + (extra + 3) // 4


def model_message(role: str, content: str, tool_name: str | None = None,
                  tool_calls: Sequence[dict[str, Any]] | None = None) -> dict[str, Any]:
    message: dict[str, Any] = {"role": role, "content": content}
    if role == "tool" and tool_name:
        message["tool_name"] = tool_name
    if tool_calls:
        message["tool_calls"] = [dict(c) for c in tool_calls]
    return message


def row_message(row: StoredMessage, *, allow_sensitive: bool) -> tuple[dict[str, Any], bool]:
    """One stored row as a model message, and whether it carries sensitive content."""
    if row.kind == "summary":
        content = SUMMARY_PREFIX + (row.content if allow_sensitive or not row.sensitive else WITHHELD_TEXT)
        return {"role": "system", "content": content}, row.sensitive and allow_sensitive
    if not row.sensitive or allow_sensitive:
        return model_message(row.role, row.content, row.tool_name, row.tool_calls), row.sensitive
    if row.role == "tool":
        return model_message("tool", WITHHELD_TOOL, row.tool_name), False
    if row.role == "assistant":
        calls = [{"function": {"name": str(c.get("function", {}).get("name", "")), "arguments": {}}}
                 for c in (row.tool_calls or [])]
        return model_message("assistant", WITHHELD_TEXT if row.content else "", None, calls or None), False
    return model_message(row.role, WITHHELD_TEXT), False


async def load_history(session: AsyncSession, user_id: uuid.UUID) -> History:
    """The live conversation: the newest summary row and the non-archived messages, oldest first."""
    # Plain rows (a Core select of the table's columns): a turn only reads them, and ORM objects for a few
    # dozen rows cost a turn more CPU than the statement itself.
    rows = cast(list[StoredMessage], list((await session.execute(_LIVE, {"user_id": user_id})).all()))
    summaries = [row for row in rows if row.kind == "summary"]
    return History(summaries[-1] if summaries else None, [row for row in rows if row.kind != "summary"])


async def store_turn(session: AsyncSession, user_id: uuid.UUID, turn_id: uuid.UUID, at: datetime,
                     messages: Iterable[TurnMessage]) -> int:
    """Inserts the turn's messages in their order, in one statement (the caller's transaction commits them).
    Returns how many."""
    rows = [{"user_id": user_id, "turn_id": turn_id, "at": at, "role": m.role, "kind": "message",
             "content": _storable(m.content), "tool_name": _storable(m.tool_name),
             "tool_calls": _storable(m.tool_calls), "tokens": m.tokens, "archived": False, "sensitive": m.sensitive}
            for m in messages]
    if rows:
        # One executemany of one cached Core statement (every row has every column, so it is one statement;
        # the ORM's bulk insert would split rows by their set of non-null columns unless told not to, and
        # costs more CPU for nothing here); rows go in in order, so ids keep the conversation's order.
        await session.execute(_INSERT, rows)
    return len(rows)


_TABLE = cast(Table, ConversationMessage.__table__)
_INSERT = insert(_TABLE)
_LIVE = (select(_TABLE).where(_TABLE.c.user_id == bindparam("user_id"), _TABLE.c.archived.is_(False))
         .order_by(_TABLE.c.id))


def _storable(value: Any) -> Any:
    """`value` with what PostgreSQL cannot store in text or JSON (a NUL byte, a lone surrogate: a model may send
    either) replaced by U+FFFD, so that a garbled answer does not lose the whole turn."""
    if isinstance(value, str):
        return UNSTORABLE.sub("\ufffd", value)
    if isinstance(value, dict):
        return {_storable(k): _storable(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_storable(v) for v in value]
    return value


def transcript_text(rows: Iterable[StoredMessage], *, allow_sensitive: bool) -> tuple[str, bool]:
    """Rows as plain text for the summariser ("[user] ...", "[tool log_drink] ..."), and whether sensitive
    content is in it."""
    lines: list[str] = []
    sensitive = False
    for row in rows:
        message, carried = row_message(row, allow_sensitive=allow_sensitive)
        sensitive = sensitive or carried
        if row.kind == "summary":
            lines.append(f"[earlier summary] {message['content'].removeprefix(SUMMARY_PREFIX)}")
            continue
        label = f"tool {row.tool_name}" if row.role == "tool" else row.role
        text = str(message.get("content") or "")
        for call in message.get("tool_calls") or []:
            function = call.get("function", {})
            text += f" (calls {function.get('name')} {json.dumps(function.get('arguments'), ensure_ascii=False)})"
        lines.append(f"[{label}] {text.strip()}")
    return "\n".join(lines), sensitive
