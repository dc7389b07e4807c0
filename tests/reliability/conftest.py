"""Fixtures shared by the reliability suites: the fake Bot API of the Telegram tests, started per test."""

from tests.telegram.conftest import api  # noqa: F401  (the fake Bot API on 127.0.0.1)
