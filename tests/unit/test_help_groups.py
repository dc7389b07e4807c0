"""/help and the chat apps' command menus list every command a person can type: each command module is in exactly
one of /help's groups (a module left out, as reminders and learned facts once were, is a feature nobody finds)."""

from __future__ import annotations

from bot.commands.table import COMMAND_MODULES, HELP_GROUPS, command_menu


def test_every_command_module_is_in_exactly_one_help_group() -> None:
    grouped = [module for _, modules in HELP_GROUPS for module in modules]
    assert sorted(m.__name__ for m in grouped) == sorted(m.__name__ for m in COMMAND_MODULES)


def test_the_menu_offers_setting_reminders_and_the_learned_facts_in_both_languages() -> None:
    english, german = dict(command_menu("en")), dict(command_menu("de"))
    assert english["remind"] == "Set a reminder, or list them" and "facts" in english
    assert german["remind"] == "Eine Erinnerung stellen oder alle zeigen" and "facts" in german
