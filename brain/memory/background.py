"""Everyday sentences that say nothing in particular, in German and English: how close a query is to them is how
close it is to any memory that is not about it. An embedder puts some queries near everything (e5 gives a short
one such as "15:00 Mama anrufen" a cosine above 0.8 with most sentences, and with a memory it has nothing to do
with), so a fixed cosine cannot say whether a memory is meant; how far it stands above this background can
(`MemorySettings.meant_margin`)."""

from __future__ import annotations

from collections.abc import Sequence

BACKGROUND = (
    "I went to the supermarket after work.", "The train was late again this morning.",
    "We watched a movie on Sunday evening.", "My sister called me yesterday.", "I need to renew my passport soon.",
    "The weather was cold and rainy all week.", "I started reading a new book.",
    "Our team meeting got moved to Thursday.", "I cooked pasta for dinner.", "The kids have a school trip next month.",
    "Ich war heute Nachmittag beim Friseur.", "Der Bus kam wieder zu spät.", "Am Wochenende haben wir Freunde besucht.",
    "Ich muss noch die Steuererklärung machen.", "Es hat den ganzen Tag geregnet.", "Mein Handy ist kaputt gegangen.",
    "Wir planen einen Urlaub im Sommer.", "Ich habe heute lange gearbeitet.", "Die Nachbarn haben einen neuen Hund.",
    "Morgen gehe ich zum Sport.",
    # Questions and requests too: a question sits nearer any other question than any statement ("Kannst du mir ein
    # Rezept empfehlen?" had 0.83 with "Ändere mein Wasserziel auf 3 Liter"), and people ask the companion things.
    "Can you recommend a good movie?", "What should I cook tonight?", "Could you help me with something?",
    "How do I get to the station?", "Kannst du mir einen Tipp geben?", "Was soll ich heute kochen?",
    "Wie spät ist es eigentlich?", "Stell bitte die Musik leiser.",
)


def centroid(vectors: Sequence[Sequence[float]]) -> list[float]:
    """The mean of the background sentences' vectors: a query's mean cosine with them is its dot product with this
    one vector (all are unit length), so a recall pays for one product, not one per sentence."""
    if not vectors:
        return []
    return [sum(column) / len(vectors) for column in zip(*vectors, strict=True)]


def background_cosine(query: Sequence[float], center: Sequence[float]) -> float:
    """The query's mean cosine with the background sentences, from their `centroid`."""
    return sum(a * b for a, b in zip(query, center, strict=True)) if center else 0.0
