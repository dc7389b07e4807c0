"""/remember, /recall and /forget from the inbound line to the reply, with the memory switched on as the
app does it."""

from __future__ import annotations

import dataclasses
import re
import uuid
from datetime import timedelta
from typing import Any

import pytest
from sqlalchemy import func, select, update

from brain.companion.models import ConversationMessage
from brain.core import Brain
from brain.memory import api
from brain.memory.api import Memory
from brain.memory.embedder import WordLlamaEmbedder
from brain.memory.models import MemoryEdge, MemoryEntity, MemoryNode, PipelineLogEntry, ShortTermEntry
from brain.memory.promotion import PromotionReport
from brain.outbox.models import OutboxMessage
from brain.people.models import Identity
from brain.pipeline_log import PipelineLog

MEMORY_TABLES = (MemoryNode, MemoryEdge, ShortTermEntry, MemoryEntity, PipelineLogEntry)


@pytest.fixture(scope="module")
def embedder() -> WordLlamaEmbedder:
    return WordLlamaEmbedder()


@pytest.fixture
async def memory(brain: Brain, embedder: WordLlamaEmbedder):  # type: ignore[no-untyped-def]
    brain.memory = Memory(brain, embedder, log=PipelineLog(brain.db.sessions, brain.clock))
    yield brain.memory
    await brain.memory.log.close()


async def user_id_of(brain: Brain, handle: str) -> uuid.UUID:
    async with brain.transactions.read() as session:
        return (await session.scalars(select(Identity.user_id).where(Identity.platform_id == handle))).one()


async def rows_of(brain: Brain, handle: str) -> dict[str, int]:
    async with brain.transactions.read() as session:
        user_id = (await session.scalars(select(Identity.user_id).where(Identity.platform_id == handle))).one()
        return {t.__tablename__: int(await session.scalar(
            select(func.count()).select_from(t).where(t.user_id == user_id)) or 0) for t in MEMORY_TABLES}


async def test_remember_then_recall_shows_the_memory_and_why(person, memory) -> None:
    alice = person()
    assert "remember" in await alice.send("/remember My niece Emma loves dinosaurs and the colour green")
    await alice.send("/remember The bike needs a new chain before the tour")
    reply = await alice.send("/recall What does Emma like?")
    assert "What I remember:" in reply
    assert "Emma loves dinosaurs" in reply
    assert re.search(r"why: close in meaning \(\d+%\)", reply)
    assert re.search(r"#\d+ · ", reply)
    assert "bike" not in reply  # the nearest of unrelated memories is not shown


async def test_remember_asked_for_in_words_keeps_what_follows_without_the_request(person, memory) -> None:
    alice = person()
    assert "remember" in await alice.send("remember that my niece Emma loves dinosaurs")
    reply = await alice.send("/recall What does Emma like?")
    assert "my niece Emma loves dinosaurs" in reply and "remember that" not in reply
    assert "merke" in await person(language="de").send("Merk dir: der Ersatzschlüssel liegt bei Frau Weber")


async def test_recall_of_something_never_said_says_so_instead_of_listing_neighbours(person, memory) -> None:
    alice = person()
    await alice.send("/remember My sister Anna lives in Hamburg")
    await alice.send("/remember I like green tea in the morning")
    assert await alice.send("/recall quantum chromodynamics lectures") == "I don't remember anything about that."
    assert "green tea" in await alice.send("/recall what do I drink in the morning?")


async def test_recall_says_why_in_the_persons_language_with_the_route_of_linked_memories(person, memory) -> None:
    bob = person(language="de")
    await bob.send("/remember My sister Anna loves bouldering in the climbing gym")
    await bob.send("/remember Anna invited me to her birthday party on the twelfth")
    reply = await bob.send("/recall bouldering")
    assert re.search(r"warum: ähnliche Bedeutung \(\d+\xa0%\), teilt Wörter mit der Frage", reply)
    assert re.search(r"warum: verknüpft über #\d+ → #\d+ \(dieselbe Person, derselbe Ort oder dieselbe Sache", reply)
    assert "vector" not in reply and "anchor" not in reply


async def test_recall_with_nothing_remembered_says_so(person, memory) -> None:
    assert "don't remember anything" in await person().send("/recall Where are my keys?")


async def test_usage_hints_for_empty_arguments(person, memory) -> None:
    alice = person()
    assert "Usage: /remember" in await alice.send("/remember")
    assert "Usage: /recall" in await alice.send("/recall")
    assert "Usage: /forget" in await alice.send("/forget")
    # Words are searched for (nothing is remembered here); "²" is a digit to str.isdigit(), no number to int().
    assert "I don't remember anything about that" in await alice.send("/forget the keys")
    assert "I don't remember anything about that" in await alice.send("/forget ²")


async def test_forget_one_memory_by_its_number(person, memory, brain: Brain) -> None:
    alice = person()
    await alice.send("/remember The spare key is with the neighbour Frau Weber")
    await alice.send("/remember I gave Tom the blue umbrella back")
    reply = await alice.send("/recall spare key")
    number = re.search(r"#(\d+) · [^\n]*spare key", reply)
    assert number is not None
    assert "is gone" in await alice.send(f"/forget {number.group(1)}")
    assert "spare key" not in await alice.send("/recall spare key")
    assert "I have no memory" in await alice.send(f"/forget {number.group(1)}")


async def test_forget_in_words_shows_what_it_found_and_forgets_only_the_one_pressed(person, memory, dialog,
                                                                                     brain: Brain) -> None:
    alice, bob = person(), person()
    await alice.send("/remember My bike lock code is 4711")
    await alice.send("/remember The spare key is with the neighbour Frau Weber")
    await bob.send("/remember My bike lock code is 1234")
    before = await alice.send("/recall bike lock code")
    asked = await alice.send("forget the bike lock code")
    assert asked.splitlines()[0] == "Which one should I forget?" and "4711" in asked and "1234" not in asked
    choice = alice.buttons()
    assert len(choice) == 1 and "4711" in before  # nothing forgotten before the press
    assert "is gone" in await alice.press(next(iter(choice.values())))
    assert "4711" not in await alice.send("/recall bike lock code")
    assert "spare key" in await alice.send("/recall spare key")  # only the one pressed
    assert "1234" in await bob.send("/recall bike lock code")  # someone else's stays
    assert "I don't remember anything about that" in await alice.send("/forget penguins")
    await alice.send("My gym locker is number 112")  # said a moment ago, not promoted yet: found all the same
    assert "112" in await alice.send("forget the gym locker")
    # "vergiss nicht ..." is a task, "forget it" no request to forget anything.
    assert "Which one" not in await alice.send("forget it")
    assert "Added the task" in await alice.send("don't forget to buy milk")
    await dialog.settle()
    await memory.ingest_until_promoted()
    async with brain.transactions.read() as session:
        texts = set((await session.scalars(select(MemoryNode.text))).all())
    assert "forget the bike lock code" not in texts, texts  # the request itself is not remembered


async def test_nobody_can_forget_or_see_someone_elses_memory(person, memory, brain: Brain) -> None:
    alice, bob = person(), person()
    await bob.send("/remember My PIN hint is grandma's birth year")
    async with brain.transactions.read() as session:
        bobs = int((await session.scalars(select(MemoryNode.id))).one())
    assert "PIN" not in await alice.send("/recall PIN hint")
    assert "I have no memory" in await alice.send(f"/forget {bobs}")
    assert "PIN hint" in await bob.send("/recall PIN hint")


async def test_forget_all_needs_the_button_and_then_leaves_no_trace(person, memory, brain: Brain) -> None:
    alice, bob = person(), person()
    await alice.send("/remember My sister Lena lives in Graz")
    await alice.send("/remember Lena's cat is called Mochi")
    await alice.send("/recall Lena")
    await bob.send("/remember I play the cello on Thursdays")
    await memory.log.flush()
    bob_rows = await rows_of(brain, bob.handle)
    before = await rows_of(brain, alice.handle)
    assert before["memory_nodes"] == 2 and before["memory_short_term"] == 2 and before["pipeline_log"] > 0

    reply = await alice.send("/forget all")
    assert "cannot be undone" in reply
    buttons = alice.buttons()
    assert "Nothing was forgotten." in await alice.press(buttons["Keep it"])
    assert "Lena" in await alice.send("/recall Lena")

    await alice.send("/vergiss alles")
    confirm = alice.buttons()["Yes, forget everything"]
    alice_id, bob_id = await user_id_of(brain, alice.handle), await user_id_of(brain, bob.handle)
    async with brain.transactions.begin() as uow:  # what was said to the model, and the replies delivered so far
        await uow.session.execute(update(OutboxMessage).values(status="sent"))
        for someone in (alice_id, bob_id):
            uow.session.add(ConversationMessage(user_id=someone, turn_id=uuid.uuid4(), at=uow.now, role="user",
                                                content="Lena is my sister"))
    assert "forgotten everything" in await alice.press(confirm)
    await memory.log.flush()
    assert set((await rows_of(brain, alice.handle)).values()) == {0}
    assert await rows_of(brain, bob.handle) == bob_rows
    async with brain.transactions.read() as session:
        talk = dict((await session.execute(select(ConversationMessage.user_id, func.count())
                                           .group_by(ConversationMessage.user_id))).all())
        sent = (await session.execute(select(OutboxMessage.user_id, OutboxMessage.status, OutboxMessage.text))).all()
    assert talk == {bob_id: 1}  # the model's history of Alice is gone, Bob's is not
    assert not [t for who, status, t in sent if who == alice_id and status == "sent" and t]  # no "Lena" quoted
    assert [t for who, status, t in sent if who == alice_id and status == "pending"] == [
        "Done: I have forgotten everything I remembered about you."]
    assert [t for who, _, t in sent if who == bob_id] == ["I'll remember that."]
    assert "don't remember anything" in await alice.send("/recall Lena")
    assert "already used" in await alice.press(confirm)
    assert "cello" in await bob.send("/recall cello")


async def test_undo_right_after_remember_forgets_that_memory_not_an_older_entry(person, memory, brain: Brain,
                                                                                 clock) -> None:
    alice = person()

    async def send(line: str) -> str:
        clock.advance(timedelta(minutes=1))  # one line a minute: which came last is told by the time
        return await alice.send(line)

    await send("/place Gym")
    assert "remember" in await send("/remember The locker code is 4711")
    reply = await send("/undo")
    assert re.fullmatch(r"Forgotten: memory #\d+ is gone\.", reply)
    assert "don't remember anything" in await send("/recall locker code")
    assert (await rows_of(brain, alice.handle))["memory_nodes"] == 0
    assert "Gym" in await send("/undo")  # the next step back is the visit, as before
    await send("/remember The locker code is 4711")
    await send("/water 250")  # newer than the memory: /undo takes the water back first
    assert "Removed 250 ml water" in await send("/undo")
    assert "Forgotten: memory" in await send("/undo")


async def test_undo_after_remembering_something_known_again_takes_back_the_repeat_then_goes_further(
    person, memory, clock
) -> None:
    alice = person()

    async def send(line: str) -> str:
        clock.advance(timedelta(minutes=1))
        return await alice.send(line)

    for line in ("/remember My bike is blue", "/water 250", "/remember My bike is blue"):  # the same memory again
        await send(line)
    [number] = re.findall(r"#(\d+) · ", await send("/recall my bike"))
    assert await send("/undo") == f"Taken back. It repeated memory #{number}, which I still remember."
    assert "Water: 250 ml" in await send("/today")
    assert "bike is blue" in await send("/recall my bike")
    assert "Removed 250 ml water" in await send("/undo")  # not stuck at the repeat: the next step back
    assert await send("/undo") == f"Forgotten: memory #{number} is gone."
    assert "don't remember anything" in await send("/recall my bike")


async def test_undo_after_forget_takes_nothing_older_back(person, memory, clock) -> None:
    alice = person()

    async def send(line: str) -> str:
        clock.advance(timedelta(minutes=1))
        return await alice.send(line)

    await send("/water 250")
    await send("/remember My locker number is 17")
    await send("/remember The wifi password is sunflower")
    [wifi] = re.findall(r"#(\d+) · ", await send("/recall wifi password"))
    assert await send(f"/forget {wifi}") == f"Forgotten: memory #{wifi} is gone."
    assert "cannot be undone" in await send("/undo")
    assert "locker number is 17" in await send("/recall locker number")  # not the memory before it
    assert "Water: 250 ml" in await send("/today")
    await send("/forget all")
    await alice.press(alice.buttons()["Yes, forget everything"])
    clock.advance(timedelta(minutes=1))
    assert "cannot be undone" in await send("/undo")
    assert "Water: 250 ml" in await send("/today")


async def test_forget_reads_the_number_as_a_number(person, memory) -> None:
    alice = person()
    await alice.send("/remember The spare key is under the flower pot")
    [number] = re.findall(r"#(\d+) · ", await alice.send("/recall spare key"))
    huge = "99999999999999999999999"
    assert await alice.send(f"/forget {huge}") == f"I have no memory #{huge}."
    assert await alice.send(f"/forget 000{number}") == f"Forgotten: memory #{number} is gone."


async def test_without_a_memory_the_commands_say_so(person, brain: Brain) -> None:
    brain.memory = None
    assert "not switched on" in await person().send("/recall anything")


async def test_conversation_is_captured_and_promoted_but_commands_are_not(person, memory, dialog) -> None:
    alice = person()
    await alice.send("/water 250")
    await alice.send("My sister Lena moves to Hamburg next month")
    await dialog.settle()
    # The message only: without a model the answer is a canned "I didn't understand", nothing to remember.
    assert (await rows_of(memory.brain, alice.handle))["memory_short_term"] == 1
    async with memory.brain.transactions.read() as session:
        speakers = sorted((await session.scalars(select(ShortTermEntry.speaker))).all())
    assert speakers == ["user"]
    assert await memory.ingest_until_promoted() == 1
    found = await memory.recall((await alice_id(memory.brain, alice.handle)), "Where is Lena moving?",
                                memory.brain.clock.now(), k=3)
    assert any("Lena moves to Hamburg" in item.text for item in found)


async def test_a_message_too_long_is_not_remembered(person, memory, dialog) -> None:
    alice = person()
    await alice.send("x" * 4001)
    await dialog.settle()
    assert (await rows_of(memory.brain, alice.handle))["memory_short_term"] == 0


async def alice_id(brain: Brain, handle: str):  # type: ignore[no-untyped-def]
    async with brain.transactions.read() as session:
        return (await session.scalars(select(Identity.user_id).where(Identity.platform_id == handle))).one()


async def test_recall_says_when_a_memory_is_the_companions_reply_or_another_participants(person, memory, brain,
                                                                                          clock) -> None:
    for language, said in (("en", "I said: "), ("de", "Ich sagte: ")):
        someone = person(language=language)
        await someone.send("/help")
        user_id = await user_id_of(brain, someone.handle)
        await memory.remember(user_id, "My tortoise Oskar sleeps in the cellar over the winter", clock.now())
        await memory.remember(user_id, "Oskar should sleep at about 5 degrees, a cool cellar works well", clock.now(),
                              speaker="assistant")
        await memory.remember(user_id, "Oskar the tortoise once escaped into my garden", clock.now(), speaker="Anna")
        await memory.ingest_until_promoted(user_id)
        reply = await someone.send("/recall Oskar the tortoise")
        lines = {line.split(" · ", 2)[2] for line in reply.splitlines() if line.startswith("#")}
        assert lines == {"My tortoise Oskar sleeps in the cellar over the winter",
                         f"{said}Oskar should sleep at about 5 degrees, a cool cellar works well",
                         "Anna: Oskar the tortoise once escaped into my garden"}


async def test_recall_says_when_a_message_came_by_the_companions_answer_to_it(person, memory, brain, clock) -> None:
    bob = person(language="de")
    await bob.send("/help")
    user_id = await user_id_of(brain, bob.handle)
    await memory.remember(user_id, "Mine fell apart on the last tour, and we leave for Norway on Friday.",
                          clock.now() - timedelta(minutes=2))
    await memory.remember(user_id, "For hiking in the rain I would take a waterproof backpack, the Osprey Talon 22.",
                          clock.now() - timedelta(minutes=1), speaker="assistant")
    await memory.ingest_until_promoted(user_id)
    reply = await bob.send("/recall waterproof backpack for hiking in the rain")
    first, why = reply.splitlines()[1:3]
    assert first.endswith("· Mine fell apart on the last tour, and we leave for Norway on Friday.")
    assert re.fullmatch(r"\s*warum: verknüpft über #\d+ → #\d+ \(meine Antwort darauf passt zur Frage\)", why), why


async def test_a_correction_or_contradiction_is_remembered_and_a_repeat_is_named(person, memory, clock) -> None:
    alice = person()

    async def send(line: str) -> str:
        clock.advance(timedelta(minutes=1))
        return await alice.send(line)

    await send("When is Anna's birthday?")  # a question, said first in passing, does not tell it
    for line in ("/remember Anna's birthday is on 12 May", "/remember Anna's birthday is on 13 May",
                 "/remember Tom is allergic to peanuts", "/remember Tom is not allergic to peanuts"):
        assert await send(line) == "I'll remember that."
    assert {"Anna's birthday is on 12 May", "Anna's birthday is on 13 May"} <= set(
        re.findall(r"· (Anna's birthday is on \d+ May)", await send("/recall When is Anna's birthday?")))
    allergy = await send("/recall Is Tom allergic to peanuts?")
    assert "Tom is allergic to peanuts" in allergy and "Tom is not allergic to peanuts" in allergy
    [number] = re.findall(r"#(\d+) · [^·]+ · Tom is not allergic", allergy)
    assert await send("/remember Tom is not allergic to peanuts") == f"I already remember that (memory #{number})."


async def test_forget_one_memory_also_forgets_its_lone_names_and_the_sent_replies_quoting_it(person, memory,
                                                                                             brain: Brain) -> None:
    alice = person()
    await alice.send("/remember My dog Bruno hates the vacuum cleaner")
    await alice.send("/remember My sister Lena lives in Graz")
    reply = await alice.send("/recall Bruno the dog")
    [number] = re.findall(r"#(\d+) · [^·]+ · My dog Bruno", reply)
    alice_id = await user_id_of(brain, alice.handle)
    async with brain.transactions.begin() as uow:  # delivered by now
        await uow.session.execute(update(OutboxMessage).where(OutboxMessage.user_id == alice_id).values(status="sent"))
    assert await alice.send(f"/forget {number}") == f"Forgotten: memory #{number} is gone."
    async with brain.transactions.read() as session:
        names = set((await session.scalars(select(MemoryEntity.name).where(MemoryEntity.user_id == alice_id))).all())
        sent = (await session.scalars(select(OutboxMessage.text).where(OutboxMessage.user_id == alice_id))).all()
    assert "Bruno" not in names and "Lena" in names
    assert not [text for text in sent if "Bruno" in text]
    assert "I'll remember that." in sent  # what quoted nothing of it stays
    assert "Lena" in await alice.send("/recall Lena")


async def test_recall_shows_what_the_person_told_before_what_they_only_asked(person, memory, dialog, clock) -> None:
    alice = person()
    await alice.send("When is Anna's birthday?")  # free text: remembered too, as every message
    await dialog.settle()
    clock.advance(timedelta(minutes=1))
    await alice.send("/remember Anna's birthday is on 12 May")
    reply = await alice.send("/recall When is Anna's birthday?")
    assert "Anna's birthday is on 12 May" in reply and "When is Anna's birthday?" not in reply
    bob = person()
    await bob.send("When is Anna's birthday?")
    await dialog.settle()
    await memory.ingest_until_promoted()
    assert "When is Anna's birthday?" in await bob.send("/recall Anna's birthday")  # alone, it still shows


async def test_a_memory_found_only_by_its_day_does_not_claim_a_closeness_of_a_few_percent(person, memory) -> None:
    alice = person()
    await alice.send("/remember Dentist tomorrow at the usual practice")
    reply = await alice.send("/recall what is on December 1?")
    assert "Dentist" in reply and "why: in the time asked about" in reply
    assert "close in meaning" not in reply


async def test_a_question_no_log_answers_is_answered_from_the_memory_of_that_person_only(person, memory) -> None:
    alice, bob = person(), person(language="de")
    await alice.send("/remember Anna's birthday is on 12 May")
    answer = await alice.send("When is Anna's birthday?")
    assert answer.splitlines()[:2] == ["Here is what I remember about that:",
                                       "• Anna's birthday is on 12 May (Mon, Nov 30)"]
    # Asked again: the earlier question is no answer, the memory still is.
    assert "• Anna's birthday is on 12 May" in await alice.send("When is Anna's birthday?")
    assert "nicht verstanden" in await bob.send("Wann hat Anna Geburtstag?")  # Alice's memory is not Bob's
    assert "didn't understand" in await alice.send("What is the capital of France?")  # nothing about it


async def test_what_no_log_keeps_is_said_so_and_remembered_then_asked_back(person, memory, dialog) -> None:
    alice = person()
    told = await alice.send("I slept 8 hours last night")
    assert told.startswith("I don't keep a log of sleep") and "I'll remember what you told me" in told
    await dialog.settle()
    assert await memory.ingest_until_promoted() == 1
    assert "• I slept 8 hours last night" in await alice.send("How long did I sleep last night?")


async def test_a_statement_no_reader_understands_is_said_to_be_remembered_and_is(person, memory, dialog,
                                                                                 clock) -> None:
    bea = person(language="de")
    assert await bea.send("Anna spielt seit Jahren Geige im Orchester") == (
        "Das merke ich mir.\nOhne Sprachmodell kann ich damit nicht mehr anfangen; /help zeigt, was ich verstehe.")
    # A coming day in it: offered for the calendar, and remembered all the same.
    assert "Soll ich es für diesen Tag in deinen Kalender" in await bea.send("Anna hat am 12. Mai Geburtstag")
    # About a log: remembered, and how to log it is shown too.
    assert (await bea.send("Ich liebe Kaffee am Morgen")).splitlines() == [
        "Das merke ich mir.", "Ein Getränk schreibst du z. B. so: „250 ml Wasser“, „zwei Kaffee“ oder /drink Tee 300."]
    assert "Probier" in await bea.send("bla bla")  # two words: more likely noise than something told
    # Why nothing more happens is said once a day.
    assert await bea.send("Mein Lieblingsbuch ist Momo") == "Das merke ich mir."
    clock.advance(timedelta(days=1))
    assert "Ohne Sprachmodell" in await bea.send("Mein Lieblingsfilm ist Amélie")
    # "I'm vegetarian" counts as the three words of "I am vegetarian".
    assert (await person().send("I'm vegetarian")).startswith("I'll remember that.")
    await dialog.settle()
    assert await memory.ingest_until_promoted() == 7  # Bea's six and the other person's one
    assert "• Anna hat am 12. Mai Geburtstag" in await bea.send("Wann hat Anna Geburtstag?")
    # An earlier question, also one without its question mark, is no answer to a later one.
    ben = person()
    assert "No open tasks" in await ben.send("what are my tasks")
    assert "what are my tasks" not in await ben.send("what are my jobs?")
    # A request the reader did not understand tells nothing to remember: it is said not to be understood.
    asked = await person().send("can you move the gym thing from yesterday")
    assert asked.startswith("I didn't understand that") and "remember" not in asked


async def test_a_question_right_after_the_statement_is_answered_with_it_and_not_with_the_rest(person, memory) -> None:
    max_ = person(language="de")
    await max_.send("Mein Lieblingsessen ist Lasagne")
    assert (await max_.send("Was ist mein Lieblingsessen?")).splitlines()[:2] == [
        "Das weiß ich dazu:", "• Mein Lieblingsessen ist Lasagne (Mo., 30. Nov.)"]
    await max_.send("Ich habe eine Katze namens Luna")
    answer = await max_.send("Wie heißt meine Katze?")
    assert "• Ich habe eine Katze namens Luna" in answer and "Max" not in answer  # near, but no answer


async def test_a_promotion_someone_waits_on_takes_one_batch_and_leaves_a_backlog_to_the_job(
        person, memory, dialog, brain: Brain, monkeypatch: pytest.MonkeyPatch) -> None:
    alice = person()
    for line in ("My sister Lena lives in Hamburg", "Lena loves sailing", "Lena's boat is called Möwe"):
        await alice.send(line)
    await dialog.settle()
    memory.settings = dataclasses.replace(memory.settings, promotion_batch=2)
    assert await memory.ingest_until_promoted(max_rounds=1) == 2
    # One person's batch that was not full took all there was: no further round only to find nothing.
    rounds: list[PromotionReport] = []
    real = api.promote_pending

    async def counted(*args: Any, **kwargs: Any) -> PromotionReport:
        rounds.append(await real(*args, **kwargs))
        return rounds[-1]

    monkeypatch.setattr(api, "promote_pending", counted)
    assert await memory.ingest_until_promoted(await user_id_of(brain, alice.handle)) == 1
    assert [report.claimed for report in rounds] == [1]


async def test_what_do_you_know_about_me_lists_what_the_person_told_about_themselves(person, memory, dialog) -> None:
    alice, bob = person(), person()
    assert (await alice.send("What do you know about me?")).startswith(
        "You haven't told me anything about yourself yet.")
    await alice.send("/remember I am vegetarian")
    await alice.send("My sister Anna lives in Hamburg")
    await alice.send("When does the bakery open?")  # a question tells nothing about her
    await alice.send("The weather is nice today")  # nor does a remark about something else
    await bob.send("My cat is called Luna")  # nor what someone else told
    said = (await alice.send("what do you know about me?")).splitlines()
    assert said[0] == "What you told me about yourself:" and said[-1].startswith("/recall")
    assert [line.split(" (")[0] for line in said[1:-1]] == ["• My sister Anna lives in Hamburg", "• I am vegetarian"]
    # In German too, and what was said a moment ago is already there.
    await alice.send("/lang de")
    await alice.send("Ich arbeite als Lehrerin")
    assert (await alice.send("Was weißt du über mich?")).splitlines()[:2] == [
        "Das hast du mir über dich erzählt:", "• Ich arbeite als Lehrerin (Mo., 30. Nov.)"]


async def test_who_am_i_says_the_name_and_what_the_person_told(person, memory, dialog) -> None:
    alice, bea = person(), person(language="de")
    assert await alice.send("who am I?") == ("You haven't told me your name yet. Tell me, e.g. \"my name is Sam\".")
    await alice.send("my name is Sam")
    await alice.send("I work as a nurse")
    said = (await alice.send("What's my name?")).splitlines()
    assert said[:3] == ["You're Sam.", "What you told me about yourself:", "• I work as a nurse (Mon, Nov 30)"]
    await bea.send("Ich heiße Jana")
    assert (await bea.send("Weißt du, wie ich heiße?")).startswith("Du bist Jana.\n")


async def test_entries_said_in_words_are_logs_not_memories_and_statements_are_memories(person, memory, dialog,
                                                                                      brain: Brain) -> None:
    # "ich meinte einen Espresso" came back in "what do you know about me?": an entry said in words is in the logs,
    # like a command, and no conversation to remember; what is told is.
    alice = person()
    for entry in ("zwei Kaffee", "actually it was a tea", "remind me at 6pm to call mom", "sprich Deutsch",
                  "hey", "Danke!", "ok"):  # nor is smalltalk that tells nothing: "hey" came back for "who am I?"
        await alice.send(entry)
    await alice.send("Ich wandere gern in den Bergen")
    await dialog.settle()
    async with brain.transactions.read() as s:
        kept = (await s.scalars(select(ShortTermEntry.text))).all()
    assert kept == ["Ich wandere gern in den Bergen"]
