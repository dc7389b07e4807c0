"""The pure rules of `bot.access`: who an allowlist names, how accounts are written on the command line, and what an
invite code looks like in a message."""

from __future__ import annotations

import pytest

from bot.access import AccessPolicy, Sender, code_hash, invite_code_in, listed, new_code, parse_account
from bot.inbound import Inbound
from bot.log_format import SecretMask
from bot.settings import SettingsError, load_settings, masked


def test_a_telegram_allowlist_names_ids_and_usernames_in_any_case() -> None:
    entries = ("12345", "@alice_w")
    assert listed(Sender("telegram", "12345"), entries)
    assert listed(Sender("telegram", "999", "Alice_W"), entries)
    assert not listed(Sender("telegram", "999", "bob"), entries)
    assert not listed(Sender("telegram", "999"), entries)  # no username: only the id counts
    assert not listed(Sender("telegram", "12345"), ())


def test_a_matrix_allowlist_names_ids_and_whole_servers() -> None:
    entries = ("@alice:example.org", "example.net")
    assert listed(Sender("matrix", "@alice:example.org"), entries)
    assert listed(Sender("matrix", "@bob:example.net"), entries)
    assert not listed(Sender("matrix", "@bob:example.org"), entries)


def test_accounts_on_the_command_line() -> None:
    assert parse_account("telegram:12345") == ("telegram", "12345")
    assert parse_account("Telegram:@Alice") == ("telegram", "@alice")
    assert parse_account("matrix:@alice:example.org") == ("matrix", "@alice:example.org")
    for bad in ("12345", "telegram:alice", "matrix:alice", "signal:123", "telegram:"):
        with pytest.raises(ValueError):
            parse_account(bad)


def test_an_invite_code_is_read_from_start_only() -> None:
    def inbound(text: str | None, action: str | None = None) -> Inbound:
        return Inbound("telegram", "1", "1", "m", text=text, action=action)

    code = new_code()
    assert invite_code_in(inbound(f"/start {code}")) == code
    assert invite_code_in(inbound(f"!start {code.lower()}")) == code
    assert invite_code_in(inbound(f"/start@companion_bot {code[:5]}-{code[5:]}")) == code
    assert invite_code_in(inbound("/start")) is None
    assert invite_code_in(inbound(f"/link {code}")) is None
    assert invite_code_in(inbound(f"start {code}")) is None
    assert code_hash(code.lower()) == code_hash(code) and len(code_hash(code)) == 64


def test_codes_work_only_where_no_allowlist_is_set() -> None:
    policy = AccessPolicy(allowlists={"telegram": ("12345",)})
    assert policy.pairs("matrix") and not policy.pairs("telegram")
    assert not AccessPolicy.open().pairs("matrix")  # open: nothing to pair


def test_the_telegram_allowlist_setting_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TELEGRAM_ALLOWED_USERS", "12345, @Alice_W")
    assert load_settings().telegram_allowed_user_list == ("12345", "@alice_w")
    monkeypatch.setenv("TELEGRAM_ALLOWED_USERS", "alice")
    with pytest.raises(SettingsError, match="TELEGRAM_ALLOWED_USERS"):
        load_settings()
    monkeypatch.delenv("TELEGRAM_ALLOWED_USERS")
    monkeypatch.delenv("COMPANION_ACCESS", raising=False)
    assert load_settings(_env_file=None).companion_access == "pairing"  # the product's default is closed


def test_a_secret_shows_four_characters_at_most() -> None:
    assert masked("123456:ABCDEFGHIJ") == "1234…"
    assert masked("short") == "…"
    assert SecretMask(("123456:ABCDEFGHIJ",)).hide("bot123456:ABCDEFGHIJ/getMe") == "bot1234…/getMe"
