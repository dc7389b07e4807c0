"""Re-extract message ids and update the German and English catalogues.

English is the source language, so each English entry gets its msgid as translation; German entries
that are new or changed are listed so a person translates them (the test suite fails until they are).
Run with `make locales-sync`.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from babel.messages.pofile import read_po, write_po

ROOT = Path(__file__).resolve().parent.parent
LOCALES = ROOT / "locales"


def main() -> int:
    pybabel = str(Path(sys.executable).with_name("pybabel"))
    subprocess.run([pybabel, "-q", "extract"], cwd=ROOT, check=True)
    for lang in ("de", "en"):
        po = LOCALES / lang / "LC_MESSAGES" / "messages.po"
        if not po.exists():
            subprocess.run([pybabel, "-q", "init", "-l", lang, "-i", "locales/messages.pot", "-d", "locales"],
                           cwd=ROOT, check=True)
    subprocess.run([pybabel, "-q", "update", "--no-fuzzy-matching", "--ignore-obsolete"], cwd=ROOT, check=True)
    en_path = LOCALES / "en" / "LC_MESSAGES" / "messages.po"
    with en_path.open("rb") as f:
        en = read_po(f, locale="en")
    for message in en:
        if not message.id:
            continue
        if isinstance(message.id, tuple | list):
            message.string = tuple(message.id)
        elif not message.string:
            message.string = message.id
        message.flags.discard("fuzzy")
    with en_path.open("wb") as f:
        write_po(f, en, width=100, sort_by_file=True)
    de_path = LOCALES / "de" / "LC_MESSAGES" / "messages.po"
    with de_path.open("rb") as f:
        de = read_po(f, locale="de")
    missing = [m.id for m in de if m.id and (not m.string or (isinstance(m.string, tuple) and not all(m.string)))]
    for msgid in missing:
        print(f"untranslated (de): {msgid!r}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
