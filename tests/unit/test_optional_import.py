"""optional_module: a missing part is None, a broken part is not hidden."""

from __future__ import annotations

import sys

import pytest

from brain.optional_import import optional_module


def test_missing_module_or_package_is_none() -> None:
    assert optional_module("brain.no_such_package.tools") is None
    assert optional_module("brain.modules.drink.no_such_file") is None


def test_existing_module_is_imported() -> None:
    module = optional_module("brain.modules.drink.tools")
    assert module is not None and hasattr(module, "TOOLS")


def test_a_missing_import_inside_an_existing_module_is_raised(tmp_path, monkeypatch) -> None:
    (tmp_path / "broken_part.py").write_text("import no_such_dependency_anywhere\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    with pytest.raises(ModuleNotFoundError):
        optional_module("broken_part")
    sys.modules.pop("broken_part", None)
