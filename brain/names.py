"""When two spellings are one name: "Jürgen", "Juergen" and "Jurgen", "Café Luna" and "cafe  luna", "Straße" and
"Strasse". Memory capture's entity lookup and the places module compare names by this key, on both sides; nothing
else is read from it."""

from __future__ import annotations

import re
import unicodedata

# German writes an umlaut as its vowel and an e where the letter is missing ("Mueller"), and leaves it off
# altogether where the e is missing too ("Muller"): all three fold to the bare vowel. Every e after it goes, so that
# "Äe" and "Aee" agree too and a key is its own key.
_UMLAUT_SPELLED = re.compile(r"(?<=[aou])e+")
# Letters with a stroke or ligatures that Unicode does not decompose into a base letter and a mark.
_UNDECOMPOSED = str.maketrans({"æ": "ae", "œ": "oe", "ø": "o", "ł": "l", "đ": "d", "ð": "d", "þ": "th", "ı": "i"})


def name_key(name: str) -> str:
    """The key under which spellings of a name meet: case folded (ß is ss), accents and umlauts off, ae/oe/ue read
    as a/o/u, spaces collapsed. The fold is coarse on purpose ("Michael" and "Michal" share a key too): it only
    compares the names one person uses, where two that differ only so are rare."""
    key = _fold(name)
    # Compatibility forms fold in steps (a mathematical "𝘈" decomposes to "A", which then folds to "a"): fold
    # until nothing changes, so that a key is its own key.
    for _ in range(4):
        again = _fold(key)
        if again == key:
            break
        key = again
    return key


def _fold(name: str) -> str:
    decomposed = unicodedata.normalize("NFKD", unicodedata.normalize("NFKD", name).casefold().translate(_UNDECOMPOSED))
    plain = "".join(c for c in decomposed if not unicodedata.combining(c))
    return " ".join(_UMLAUT_SPELLED.sub("", plain).split())
