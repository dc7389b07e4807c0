"""Spreading activation, ranking and gravitation of the read path on in-memory graphs (no database)."""

from __future__ import annotations

import math
from dataclasses import replace
from datetime import UTC, datetime, timedelta

import pytest
from hypothesis import given
from hypothesis import strategies as st

from brain.memory.recall import (
    COMPANION_TURN_FACTOR,
    LONGEST_ANCHOR,
    Edge,
    GoalPull,
    Reached,
    addresses_companion,
    cosine,
    exact_window_limit,
    explain,
    fused_match,
    gravitate,
    hops_for,
    keep_nearest_shell,
    named_speakers,
    presence_at,
    query_lexemes,
    rank_score,
    rare_word_limit,
    speaker_factor,
    spread_activation,
    stem_word,
    surely_common,
)
from brain.memory.settings import MemorySettings
from brain.memory.timeline import find_time_anchors

K = {1: 3, 2: 2, 3: 2}


def graph(*edges: tuple[int, int, float], reasons: tuple[str, ...] = ("themes",)) -> dict[int, list[Edge]]:
    outgoing: dict[int, list[Edge]] = {}
    for a, b, w in edges:
        outgoing.setdefault(a, []).append(Edge(a, b, w, reasons))
    return outgoing


def shells(reached: list[Reached]) -> dict[int, int]:
    return {r.node_id: r.shell for r in reached}


def test_empty_memory_gives_nothing() -> None:
    assert spread_activation([], {}, depth=2, k_per_shell=K) == []


def test_depth_zero_returns_only_the_anchors() -> None:
    outgoing = graph((1, 2, 5.0), (2, 3, 5.0))
    assert shells(spread_activation([1], outgoing, depth=0, k_per_shell=K)) == {1: 0}


def test_depth_by_mode_bounds_how_far_activation_travels() -> None:
    settings = MemorySettings()
    chain = graph((1, 2, 5.0), (2, 3, 5.0), (3, 4, 5.0), (4, 5, 5.0))
    reach = {mode: set(shells(spread_activation([1], chain, depth=hops_for(mode, settings), k_per_shell=K)))
             for mode in ("command", "chat", "reflection")}
    assert reach["command"] == {1}
    assert reach["chat"] == {1, 2}
    assert reach["reflection"] == {1, 2, 3}


def test_unknown_mode_is_refused() -> None:
    with pytest.raises(ValueError):
        hops_for("gossip", MemorySettings())


def test_predecessor_lock_never_jumps_straight_back() -> None:
    # B's strongest edge leads back to A; with one edge per shell B must take its next best, C.
    outgoing = graph((1, 2, 5.0), (2, 1, 9.0), (2, 3, 2.0))
    reached = spread_activation([1], outgoing, depth=2, k_per_shell={1: 1, 2: 1})
    assert shells(reached) == {1: 0, 2: 1, 3: 2}
    assert [h.target for h in reached[-1].path] == [2, 3]


def test_cycles_through_other_nodes_are_allowed_and_resolved_by_dedup() -> None:
    # 1 -> 2 -> 3 -> 1: the lock only forbids 2 -> 1 right after 1 -> 2; 3 -> 1 is walked but 1 stays in shell 0.
    outgoing = graph((1, 2, 5.0), (2, 3, 5.0), (3, 1, 5.0))
    reached = spread_activation([1], outgoing, depth=3, k_per_shell={1: 1, 2: 1, 3: 1})
    assert shells(reached) == {1: 0, 2: 1, 3: 2}
    assert len(reached) == 3


def test_dedup_keeps_the_nearest_shell() -> None:
    # 4 is reachable directly from anchor 1 (shell 1) and via 2 -> 3 -> 4 (shell 3).
    outgoing = graph((1, 2, 6.0), (1, 4, 1.0), (2, 3, 6.0), (3, 4, 6.0))
    reached = spread_activation([1], outgoing, depth=3, k_per_shell=K)
    assert shells(reached) == {1: 0, 2: 1, 4: 1, 3: 2}
    four = next(r for r in reached if r.node_id == 4)
    assert [h.source for h in four.path] == [1]


def test_an_anchor_reached_again_stays_an_anchor() -> None:
    outgoing = graph((1, 2, 5.0), (2, 3, 5.0))
    reached = spread_activation([1, 2], outgoing, depth=2, k_per_shell=K)
    assert shells(reached) == {1: 0, 2: 0, 3: 1}


def test_keep_nearest_shell_prefers_the_first_on_a_tie() -> None:
    first = Reached(9, 1, ())
    second = Reached(9, 1, ())
    nearer = Reached(9, 0, ())
    assert keep_nearest_shell([first, second]) == [first]
    assert keep_nearest_shell([first, nearer]) == [nearer]


def test_k_edges_per_shell_follows_only_the_strongest() -> None:
    hub = graph(*[(1, n, float(n)) for n in range(2, 10)])  # 1 -> 2..9, weight = target id
    reached = spread_activation([1], hub, depth=1, k_per_shell={1: 3})
    assert set(shells(reached)) == {1, 9, 8, 7}


def test_k_applies_per_node_of_the_previous_shell() -> None:
    outgoing = graph((1, 2, 5.0), (1, 3, 5.0), *[(2, n, 1.0) for n in (10, 11, 12)],
                     *[(3, n, 1.0) for n in (20, 21, 22)])
    reached = spread_activation([1], outgoing, depth=2, k_per_shell={1: 2, 2: 2})
    second = [r.node_id for r in reached if r.shell == 2]
    assert len(second) == 4 and {10, 11} <= set(second) and {20, 21} <= set(second)


def test_inactive_nodes_are_skipped() -> None:
    outgoing = graph((1, 2, 9.0), (1, 3, 1.0))
    reached = spread_activation([1], outgoing, depth=1, k_per_shell={1: 1}, active=lambda n: n != 2)
    assert shells(reached) == {1: 0, 3: 1}


def test_why_names_the_anchor_scores_or_the_path() -> None:
    outgoing = graph((12, 40, 5.0), reasons=("entity", "themes"))
    reached = spread_activation([12], outgoing, depth=1, k_per_shell=K)
    assert explain(reached[0], 0.834, 0.41) == "anchor (vector 0.83, text 0.41)"
    assert explain(reached[0], 0.834, 0.0) == "anchor (vector 0.83)"
    assert explain(reached[1], 0.2, 0.0) == "via #12 —entity, themes→ #40"


def test_rank_prefers_the_nearer_shell_and_the_more_present_memory() -> None:
    settings = MemorySettings()
    assert rank_score(0.8, 4.0, 10.0, 1.0, 1.0) > rank_score(0.8, 4.0, 10.0, 0.75, 1.0)
    assert rank_score(0.8, 6.0, 10.0, 1.0, 1.0) > rank_score(0.8, 3.0, 10.0, 1.0, 1.0)
    # Presence only moves a score by half: a clearly better match still wins.
    assert rank_score(0.8, 0.1, settings.cap, 1.0, 1.0) > rank_score(0.3, 10.0, settings.cap, 1.0, 1.0)


def test_the_persons_own_words_rank_ahead_of_a_companion_reply_at_equal_match() -> None:
    assert speaker_factor("user") == 1.0
    assert 0.0 < speaker_factor("assistant") < 1.0
    # Another participant of an imported chat speaks first-hand, as the person does ...
    assert speaker_factor("Anna") == speaker_factor("Assistant Anna") == 1.0
    # ... unless the question names someone else: then it asks about their words.
    assert speaker_factor("Anna", {"Ben"}) == COMPANION_TURN_FACTOR
    assert speaker_factor("Ben", {"Ben"}) == speaker_factor("user", {"Ben"}) == 1.0
    assert speaker_factor("assistant", {"Ben"}) == COMPANION_TURN_FACTOR
    # A question about what the companion said names it: its replies count as the person's words do.
    assert speaker_factor("assistant", {"assistant"}) == speaker_factor("user", {"assistant"}) == 1.0


@pytest.mark.parametrize("question", [
    "Can you remind me what was the 7th job in the list you provided?",
    "You mentioned some great resources for guided imagery, which website was it?",
    "What type of beer you specifically recommended?",
    "What did you say about Rome?",
    "Which restaurant have you suggested last week?",
    "What was your last answer about the tax forms?",
    "Welches Bier hast du mir empfohlen?",
    "Was hattest du mir neulich über Rom erzählt?",
    "Wie war deine letzte Empfehlung für Lissabon?",
])
def test_a_question_about_what_the_companion_said_addresses_it(question: str) -> None:
    assert addresses_companion(question)


@pytest.mark.parametrize("question", [
    "Can you suggest a hotel for my trip to Miami?",
    "Can you recommend some good restaurants?",
    "Thank you made my day",
    "What did Caroline say about you?",
    "I wanted to follow up on our previous conversation about binaural beats.",
    "Hast du Zeit?",
    "Kannst du mir ein Hotel in Rom empfehlen?",
    "Wo ist mein Schlüssel?",
])
def test_a_request_or_a_question_about_the_person_does_not_address_the_companions_words(question: str) -> None:
    assert not addresses_companion(question)


def test_a_question_names_the_participants_whose_every_word_it_writes() -> None:
    speakers = ["user", "assistant", "Melanie", "Anna Maria", "Caroline", "Melanie"]
    assert named_speakers("What did melanie paint last week?", speakers) == {"Melanie"}
    assert named_speakers("Did Anna Maria and Caroline meet?", speakers) == {"Anna Maria", "Caroline"}
    assert named_speakers("Did Anna call?", speakers) == frozenset()  # not all of "Anna Maria"
    assert named_speakers("What did the user say to the assistant?", speakers) == frozenset()  # roles are no names
    # One sector step, no more: a clearly better matching reply still wins.
    assert speaker_factor("assistant") * rank_score(0.8, 4.0, 10.0, 1.0, 1.0) > rank_score(0.6, 4.0, 10.0, 1.0, 1.0)


def test_presence_decays_with_days_since_reinforcement() -> None:
    then = datetime(2026, 1, 1, tzinfo=UTC)
    assert presence_at(5.0, then, then + timedelta(days=30), 0.02) == pytest.approx(2.744, abs=0.001)
    assert presence_at(5.0, then, then - timedelta(days=3), 0.02) == 5.0  # never grows before reinforcement


def test_fused_match_blends_the_channels_z_scores_into_a_positive_match_that_keeps_their_order() -> None:
    assert fused_match(0.0, 0.0) == pytest.approx(0.5)
    assert fused_match(2.0, -2.0) == pytest.approx(0.5)  # equal weights: one channel's outlier offsets the other's
    assert fused_match(3.0, 0.0) > fused_match(1.0, 1.0) > fused_match(0.0, 0.0) > fused_match(-1.0, 0.0) > 0.0
    assert 0.0 < fused_match(-400.0, -400.0) < fused_match(400.0, 400.0) <= 1.0


def test_fusion_lets_a_clear_lexical_hit_win_over_a_flat_vector_channel() -> None:
    from brain.memory.recall import Fusion, _Candidate

    def candidate(node_id: int, vector: float, bm25: float = 0.0) -> _Candidate:
        return _Candidate(node_id, "", "user", datetime(2026, 1, 1, tzinfo=UTC), 1.0,
                          datetime(2026, 1, 1, tzinfo=UTC), None, vector, bm25=bm25)

    pool = [candidate(1, 0.81), candidate(2, 0.80, bm25=9.0), *(candidate(n, 0.79) for n in range(3, 12))]
    fusion = Fusion(pool)
    assert max(pool, key=fusion).node_id == 2
    unembedded = replace(candidate(12, 0.0, bm25=9.0), embedded=False)
    fusion = Fusion([*pool, unembedded])
    assert fusion.vector_z(unembedded) == fusion.vector_z(min(pool, key=lambda c: c.vector))  # as the least similar


def test_gravitation_pulls_toward_an_activated_goal() -> None:
    query = [1.0, 0.0, 0.0]
    goal = GoalPull("Drink more water", [0.6, 0.8, 0.0], motivation=1.0)  # cosine 0.6 >= 0.4
    shifted = gravitate(query, [goal], factor=0.3, threshold=0.4)
    assert shifted.outcome == "shifted"
    assert shifted.vector == pytest.approx([0.7 + 0.3 * 0.36, 0.3 * 0.48, 0.0])
    assert cosine(shifted.vector, goal.vector) > cosine(query, goal.vector)


def test_instruction_and_weak_goals_leave_the_query_alone() -> None:
    query = [1.0, 0.0]
    strong = GoalPull("a", [1.0, 0.0])
    weak = GoalPull("b", [0.3, math.sqrt(1 - 0.09)], motivation=1.0)  # cosine 0.3 < 0.4
    assert gravitate(query, [strong], factor=0.0, threshold=0.4).outcome == "instruction"
    assert gravitate(query, [weak], factor=0.3, threshold=0.4).outcome == "none_activated"
    assert gravitate(query, [], factor=0.3, threshold=0.4).outcome == "no_goals"
    assert gravitate(query, [GoalPull("c", [1.0, 0.0, 0.0])], 0.3, 0.4).outcome == "dimension_mismatch"
    assert gravitate(query, [weak], factor=0.3, threshold=0.4).vector == query


@given(st.lists(st.floats(-1, 1), min_size=3, max_size=3).filter(lambda v: sum(x * x for x in v) > 0.01),
       st.floats(0.0, 0.3))
def test_gravitation_never_turns_the_query_away(vector: list[float], factor: float) -> None:
    goal = GoalPull("g", [0.0, 1.0, 0.0])
    result = gravitate(vector, [goal], factor=factor, threshold=-1.0)
    assert cosine(vector, result.vector) > 0


def test_a_weak_direct_hit_is_a_match_not_an_anchor() -> None:
    assert explain(Reached(7, 0), 0.31, 0.0, anchor=False) == "match (vector 0.31)"
    assert explain(Reached(7, 0), 0.52, 0.0, True) == "anchor (vector 0.52, in the time asked about)"


def test_the_lexical_channel_gets_the_query_words_without_function_words() -> None:
    assert query_lexemes("Where did I put Anna's Piranesi book? Wo ist das Buch?") == [
        "anna", "piranesi", "book", "buch"]
    assert query_lexemes("Was it the one?") == []
    assert query_lexemes("Which hotels and stories, Jürgen?") == ["hotel", "story", "jurgen"]


@pytest.mark.parametrize(("word", "stem"), [
    ("hotels", "hotel"), ("stories", "story"), ("houses", "house"), ("boxes", "boxe"), ("plays", "play"),
    ("days", "day"), ("keys", "key"), ("shoes", "shoe"),  # -oes: the s only
    ("series", "sery"), ("aliases", "aliase"),  # as Harman has it
    ("bus", "bus"), ("glass", "glass"), ("hotel", "hotel"), ("s", "s"), ("es", "e"), ("1990s", "1990s"),
    ("hauser", "hauser"), ("kurs", "kur"), ("eltern", "eltern"),  # German: only a final -s after a letter
])
def test_the_s_stemmer_takes_a_plural_ending_off_and_nothing_else(word: str, stem: str) -> None:
    assert stem_word(word) == stem


def test_a_rare_word_is_rare_relative_to_the_memory_but_never_common_in_absolute_terms() -> None:
    assert rare_word_limit(4) == 2  # a small memory still lets a word found twice through
    assert rare_word_limit(400) == 100  # a conversation keeps all but its commonest words
    assert rare_word_limit(100_000) == 199  # however large the memory, counting stays bounded
    assert rare_word_limit(100_000, words=12) == 99  # and a long query's words share one budget
    assert rare_word_limit(1_000, words=30) == 39


def test_a_word_the_statistics_show_far_above_the_rare_limit_is_left_out_before_the_index_is_read() -> None:
    shares = {"walk": 0.03, "tokyo": 0.0005}
    assert surely_common("walk", shares, 100_000)  # about 3,000 memories, far above the limit of 199
    assert not surely_common("tokyo", shares, 100_000)  # about 50: counted exactly
    assert not surely_common("piranesi", shares, 100_000)  # unknown to the statistics: counted exactly
    assert not surely_common("walk", shares, 1_000)  # about 30 of 1,000: near the limit of 20, so counted


def test_a_period_is_searched_exactly_while_it_holds_fewer_memories_than_an_hnsw_scan_would_visit() -> None:
    # At the limit both cost the same: the exact search reads every memory of the period, the HNSW scan visits about
    # limit x population / count tuples to find `limit` of them.
    assert exact_window_limit(30, 100_000) == 1732
    assert exact_window_limit(30, 10_000) == 547
    assert exact_window_limit(30, 10) == 30  # a tiny memory: never fewer than the results asked for
    assert exact_window_limit(30, 0) == 30


@pytest.mark.parametrize("phrase", [
    "at 9:15 tomorrow", "at 9 tomorrow", "yesterday", "this weekend", "next weekend", "last week", "last month",
    "in March", "in Q4", "last year", "im letzten Jahr", "am Wochenende", "letzte Woche", "im Dezember",
])
def test_no_time_anchor_spans_longer_than_recall_reads_back_for_its_precision(phrase: str) -> None:
    # The exact search of a period reads the timeline index only this far back per precision: an anchor that spans
    # longer would be missed by a question about its end.
    anchors = find_time_anchors(f"We talked about it {phrase}.", datetime(2024, 3, 31, 12, 0, tzinfo=UTC),
                                "Europe/Berlin")
    assert anchors
    for anchor in anchors:
        assert anchor.end - anchor.start <= LONGEST_ANCHOR[anchor.precision] - timedelta(hours=23)
