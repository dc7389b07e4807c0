"""benchmarks.memory_recall reads any set in the memory-bench format (../shared/data/memory-bench/README.md), also one
of long chats between two people, whose speakers are their names rather than "user" and "assistant"."""

from __future__ import annotations

import json
from pathlib import Path

from benchmarks.memory_recall import format_report, run

CHAT = [  # (speaker, text), one session a day
    ("Caroline", "I went to the LGBTQ support group yesterday and it was so powerful."),
    ("Melanie", "That's amazing, Caroline! I painted a sunset over the lake last weekend."),
    ("Caroline", "I'm researching adoption agencies, I want to give a child a loving home."),
    ("Melanie", "My kids and I went camping in the mountains, we roasted marshmallows."),
    ("Caroline", "The counseling course starts in June, I'm nervous but excited."),
    ("Melanie", "I signed up for a pottery class on Thursdays."),
]


def write_set(root: Path) -> Path:
    base = root / "two-people"
    with open(f"{base}.memories.jsonl", "w", encoding="utf-8") as out:
        for i, (speaker, text) in enumerate(CHAT):
            out.write(json.dumps({"user": "conv-1", "id": f"D{i}", "at": f"2026-05-{10 + i // 2:02d}T18:00:00+00:00",
                                  "speaker": speaker, "text": text}) + "\n")
    with open(f"{base}.queries.jsonl", "w", encoding="utf-8") as out:
        for i, (query, evidence) in enumerate([("What did Melanie paint?", ["D1"]),
                                               ("What is Caroline researching?", ["D2"])]):
            out.write(json.dumps({"user": "conv-1", "id": f"q{i}", "at": "2026-06-01T12:00:00+00:00", "query": query,
                                  "evidence": evidence, "category": "single-hop"}) + "\n")
    return base


async def test_a_chat_between_two_named_people_is_ingested_and_recalled(database_url: str, tmp_path: Path) -> None:
    report = await run(database_url, write_set(tmp_path), None, "chat")
    assert (report.users, report.turns, report.nodes, report.queries) == (1, len(CHAT), len(CHAT), 2)
    assert report.scores.mean("ours", 5) == 1.0
    assert format_report(report, "chat").splitlines()[-1].startswith("RESULT recall@5=1.000 recall@10=1.000 ")
