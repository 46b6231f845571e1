"""Deterministic benchmark corpus: a personal agent's memory of N sources, built with ``MemoryDb``.

``build_corpus(path, size, seed)`` writes a zkr database whose ``sources`` table holds exactly
*size* rows: conversation turns, screen captures, voice notes, documents and calendar/email
integrations in varied English, about 30 % of them remembered with a claim (facts, profile facts,
preferences, tasks, skills, recommendations), about 1.5 % later corrected with ``db.correct`` (each
correction is one of the *size* sources) and about 1.5 % deleted with ``db.delete``. A few percent
belong to a second person of the same tenant, so every query's scope filter has something to
discard.

Every row is written by the real operations (``remember``, ``correct``, ``delete``) with pydantic
requests, so rows, FTS entries and the export feed are exactly what a host would produce. For speed,
consecutive operations are grouped inside one outer ``db.atomic()`` (each operation's own
transaction becomes a savepoint): that changes when data is flushed, not what is stored.

``add_vectors`` then stores seeded random unit 384-dimension float32 vectors for one model/version
lane: the first ones through ``db.embed``, the rest as verified clones of the rows ``embed`` wrote
(same codec, revision and ``sha256:`` input hash, so every vector counts as fresh). Targets are
every current claim and every live raw source (a source whose evidence supports no claim), one
vector per thing a search can return, then live evidence until there are *size* vectors.

Same *size* and *seed* give the same texts, claims, corrections and deletions (ids are random).
"""

from __future__ import annotations

import bisect
import hashlib
import itertools
import json
import random
import sqlite3
import sys
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from vocabulary import (
    ACTIVITIES,
    ADJECTIVES,
    ALLERGIES,
    APPS,
    BOOK_WORDS_A,
    BOOK_WORDS_B,
    CITIES,
    CLOSERS,
    DRINKS,
    FEELINGS,
    FILLERS,
    FIRST_NAMES,
    FOODS,
    HEALTH,
    INSTRUMENTS,
    JOB_TITLES,
    LANGUAGES,
    MONTHS,
    OBJECTS,
    ORGS,
    PET_NAMES,
    PETS,
    PROJECTS,
    RELATIONS,
    SURNAMES,
    SYLLABLES,
    TIMES_OF_DAY,
    VENUES,
    WEEKDAYS,
)

#: Bump when the generated content changes (part of the cache key, with this file's hash).
GENERATOR_VERSION = 1

TENANT_ID = "bench"
PERSON_ID = "me"
OTHER_PERSON_ID = "partner"

#: Share of remembered sources that carry a claim.
CLAIM_SHARE = 0.30
#: Per created source, chance that the next operation is a correction / a deletion instead.
CORRECTION_RATE = 0.015
DELETION_RATE = 0.015
#: Share of sources that belong to the second person.
OTHER_PERSON_SHARE = 0.03

#: Operations per outer transaction while building.
BATCH_OPERATIONS = 1000

START_TIME = 1_700_000_000

VECTOR_MODEL = "bench-random"
VECTOR_VERSION = "unit-384"
VECTOR_DIMENSION = 384


def code_version() -> str:
    """Changes whenever the generator's code or word lists change (cache key component)."""
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in ("corpus.py", "vocabulary.py"):
        digest.update((here / name).read_bytes())
    return f"g{GENERATOR_VERSION}-{digest.hexdigest()[:10]}"


# ----------------------------------------------------------------------------------------------
# Text generation
# ----------------------------------------------------------------------------------------------


# Sentence openers that are not names, lower-cased after a spoken filler ("anyway, the ...").
_LOWER_AFTER_FILLER = frozenset(
    ("The", "It", "My", "We", "Feeling", "Met", "Appointment", "Ordered", "Booked", "Calendar")
)


def _zipf_cumulative(count: int, exponent: float) -> list[float]:
    return list(itertools.accumulate(1.0 / (rank + 1) ** exponent for rank in range(count)))


class _Picker:
    """Zipf-weighted choice from a fixed list: early entries are common, late ones rare."""

    def __init__(self, items: Sequence[str], exponent: float = 0.9) -> None:
        self.items = list(items)
        self.cumulative = _zipf_cumulative(len(self.items), exponent)
        self.total = self.cumulative[-1]

    def __call__(self, rng: random.Random) -> str:
        index = bisect.bisect_left(self.cumulative, rng.random() * self.total)
        return self.items[min(index, len(self.items) - 1)]


@dataclass
class _Claim:
    subject: str
    predicate: str
    value: str
    kind: str
    family: str  # which value generator can produce a replacement value for a correction


@dataclass
class _Memory:
    kind: str
    text: str
    claim: _Claim | None = None
    locator: dict[str, Any] | None = None


class TextGenerator:
    """Seeded generator of memory texts; also counts the rare made-up words it used."""

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.name = _Picker(FIRST_NAMES)
        self.surname = _Picker(SURNAMES)
        self.relation = _Picker(RELATIONS)
        self.city = _Picker(CITIES)
        self.venue = _Picker(VENUES)
        self.food = _Picker(FOODS)
        self.drink = _Picker(DRINKS)
        self.activity = _Picker(ACTIVITIES)
        self.instrument = _Picker(INSTRUMENTS)
        self.language = _Picker(LANGUAGES)
        self.org = _Picker(ORGS)
        self.job = _Picker(JOB_TITLES)
        self.project = _Picker(PROJECTS)
        self.object = _Picker([word.replace("-", " ") for word in OBJECTS])
        self.adjective = _Picker(ADJECTIVES)
        self.feeling = _Picker(FEELINGS)
        self.weekday = _Picker(WEEKDAYS, 0.3)
        self.month = _Picker(MONTHS, 0.2)
        self.time_of_day = _Picker(TIMES_OF_DAY)
        self.app = _Picker(APPS)
        self.book_a = _Picker(BOOK_WORDS_A)
        self.book_b = _Picker(BOOK_WORDS_B)
        self.health = _Picker(HEALTH)
        self.allergy = _Picker(ALLERGIES)
        self.pet = _Picker(PETS)
        self.pet_name = _Picker(PET_NAMES)
        self.filler = _Picker(FILLERS)
        self.closer = _Picker(CLOSERS)
        # The long tail: ~20,000 made-up names with a steep Zipf curve, so most appear a few times.
        made_up = sorted({self._made_up_word(random.Random(i)) for i in range(24_000)})
        random.Random(7).shuffle(made_up)
        self.rare = _Picker(made_up, 1.05)
        self.rare_counts: Counter[str] = Counter()
        self._last_value = ""
        self._raw: list[Callable[[], _Memory]] = [
            self._meal,
            self._met,
            self._object_whereabouts,
            self._screen,
            self._document,
            self._voice_note,
            self._calendar,
            self._email,
            self._question,
            self._feeling,
            self._order,
            self._travel,
            self._health_note,
            self._small_talk,
        ]
        self._raw_weights = list(itertools.accumulate([6, 4, 3, 3, 2, 3, 3, 3, 4, 3, 2, 2, 2, 6]))
        self._claims: list[Callable[[], _Memory]] = [
            self._preference,
            self._profile_fact,
            self._fact,
            self._task,
            self._skill,
            self._recommendation,
        ]
        self._claim_weights = list(itertools.accumulate([5, 3, 5, 5, 2, 3]))

    @staticmethod
    def _made_up_word(rng: random.Random) -> str:
        return "".join(rng.choice(SYLLABLES) for _ in range(rng.choice((2, 3, 3, 4)))).capitalize()

    # ---------------------------------------------------------------- helpers

    def made_up(self) -> str:
        word = self.rare(self.rng)
        self.rare_counts[word] += 1
        return word

    def _person(self) -> str:
        if self.rng.random() < 0.4:
            return f"{self.name(self.rng)} {self.surname(self.rng)}"
        return self.name(self.rng)

    def _clock(self) -> str:
        return f"{self.rng.randint(7, 21)}:{self.rng.choice(('00', '15', '30', '45'))}"

    def _date(self) -> str:
        return f"{self.weekday(self.rng)} {self.rng.randint(1, 28)} {self.month(self.rng)}"

    def _maybe_filler(self, text: str) -> str:
        roll = self.rng.random()
        if roll < 0.25:
            first, _, rest = text.partition(" ")
            if first in _LOWER_AFTER_FILLER:
                text = f"{first.lower()} {rest}"
            return f"{self.filler(self.rng).capitalize()}, {text}"
        if roll < 0.4:
            return f"{text} {self.closer(self.rng)}"
        return text

    def _pick(self, generators: list[Callable[[], _Memory]], cumulative: list[int]) -> _Memory:
        index = bisect.bisect_right(cumulative, self.rng.random() * cumulative[-1])
        return generators[min(index, len(generators) - 1)]()

    # ---------------------------------------------------------------- memories without claims

    def raw(self) -> _Memory:
        return self._pick(self._raw, self._raw_weights)

    def _meal(self) -> _Memory:
        r = self.rng
        text = (
            f"I had {self.food(r)} at {self.venue(r)} with {self._person()} {self.time_of_day(r)}. "
            f"It was {self.adjective(r)} and a bit {self.adjective(r)}."
        )
        return _Memory("conversation", self._maybe_filler(text))

    def _met(self) -> _Memory:
        r = self.rng
        text = (
            f"Met {self._person()} at {self.venue(r)} in {self.city(r)}; we talked about "
            f"{self.project(r)} and about {self.activity(r)}."
        )
        return _Memory("conversation", self._maybe_filler(text))

    def _object_whereabouts(self) -> _Memory:
        r = self.rng
        text = f"{self.name(r)} says the {self.object(r)} is at {self.venue(r)}."
        return _Memory("conversation", self._maybe_filler(text))

    def _screen(self) -> _Memory:
        r = self.rng
        text = (
            f"Screen: {self.app(r)} shows a reminder about {self.project(r)} on "
            f"{self.weekday(r)} at {self._clock()}, shared by {self._person()}."
        )
        return _Memory("screen", text)

    def _document(self) -> _Memory:
        r = self.rng
        sentences = [
            f"Notes on {self.project(r)}, {self._date()}.",
            f"{self._person()} from {self.org(r)} opened the meeting.",
            f"The {self.adjective(r)} part was the timeline; the budget looked "
            f"{self.adjective(r)}.",
            f"We agreed that {self.name(r)} will draft the next version before {self.weekday(r)}.",
            f"Open question: whether to move the workshop to {self.city(r)}.",
            f"Someone mentioned the {self.made_up()} proposal again.",
            f"Action item for me: follow up with {self.name(r)} about {self.project(r)}.",
            f"The room at {self.venue(r)} was {self.adjective(r)} and {self.adjective(r)}.",
        ]
        r.shuffle(sentences)
        return _Memory("document", " ".join(sentences[: r.randint(3, 8)]))

    def _voice_note(self) -> _Memory:
        r = self.rng
        text = (
            f"Voice note: pick up the {self.object(r)} from {self.venue(r)} "
            f"{self.time_of_day(r)}, then call {self.name(r)} about {self.project(r)}."
        )
        start = r.randint(0, 3_600_000)
        locator = {
            "device_id": f"omi-{r.randint(1, 3)}",
            "provider": r.choice(("deepgram", "whisper")),
            "stream_id": f"stream-{r.randint(1, 500)}",
            "segment_id": f"segment-{r.randint(1, 10_000)}",
            "start_ms": start,
            "end_ms": start + r.randint(500, 20_000),
        }
        return _Memory("audio", text, locator=locator)

    def _calendar(self) -> _Memory:
        r = self.rng
        text = (
            f"Calendar: {self.project(r)} review with {self._person()} on {self._date()} at "
            f"{self._clock()} in {self.city(r)}."
        )
        return _Memory("integration", text)

    def _email(self) -> _Memory:
        r = self.rng
        text = (
            f"Email from {self.name(r)} {self.surname(r)} at {self.org(r)}: subject "
            f"'{self.project(r)} update'. They ask whether the {self.adjective(r)} draft can be "
            f"ready by {self.weekday(r)} and mention {self.made_up()}."
        )
        return _Memory("integration", text)

    def _question(self) -> _Memory:
        r = self.rng
        forms = (
            f"What was the name of the {self.adjective(r)} place in {self.city(r)} that "
            f"{self.name(r)} recommended?",
            f"Did I tell you about the trip to {self.city(r)} with {self.name(r)}?",
            f"Where did I leave the {self.object(r)} after {self.activity(r)}?",
            f"When is the next meeting about {self.project(r)}?",
            f"Who was the {self.relation(r)} that knows {self.name(r)} from {self.org(r)}?",
        )
        return _Memory("conversation", r.choice(forms))

    def _feeling(self) -> _Memory:
        r = self.rng
        text = (
            f"Feeling {self.feeling(r)} {self.time_of_day(r)} after {self.activity(r)}; the "
            f"weather in {self.city(r)} was {self.adjective(r)}."
        )
        return _Memory("conversation", self._maybe_filler(text))

    def _order(self) -> _Memory:
        r = self.rng
        text = (
            f"Ordered a {self.adjective(r)} {self.object(r)} from {self.made_up()} "
            f"{self.made_up()} (order {r.randint(10_000, 99_999)}), arriving {self.weekday(r)}."
        )
        return _Memory("integration", text)

    def _travel(self) -> _Memory:
        r = self.rng
        text = (
            f"Booked a train from {self.city(r)} to {self.city(r)} for {self._date()}; "
            f"seat {r.randint(1, 90)}{r.choice('ABCD')}, coach {r.randint(1, 12)}."
        )
        return _Memory("integration", text)

    def _health_note(self) -> _Memory:
        r = self.rng
        text = (
            f"Appointment about {self.health(r)} with the {self.relation(r)} on {self.weekday(r)} "
            f"{self.time_of_day(r)}; bring the {self.object(r)}."
        )
        return _Memory("conversation", self._maybe_filler(text))

    def _small_talk(self) -> _Memory:
        r = self.rng
        forms = (
            f"The {self.adjective(r)} {self.made_up()} cafe near {self.venue(r)} is closing for "
            f"the {self.month(r)} holidays.",
            f"{self.name(r)} is back from {self.city(r)} and brought {self.food(r)} for everyone.",
            f"My {self.relation(r)} started {self.activity(r)} and loves it so far.",
            f"It rained all day in {self.city(r)}, so the {self.activity(r)} plan moved to "
            f"{self.weekday(r)}.",
            f"The {self.pet(r)} next door is called {self.pet_name(r)} and it is very "
            f"{self.adjective(r)}.",
            f"We watched a {self.adjective(r)} film about {self.activity(r)} at {self.venue(r)}.",
        )
        return _Memory("conversation", self._maybe_filler(r.choice(forms)))

    # ---------------------------------------------------------------- memories with a claim

    def with_claim(self) -> _Memory:
        return self._pick(self._claims, self._claim_weights)

    def value(self, family: str) -> str:
        """A fresh value of one claim family (used by corrections)."""
        r = self.rng
        values: dict[str, Callable[[], str]] = {
            "drink": lambda: self.drink(r),
            "food": lambda: self.food(r),
            "city": lambda: self.city(r),
            "org": lambda: self.org(r),
            "job": lambda: self.job(r),
            "date": lambda: f"{r.randint(1, 28)} {self.month(r)}",
            "pet": lambda: f"{self.pet(r)} called {self.pet_name(r)}",
            "allergy": lambda: self.allergy(r),
            "relation": lambda: f"my {self.relation(r)}",
            "task": self._task_value,
            "language": lambda: f"speak {self.language(r)}",
            "instrument": lambda: f"the {self.instrument(r)}",
            "activity": lambda: self.activity(r),
            "book": lambda: f"the book {self.book_a(r)} {self.book_b(r)}",
            "restaurant": lambda: f"the restaurant {self.made_up()} in {self.city(r)}",
        }
        return values[family]()

    def _claim(self, kind: str, text: str, subject: str, predicate: str, family: str) -> _Memory:
        claim = _Claim(subject, predicate, self._last_value, kind, family)
        return _Memory("conversation", self._maybe_filler(text), claim=claim)

    def _v(self, family: str) -> str:
        self._last_value = self.value(family)
        return self._last_value

    def _preference(self) -> _Memory:
        r = self.rng
        roll = r.random()
        if roll < 0.4:
            text = f"I prefer {self._v('drink')} over {self.drink(r)}."
            return self._claim("preference", text, "me", "prefers", "drink")
        if roll < 0.75:
            text = f"I really like {self._v('food')}, especially at {self.venue(r)}."
            return self._claim("preference", text, "me", "likes", "food")
        text = f"I don't enjoy {self._v('food')} at all, please never suggest it."
        return self._claim("preference", text, "me", "dislikes", "food")

    def _profile_fact(self) -> _Memory:
        r = self.rng
        roll = r.random()
        if roll < 0.3:
            text = f"I live in {self._v('city')} now, near {self.venue(r)}."
            return self._claim("profile_fact", text, "me", "home_city", "city")
        if roll < 0.55:
            text = f"I work at {self._v('org')} these days."
            return self._claim("profile_fact", text, "me", "employer", "org")
        if roll < 0.75:
            text = f"My job title is {self._v('job')}."
            return self._claim("profile_fact", text, "me", "job_title", "job")
        if roll < 0.9:
            text = f"My birthday is on {self._v('date')}."
            return self._claim("profile_fact", text, "me", "birthday", "date")
        text = f"We have a {self._v('pet')} at home."
        return self._claim("profile_fact", text, "me", "pet", "pet")

    def _fact(self) -> _Memory:
        r = self.rng
        person = self._person()
        roll = r.random()
        if roll < 0.3:
            job = self.job(r)
            article = "an" if job[0] in "aeiou" else "a"
            text = f"{person} works at {self._v('org')} as {article} {job}."
            return self._claim("fact", text, person, "employer", "org")
        if roll < 0.55:
            text = f"{person} moved to {self._v('city')} last {self.month(r)}."
            return self._claim("fact", text, person, "lives_in", "city")
        if roll < 0.7:
            text = f"{person} is allergic to {self._v('allergy')}, remember that for dinners."
            return self._claim("fact", text, person, "allergic_to", "allergy")
        if roll < 0.85:
            text = f"{person}'s birthday is {self._v('date')}."
            return self._claim("fact", text, person, "birthday", "date")
        text = f"{person} is {self._v('relation')}."
        return self._claim("fact", text, person, "relationship", "relation")

    def _task_value(self) -> str:
        r = self.rng
        forms = (
            f"renew the {self.object(r)} before {self.month(r)}",
            f"call the {self.relation(r)} about {self.health(r)}",
            f"finish {self.project(r)}",
            f"buy {self.food(r)} ingredients for {self.weekday(r)}",
            f"book a table at {self.venue(r)} for {self.name(r)}",
            f"send {self.name(r)} the notes on {self.project(r)}",
            f"return the {self.object(r)} to {self.name(r)}",
        )
        return r.choice(forms)

    def _task(self) -> _Memory:
        r = self.rng
        text = f"I need to {self._v('task')} {self.time_of_day(r)}."
        return self._claim("task", text, "me", "todo", "task")

    def _skill(self) -> _Memory:
        r = self.rng
        roll = r.random()
        if roll < 0.4:
            text = f"I can {self._v('language')} fairly well."
            return self._claim("skill", text, "me", "can", "language")
        if roll < 0.7:
            text = f"I play {self._v('instrument')}, mostly on {self.weekday(r)} evenings."
            return self._claim("skill", text, "me", "plays", "instrument")
        text = f"I have been doing {self._v('activity')} for years."
        return self._claim("skill", text, "me", "practises", "activity")

    def _recommendation(self) -> _Memory:
        person = self._person()
        if self.rng.random() < 0.5:
            text = f"{person} recommended {self._v('book')}."
            return self._claim("recommendation", text, person, "recommended", "book")
        text = f"{person} recommended {self._v('restaurant')}."
        return self._claim("recommendation", text, person, "recommended", "restaurant")


# ----------------------------------------------------------------------------------------------
# Building the database
# ----------------------------------------------------------------------------------------------


@dataclass
class _State:
    """What the builder needs to pick correction and deletion targets (main person only)."""

    live_sources: list[str] = field(default_factory=list)
    source_claim: dict[str, str] = field(
        default_factory=dict
    )  # source -> current claim it supports
    current_claims: dict[str, tuple[_Claim, str]] = field(
        default_factory=dict
    )  # claim -> (claim, source)
    claim_ids: list[str] = field(default_factory=list)  # current claims, for O(1) random choice
    claim_index: dict[str, int] = field(default_factory=dict)

    def add_claim(self, claim_id: str, claim: _Claim, source_id: str) -> None:
        self.current_claims[claim_id] = (claim, source_id)
        self.source_claim[source_id] = claim_id
        self.claim_index[claim_id] = len(self.claim_ids)
        self.claim_ids.append(claim_id)

    def drop_claim(self, claim_id: str) -> None:
        _claim, source_id = self.current_claims.pop(claim_id)
        self.source_claim.pop(source_id, None)
        index = self.claim_index.pop(claim_id)
        last = self.claim_ids.pop()
        if last != claim_id:
            self.claim_ids[index] = last
            self.claim_index[last] = index


def build_corpus(
    path: Path,
    size: int,
    seed: int,
    *,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Write a corpus of exactly *size* sources at *path* (must not exist); return its metadata."""
    from zkr import MemoryDb
    from zkr import models as m

    rng = random.Random(seed)
    generator = TextGenerator(rng)
    state = _State()
    counts: Counter[str] = Counter()
    phrase_samples: list[str] = []
    clock = START_TIME
    started = time.perf_counter()

    db = MemoryDb(path)
    try:
        created = reported = 0
        while created < size:
            with db.atomic():
                for _ in range(min(BATCH_OPERATIONS, size - created)):
                    clock += rng.randint(30, 2400)
                    roll = rng.random()
                    if roll < CORRECTION_RATE and state.claim_ids:
                        _correct(db, m, generator, state, clock)
                        counts["corrections"] += 1
                    elif roll < CORRECTION_RATE + DELETION_RATE and state.live_sources:
                        deleted = _delete(db, m, state, clock, rng)
                        counts["deletions"] += 1
                        counts["claims_retracted"] += deleted.claim_count
                        continue  # a deletion creates no source
                    else:
                        memory = _remember(db, m, generator, state, clock, created, counts)
                        if (
                            memory.claim is None
                            and len(phrase_samples) < 400
                            and rng.random() < 0.05
                        ):
                            phrase_samples.append(memory.text)
                    created += 1
            if progress is not None and (created // 10_000 > reported or created == size):
                reported = created // 10_000
                elapsed = time.perf_counter() - started
                progress(f"corpus {size}: {created} sources ({elapsed:.0f} s)")
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()

    rare_words = sorted(word for word, count in generator.rare_counts.items() if count <= 3)
    return {
        "size": size,
        "seed": seed,
        "code_version": code_version(),
        "tenant_id": TENANT_ID,
        "person_id": PERSON_ID,
        "counts": dict(sorted(counts.items())),
        "build_seconds": round(time.perf_counter() - started, 2),
        "rare_words": rare_words[:2000],
        "phrase_samples": phrase_samples,
        "clock": clock,
    }


def _remember(
    db: Any,
    m: Any,
    generator: TextGenerator,
    state: _State,
    clock: int,
    index: int,
    counts: Counter[str],
) -> _Memory:
    rng = generator.rng
    person = OTHER_PERSON_ID if rng.random() < OTHER_PERSON_SHARE else PERSON_ID
    memory = generator.with_claim() if rng.random() < CLAIM_SHARE else generator.raw()
    claim = None
    if memory.claim is not None:
        claim = m.ClaimInput(
            subject=memory.claim.subject,
            predicate=memory.claim.predicate,
            value=memory.claim.value,
            kind=memory.claim.kind,
            valid_from=clock,
        )
    ingestion_key = None
    if memory.kind == "conversation" and rng.random() < 0.4:
        ingestion_key = f"session-{index // 20}:turn-{index % 20}"
    request = m.RememberRequest(
        tenant_id=TENANT_ID,
        person_id=person,
        kind=memory.kind,
        text=memory.text,
        captured_at=clock,
        recorded_at=clock + rng.randint(0, 25),
        ingestion_key=ingestion_key,
        claim=claim,
        locator=m.LocatorInput(**memory.locator) if memory.locator else None,
    )
    result = db.remember(request)
    counts["sources"] += 1
    counts[f"kind:{memory.kind}"] += 1
    if person == OTHER_PERSON_ID:
        counts["other_person_sources"] += 1
        return memory
    state.live_sources.append(result.source_id)
    if memory.claim is not None:
        counts["claims"] += 1
        counts[f"claim:{memory.claim.kind}"] += 1
        state.add_claim(result.claim_id, memory.claim, result.source_id)
    return memory


def _correct(db: Any, m: Any, generator: TextGenerator, state: _State, clock: int) -> None:
    rng = generator.rng
    claim_id = rng.choice(state.claim_ids)
    claim, _source_id = state.current_claims[claim_id]
    value = generator.value(claim.family)
    if value == claim.value:
        value = f"{value} again"
    text = rng.choice(
        (
            f"Correction: {claim.subject} {claim.predicate} is now {value}, not {claim.value}.",
            f"Actually that changed, {claim.subject} {claim.predicate} {value} from now on.",
            f"Update please: {value} instead of {claim.value}.",
        )
    )
    result = db.correct(
        m.CorrectRequest(
            tenant_id=TENANT_ID,
            person_id=PERSON_ID,
            claim_id=claim_id,
            text=text,
            value=value,
            valid_at=clock,
            recorded_at=clock,
        )
    )
    state.drop_claim(claim_id)
    replacement = _Claim(claim.subject, claim.predicate, value, claim.kind, claim.family)
    state.live_sources.append(result.source_id)
    state.add_claim(result.claim_id, replacement, result.source_id)


def _delete(db: Any, m: Any, state: _State, clock: int, rng: random.Random) -> Any:
    index = rng.randrange(len(state.live_sources))
    source_id = state.live_sources[index]
    state.live_sources[index] = state.live_sources[-1]
    state.live_sources.pop()
    result = db.delete(
        m.DeleteRequest(
            tenant_id=TENANT_ID, person_id=PERSON_ID, source_id=source_id, deleted_at=clock
        )
    )
    claim_id = state.source_claim.get(source_id)
    if claim_id is not None:
        state.drop_claim(claim_id)
    return result


# ----------------------------------------------------------------------------------------------
# Query mix
# ----------------------------------------------------------------------------------------------

QUERY_CLASSES = ("rare_word", "common_question", "keywords", "phrase")


def query_mix(meta: dict[str, Any], per_class: int, seed: int) -> dict[str, list[str]]:
    """Seeded search queries by class (all classes have *per_class* queries)."""
    rng = random.Random(seed * 7919 + 1)
    words = TextGenerator(random.Random(seed))
    rare = list(meta["rare_words"]) or ["Zzyzx"]
    common_forms = (
        lambda: f"What did {words.name(rng)} say about the {words.object(rng)}?",
        lambda: f"Where is the meeting about the {words.project(rng).removeprefix('the ')}?",
        lambda: f"When did I go to the {words.venue(rng).removeprefix('the ')}?",
        lambda: f"What is the name of the place in {words.city(rng)}?",
        lambda: "Did I tell you about the trip to the beach?",
        lambda: f"Who is the {words.relation(rng)} that works at the {words.org(rng)}?",
        lambda: f"What do I need to do for the {words.project(rng).removeprefix('the ')}?",
    )
    keyword_forms = (
        lambda: f"{words.food(rng)} {words.city(rng)}",
        lambda: f"{words.name(rng)} {words.org(rng)}",
        lambda: f"{words.health(rng).split()[-1]} {words.weekday(rng)} appointment",
        lambda: f"{words.object(rng)} {words.venue(rng).split()[-1]}",
        lambda: f"{words.activity(rng)} {words.feeling(rng)}",
        lambda: f"train {words.city(rng)} seat",
        lambda: f"{words.language(rng)} speak",
    )
    phrases: list[str] = []
    samples = list(meta["phrase_samples"]) or ["the coffee shop on the corner"]
    while len(phrases) < per_class:
        tokens = rng.choice(samples).split()
        width = rng.randint(3, 5)
        if len(tokens) <= width:
            continue
        start = rng.randrange(len(tokens) - width)
        phrases.append(" ".join(tokens[start : start + width]).strip(".,;:?!'"))
    return {
        "rare_word": [rng.choice(rare) for _ in range(per_class)],
        "common_question": [rng.choice(common_forms)() for _ in range(per_class)],
        "keywords": [rng.choice(keyword_forms)() for _ in range(per_class)],
        "phrase": phrases,
    }


# ----------------------------------------------------------------------------------------------
# Vectors
# ----------------------------------------------------------------------------------------------


def unit_vectors(count: int, dimension: int, seed: int) -> Any:
    """*count* seeded random unit float32 vectors (numpy array, one per row)."""
    import numpy as np

    generator = np.random.default_rng(seed)
    vectors = generator.standard_normal((count, dimension), dtype=np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    return vectors


def _vector_targets(conn: sqlite3.Connection, limit: int) -> list[tuple[str, str, str, int]]:
    """(kind, id, text, revision) of current claims, live raw sources, then live evidence: the
    first *limit* of them."""
    claims = conn.execute(
        "SELECT 'claim', id, subject || ' ' || predicate || ' ' || value, recorded_from FROM claims"
        " WHERE tenant_id = ? AND person_id = ? AND status = 'accepted'"
        " AND valid_until IS NULL AND recorded_until IS NULL ORDER BY id",
        (TENANT_ID, PERSON_ID),
    ).fetchall()
    sources = conn.execute(
        "SELECT 'source', s.id, s.content, s.revision FROM sources s"
        " WHERE s.tenant_id = ? AND s.person_id = ? AND s.deleted_at IS NULL AND NOT EXISTS ("
        "  SELECT 1 FROM evidence e JOIN claim_evidence ce ON ce.evidence_id = e.id"
        "  WHERE e.tenant_id = s.tenant_id AND e.person_id = s.person_id AND e.source_id = s.id"
        "  AND ce.relation IN ('supports', '\"supports\"'))"
        " ORDER BY s.id",
        (TENANT_ID, PERSON_ID),
    ).fetchall()
    # Evidence of live sources fills the lane up to *limit* (as a host embedding quotes would).
    evidence = conn.execute(
        "SELECT 'evidence', e.id, e.quote, e.source_revision FROM evidence e"
        " JOIN sources s ON s.id = e.source_id"
        " WHERE e.tenant_id = ? AND e.person_id = ? AND e.deleted_at IS NULL"
        " AND s.deleted_at IS NULL ORDER BY e.id LIMIT ?",
        (TENANT_ID, PERSON_ID, max(0, limit - len(claims) - len(sources))),
    ).fetchall()
    return [tuple(row) for row in (claims + sources + evidence)[:limit]]  # type: ignore[misc]


def _input_hash(text: str) -> str:
    return "sha256:" + hashlib.sha256(text.encode("utf-8")).hexdigest()


def add_vectors(
    path: Path,
    count: int,
    seed: int,
    *,
    dimension: int = VECTOR_DIMENSION,
    through_embed: int = 200,
    progress: Callable[[str], None] | None = None,
) -> dict[str, Any]:
    """Store up to *count* fresh vectors in the bench lane; returns a summary.

    The first *through_embed* vectors go through ``db.embed`` one by one. If those calls only
    inserted one row per target into some tables (``embeddings`` and any per-target bookkeeping,
    nothing else: checked with ``total_changes``), the rest are written by cloning those rows with
    each target's id, revision, ``sha256:`` hash and vector, after checking that cloning reproduces
    every row ``embed`` wrote exactly (``created_at`` aside). Otherwise every vector goes through
    ``db.embed``. Either way the rows are the ones ``embed`` writes, so every vector is fresh.
    """
    from zkr import MemoryDb
    from zkr import models as m

    started = time.perf_counter()
    db = MemoryDb(path)
    try:
        targets = _vector_targets(db.conn, count)
        vectors = unit_vectors(len(targets), dimension, seed + 1)

        def embed(index: int) -> None:
            kind, target_id, text, _revision = targets[index]
            db.embed(
                m.EmbedRequest(
                    tenant_id=TENANT_ID,
                    person_id=PERSON_ID,
                    target=m.TargetRef(kind=kind, id=target_id),
                    embedding=m.EmbeddingInput(
                        vector=vectors[index].tolist(),
                        model=VECTOR_MODEL,
                        version=VECTOR_VERSION,
                        input_hash=_input_hash(text),
                        normalization="l2",
                        distance="cosine",
                    ),
                )
            )

        head = min(through_embed, len(targets))
        tables = _plain_tables(db.conn)
        before = _row_counts(db.conn, tables)
        changes = db.conn.total_changes
        for index in range(head):
            embed(index)
        grown = {
            table
            for table, rows in _row_counts(db.conn, tables).items()
            if rows - before[table] == head
        }
        cloned = 0
        if head and db.conn.total_changes - changes == head * len(grown):
            clone = _Cloner(db.conn, grown, targets[:head], vectors[:head])
            if clone.faithful:
                with db.atomic() as conn:
                    for table in sorted(grown):
                        conn.executemany(
                            clone.insert_sql(table),
                            (
                                clone.row(table, targets[i], vectors[i])
                                for i in range(head, len(targets))
                            ),
                        )
                cloned = len(targets) - head
        for batch_start in range(head + cloned, len(targets), BATCH_OPERATIONS):
            with db.atomic():
                for index in range(batch_start, min(batch_start + BATCH_OPERATIONS, len(targets))):
                    embed(index)
            if progress is not None:
                done = min(batch_start + BATCH_OPERATIONS, len(targets))
                progress(f"vectors: {done}/{len(targets)} ({time.perf_counter() - started:.0f} s)")
        db.conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    finally:
        db.close()
    kinds = Counter(kind for kind, *_ in targets)
    if progress is not None:
        progress(f"vectors: {len(targets)} stored ({cloned} cloned from embed's rows)")
    return {
        "model": VECTOR_MODEL,
        "version": VECTOR_VERSION,
        "dimension": dimension,
        "count": len(targets),
        "by_kind": dict(sorted(kinds.items())),
        "through_embed": len(targets) - cloned,
        "cloned_rows": cloned,
        "build_seconds": round(time.perf_counter() - started, 2),
    }


def _plain_tables(conn: sqlite3.Connection) -> list[str]:
    rows = conn.execute(
        "SELECT name FROM sqlite_master WHERE type = 'table' AND sql NOT LIKE 'CREATE VIRTUAL%'"
        " AND name NOT LIKE 'sqlite_%' AND name NOT LIKE 'source_fts_%' ORDER BY name"
    ).fetchall()
    return [name for (name,) in rows]


def _row_counts(conn: sqlite3.Connection, tables: list[str]) -> dict[str, int]:
    return {
        table: conn.execute(f'SELECT count(*) FROM "{table}"').fetchone()[0] for table in tables
    }


class _Cloner:
    """Rows that ``embed`` would write for a target, cloned from one it did write."""

    #: Columns that depend on the target (everything else must be equal across embed's rows).
    PER_TARGET = ("target_kind", "target_id", "target_revision", "input_hash", "vector")

    def __init__(
        self,
        conn: sqlite3.Connection,
        tables: set[str],
        written: list[tuple[str, str, str, int]],
        vectors: Any,
    ) -> None:
        self.columns: dict[str, list[str]] = {}
        self.templates: dict[str, dict[str, Any]] = {}
        self.faithful = bool(tables)
        for table in tables:
            columns = [row[1] for row in conn.execute(f'PRAGMA table_info("{table}")')]
            if not {"target_kind", "target_id"} <= set(columns):
                self.faithful = False
                return
            self.columns[table] = columns
            actual = {
                (row[columns.index("target_kind")], row[columns.index("target_id")]): dict(
                    zip(columns, row, strict=True)
                )
                for row in conn.execute(
                    f'SELECT * FROM "{table}" WHERE model = ? AND version = ?',
                    (VECTOR_MODEL, VECTOR_VERSION),
                )
            }
            first = written[0]
            self.templates[table] = actual[(first[0], first[1])]
            for target, vector in zip(written, vectors, strict=True):
                stored = actual.get((target[0], target[1]))
                expected = dict(zip(columns, self.row(table, target, vector), strict=True))
                if stored is None or {**stored, "created_at": None} != {
                    **expected,
                    "created_at": None,
                }:
                    self.faithful = False
                    return

    def insert_sql(self, table: str) -> str:
        columns = self.columns[table]
        names = ", ".join(f'"{name}"' for name in columns)
        return f'INSERT INTO "{table}"({names}) VALUES ({", ".join("?" * len(columns))})'

    def row(self, table: str, target: tuple[str, str, str, int], vector: Any) -> tuple[Any, ...]:
        kind, target_id, text, revision = target
        template = self.templates[table]
        values = {
            "target_kind": kind,
            "target_id": target_id,
            "target_revision": revision,
            "input_hash": _input_hash(text),
            "vector": _encode(vector),
        }
        return tuple(
            values[name] if name in values and name in template else template[name]
            for name in self.columns[table]
        )


def _encode(vector: Any) -> bytes:
    """The store's vector encoding: little-endian float32 (checked against embed's own rows)."""
    return bytes(vector.astype("<f4").tobytes())


def main(argv: list[str]) -> int:
    """``python benchmarks/corpus.py SIZE PATH [SEED]``: build one corpus (for inspection)."""
    size, path = int(argv[0]), Path(argv[1])
    seed = int(argv[2]) if len(argv) > 2 else 1
    meta = build_corpus(path, size, seed, progress=lambda line: print(line, file=sys.stderr))
    print(json.dumps({k: v for k, v in meta.items() if k not in ("rare_words", "phrase_samples")}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
