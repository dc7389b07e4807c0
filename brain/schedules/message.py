"""What a scheduled push says before it is rendered: lines of translatable text and rows of buttons, each a
label plus the action (kind and payload) its token will stand for. `render_push` turns it into the outbox
message in the person's language, with fresh tokens for the buttons."""

from __future__ import annotations

import secrets
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from brain.i18n import Renderer, Text
from brain.outbox.models import Button, Outbound


@dataclass(frozen=True)
class PushButton:
    label: Text | str
    kind: str  # an action kind the dialog handles: "command", "tool", "ritual", ...
    payload: Mapping[str, Any] = field(default_factory=dict)

    @property
    def single_use(self) -> bool:
        # A command button (e.g. "Show today") may be pressed again, like the dialog's own.
        return self.kind != "command"


@dataclass(frozen=True)
class PushMessage:
    lines: Sequence[Text | str]
    buttons: Sequence[Sequence[PushButton]] = ()


@dataclass(frozen=True)
class RenderedPush:
    outbound: Outbound
    # (token, button) for every button, so its action token can be stored once the message is enqueued.
    tokens: list[tuple[str, PushButton]]


def render_push(message: PushMessage, render: Renderer) -> RenderedPush:
    tokens: list[tuple[str, PushButton]] = []
    rows: list[list[Button]] = []
    for row in message.buttons:
        rendered = []
        for button in row:
            token = secrets.token_urlsafe(8)
            tokens.append((token, button))
            rendered.append(Button(label=render(button.label), token=token))
        rows.append(rendered)
    text = "\n".join(line for line in (render(line) for line in message.lines) if line)
    return RenderedPush(Outbound(text=text, buttons=rows), tokens)
