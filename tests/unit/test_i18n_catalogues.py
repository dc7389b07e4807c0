"""Every message id in the code has a German and an English translation, and placeholders survive
translation (a German text must not drop or rename `{ml}`)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest
from babel.messages.pofile import read_po

from brain.i18n import Renderer, tr
from brain.onboarding.zones import zone_name

ROOT = Path(__file__).resolve().parents[2]
PLACEHOLDER = re.compile(r"\{(\w+)\}")


@pytest.fixture(scope="module")
def extracted(tmp_path_factory: pytest.TempPathFactory) -> set[str]:
    out = tmp_path_factory.mktemp("pot") / "messages.pot"
    pybabel = Path(sys.executable).with_name("pybabel")
    subprocess.run([str(pybabel), "-q", "extract", "-o", str(out)], cwd=ROOT, check=True)
    with out.open("rb") as f:
        return {str(m.id if isinstance(m.id, str) else m.id[0]) for m in read_po(f) if m.id}


def _catalogue(lang: str) -> dict[str, object]:
    with (ROOT / "locales" / lang / "LC_MESSAGES" / "messages.po").open("rb") as f:
        catalog = read_po(f, locale=lang)
    return {
        str(m.id if isinstance(m.id, str) else m.id[0]): m.string
        for m in catalog if m.id and "fuzzy" not in m.flags
    }


@pytest.mark.parametrize("lang", ["de", "en"])
def test_every_message_id_has_a_translation(extracted: set[str], lang: str) -> None:
    catalog = _catalogue(lang)
    missing = sorted(
        msgid for msgid in extracted
        if not catalog.get(msgid) or (isinstance(catalog[msgid], tuple) and not all(catalog[msgid]))  # type: ignore[arg-type]
    )
    assert not missing, f"{len(missing)} ids lack a {lang} translation (run `make locales-sync`): {missing[:10]}"


def test_german_translations_keep_their_placeholders() -> None:
    for msgid, string in _catalogue("de").items():
        strings = string if isinstance(string, tuple) else (string,)
        for s in strings:
            if s:
                assert set(PLACEHOLDER.findall(str(s))) <= set(PLACEHOLDER.findall(msgid)) | {"count"}, (msgid, s)


@pytest.mark.parametrize("locale, zone, named", [
    ("en", "Europe/Berlin", "Berlin (Central European Time)"),
    ("de", "Europe/Berlin", "Berlin (Mitteleuropäische Zeit)"),
    ("de", "Asia/Tokyo", "Tokio (Japanische Zeit)"),
    ("en", "UTC", "UTC"), ("de", "Etc/UTC", "UTC"),
    ("en", "Etc/GMT-3", "Etc/GMT-3"),  # no city and no common name: the key is all there is
])
def test_a_zone_is_named_as_people_name_it(locale: str, zone: str, named: str) -> None:
    assert zone_name(zone, locale) == named


@pytest.mark.parametrize(("locale", "value", "written"), [
    ("en", 1234567, "1,234,567"), ("de", 1234567, "1.234.567"), ("de", 2.5, "2,5"),
    # Past Babel's decimal precision (it raised for 10**26): an echo of bad input, written as typed.
    ("en", 10**26, "1" + "0" * 26), ("de", -(10**40), "-1" + "0" * 40), ("en", 1.5e30, "1.5e+30"),
])
def test_a_number_in_a_reply_is_written_in_the_language_and_never_breaks_it(locale: str, value: float,
                                                                           written: str) -> None:
    assert Renderer(locale, "Europe/Berlin")(tr("no. {number}", number=value)).endswith(written)
