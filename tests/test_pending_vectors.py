"""Vectors are computed outside the write lock: a write commits its text and pending
marks at once, the vectors land afterwards, a crash leaves a queue that the next start completes, and
only new or changed texts are embedded."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import threading
import time
from collections.abc import Sequence

import numpy as np

from limbic.core.embedding.base import HashingEmbedder
from limbic.core.models import EntityInput as E
from limbic.core.models import ObservationInput as O
from limbic.core.service import MemoryService
from limbic.core.store.backend import open_database
from limbic.core.store.indexing import observation_passage, text_hash
from limbic.core.vectors.turns import turn_file


class GatedEmbedder(HashingEmbedder):
    """A real embedder whose passage embedding waits while the gate is closed (the model "blocked");
    query encoding never waits. Records every text it embedded (``texts``) and encoded as a query (``queries``:
    a write encodes its new observations so)."""

    def __init__(self) -> None:
        super().__init__()
        self.gate = threading.Event()
        self.gate.set()
        self.entered = threading.Event()
        self.texts: list[str] = []
        self.queries: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.entered.set()
        self.gate.wait(30)
        self.texts.extend(texts)
        return super().embed(texts)

    def embed_query(self, text: str) -> np.ndarray:
        self.queries.append(text)
        return super().embed_query(text)


def _vector_rows(service: MemoryService) -> tuple[int, int, int]:
    conn = service.database.read()
    return tuple(conn.execute(sql).fetchone()[0] for sql in (  # type: ignore[return-value]
        "SELECT count(*) FROM observation_embeddings",
        "SELECT count(*) FROM observation_embedding_meta",
        "SELECT count(*) FROM observations WHERE superseded_at IS NULL"))


def test_a_write_commits_at_once_with_the_model_blocked_and_a_second_writer_is_not_delayed(memory_address):
    embedder = GatedEmbedder()
    service = MemoryService(open_database(memory_address), embedder, background_vectors=True)
    try:
        service.entities.create_entities([E("Other", "T", (O("plain words"),))])
        assert service.search.wait_for_vectors(10)
        embedder.gate.clear()
        embedder.entered.clear()
        service.entities.create_entities([E("Zebra notes", "T", (O("zebras sleep standing up"),))])
        assert embedder.entered.wait(10)  # the background embedder is now stuck inside the model
        assert embedder.queries == []  # nothing it could contradict: not encoded with the write, which never waited
        assert [e.name for e in service.search.search_nodes("zebras").entities] == ["Zebra notes"]  # keyword: at once
        assert service.search.pending_vectors() == 1
        outcome = service.search.query("zebras sleep", 5, record=False)
        assert outcome.pending_vectors == 1 and outcome.results[0].name == "Zebra notes"

        second = threading.Thread(target=lambda: service.entities.add_observations([("Other", [O("more words")])]))
        second.start()
        second.join(10)
        assert not second.is_alive() and not embedder.gate.is_set()  # done while the model is still blocked
        assert "more words" in [o.content for o in service.entities.get_entity("Other").entity.observations]

        embedder.gate.set()
        assert service.search.wait_for_vectors(10) and service.search.pending_vectors() == 0
        found = service.search.query("zebras sleep", 5, record=False)
        assert found.results[0].name == "Zebra notes" and found.results[0].distance is not None
        assert _vector_rows(service) == (3, 3, 3)
    finally:
        embedder.gate.set()
        service.close()


def test_a_write_made_while_its_entity_is_being_embedded_is_embedded_again(memory_address):
    embedder = GatedEmbedder()
    service = MemoryService(open_database(memory_address), embedder, background_vectors=True)
    try:
        embedder.gate.clear()
        service.entities.create_entities([E("Note", "T", (O("first text"),))])
        assert embedder.entered.wait(10)  # embedding "first text" now
        service.entities.update_observation("Note", "first text", "second text")
        embedder.gate.set()
        assert service.search.wait_for_vectors(10)
        conn = service.database.read()
        stored = conn.execute("SELECT text_hash FROM observation_embedding_meta").fetchall()
        assert stored == [(text_hash(observation_passage("Note", "second text")),)]  # never the stale text
        assert service.search.pending_vectors() == 0 and _vector_rows(service) == (1, 1, 1)
    finally:
        embedder.gate.set()
        service.close()


def test_appending_to_a_long_entity_embeds_only_the_new_observation(memory_address):
    embedder = GatedEmbedder()
    service = MemoryService(open_database(memory_address), embedder)
    try:
        facts = tuple(O(f"fact number {i} about the long running migration of the billing system") for i in range(100))
        service.entities.create_entities([E("Long", "Project", facts)])
        embedder.texts.clear()
        embedder.queries.clear()
        service.entities.add_observations([("Long", [O("the cut-over happens on a Sunday night")])])
        assert embedder.queries == []  # it can contradict none of the facts: not encoded with the write
        assert embedder.texts == ["Long: the cut-over happens on a Sunday night"]  # the entity's head is full: once
        service.entities.add_observations([("Long", [O("the cut-over moved to a Saturday night")])])
        assert embedder.queries == ["Long: the cut-over moved to a Saturday night"]  # it may: with the write, once
        assert embedder.texts == ["Long: the cut-over happens on a Sunday night"]  # not again in the background
        service.entities.update_observation("Long", "fact number 50 about the long running migration of the billing system",
                                   "fact fifty, corrected")
        assert embedder.texts[-1] == "Long: fact fifty, corrected"
        assert _vector_rows(service) == (102, 102, 102) and service.search.pending_vectors() == 0
    finally:
        service.close()


_WRITER = textwrap.dedent("""
    import sys, threading
    from limbic.core.embedding.base import HashingEmbedder
    from limbic.core.models import EntityInput as E, ObservationInput as O
    from limbic.core.service import MemoryService
    from limbic.core.store.backend import open_database

    class Stuck(HashingEmbedder):
        def embed(self, texts):
            threading.Event().wait()  # the model never answers: killed before any vector is written

    service = MemoryService(open_database(sys.argv[1]), Stuck(), background_vectors=True)
    service.entities.create_entities([E(f"entity {i}", "T", (O(f"fact {i}"), O(f"other fact {i}"))) for i in range(20)])
    print("committed", flush=True)
    threading.Event().wait()
""")


def test_kill_9_between_text_and_vectors_loses_nothing_and_the_next_start_completes(memory_address):
    path = memory_address
    writer = subprocess.Popen([sys.executable, "-c", _WRITER, path], stdout=subprocess.PIPE, text=True)
    try:
        assert writer.stdout is not None and writer.stdout.readline().strip() == "committed"
    finally:
        os.kill(writer.pid, signal.SIGKILL)
        writer.wait(10)
    service = MemoryService(open_database(path), HashingEmbedder(), background_vectors=True)
    try:
        assert service.entities.stats().entities == 20 and service.entities.stats().observations == 40
        deadline = time.monotonic() + 20
        while service.search.pending_vectors() and time.monotonic() < deadline:  # the start resumed on its own
            time.sleep(0.05)
        assert service.search.pending_vectors() == 0
        assert _vector_rows(service) == (40, 40, 40)  # each observation embedded once, nothing duplicated
        conn = service.database.read()
        assert conn.execute("SELECT count(*) FROM entity_embeddings").fetchone()[0] == 20
        assert service.search.query("other fact 7", 3, record=False).results[0].name == "entity 7"
    finally:
        service.close()


class RecordingEmbedder(HashingEmbedder):
    """A real embedder that records every text it embedded."""

    def __init__(self) -> None:
        super().__init__()
        self.texts: list[str] = []

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.texts.extend(texts)
        return super().embed(texts)


def test_writers_on_one_memory_each_embed_their_own_writes_and_take_over_orphaned_marks(memory_address, monkeypatch):
    """Two services on one memory (as the app and an agent's ``limbic mcp``): every text is embedded once,
    by the filler of the process that wrote it; a mark another writer left behind is filled once it is
    ORPHAN_SECONDS old."""
    path = memory_address
    first_model, second_model = RecordingEmbedder(), RecordingEmbedder()
    first = MemoryService(open_database(path), first_model, background_vectors=True)
    second = MemoryService(open_database(path), second_model, background_vectors=True)
    try:
        for i in range(12):
            (first if i % 2 else second).entities.create_entities([E(f"note {i}", "T", (O(f"fact number {i}"),))])
        for service in (first, second):
            service.vectors._filler.wait(10)
        assert first.search.pending_vectors() == 0
        assert not set(first_model.texts) & set(second_model.texts)  # no text embedded twice
        assert any("fact number 1" in t for t in first_model.texts)
        assert any("fact number 0" in t for t in second_model.texts)

        with first.vectors.deferred():  # a writer that stops before filling its marks
            first.entities.create_entities([E("left behind", "T", (O("an orphaned fact"),))])
        second.entities.create_entities([E("fresh", "T", (O("a fresh fact"),))])
        second.vectors._filler.wait(10)
        assert first.search.pending_vectors() == 1  # another writer's recent mark: not taken
        with second.database.maintenance() as conn:
            conn.execute("UPDATE pending_vectors SET queued_at = queued_at - 3600")
        second.entities.create_entities([E("later", "T", (O("a later fact"),))])
        second.vectors._filler.wait(10)
        assert first.search.pending_vectors() == 0
        assert any("an orphaned fact" in t for t in second_model.texts)
    finally:
        first.close()
        second.close()


class OverlapEmbedder(HashingEmbedder):
    """A real embedder that takes a while and counts how many of its kind run at once."""

    running = 0
    most = 0
    guard = threading.Lock()

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        with OverlapEmbedder.guard:
            OverlapEmbedder.running += 1
            OverlapEmbedder.most = max(OverlapEmbedder.most, OverlapEmbedder.running)
        time.sleep(0.02)
        with OverlapEmbedder.guard:
            OverlapEmbedder.running -= 1
        return super().embed(texts)


def test_writers_on_one_memory_take_turns_with_the_model(memory_address):
    """Background embedders of services on one memory never run the model at the same time (the embedding
    turn, core/store/turns.py), and every vector still lands."""
    path = memory_address
    services = [MemoryService(open_database(path), OverlapEmbedder(), background_vectors=True) for _ in range(3)]
    try:
        for i in range(30):
            services[i % 3].entities.create_entities([E(f"note {i}", "T", (O(f"fact number {i}"),))])
        for service in services:
            service.vectors._filler.wait(30)
        assert services[0].search.pending_vectors() == 0 and _vector_rows(services[0]) == (30, 30, 30)
        assert OverlapEmbedder.most == 1
        assert turn_file(services[0].database.path, "embed").exists()
    finally:
        for service in services:
            service.close()


class FailsOnceEmbedder(HashingEmbedder):
    """A real embedder whose first call fails (a model error), the next ones work."""

    def __init__(self) -> None:
        super().__init__()
        self.passage_calls = 0  # the queries a write encodes its texts with are not the background embedder's

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        self.passage_calls += 1
        if self.passage_calls == 1:
            raise RuntimeError("the model failed once")
        return super().embed(texts)


def test_a_failed_step_is_retried_and_its_vectors_still_land(memory_address, monkeypatch):
    monkeypatch.setattr("limbic.core.vectors.filler.RETRY_SECONDS", 0.05)
    embedder = FailsOnceEmbedder()
    service = MemoryService(open_database(memory_address), embedder, background_vectors=True)
    try:
        service.entities.create_entities([E("Zebra notes", "T", (O("zebras sleep standing up"),))])
        deadline = time.monotonic() + 10
        while service.search.pending_vectors() and time.monotonic() < deadline:
            time.sleep(0.02)
        assert service.search.pending_vectors() == 0 and _vector_rows(service) == (1, 1, 1)
        assert isinstance(service.vectors._filler.last_error, RuntimeError)
    finally:
        service.close()


class BrokenEmbedder(HashingEmbedder):
    """A real embedder that always fails (a model gone bad), counting the background filler's calls (a write also
    tries to encode its own new text, and then leaves it to the filler)."""

    def __init__(self) -> None:
        super().__init__()
        self.filler_calls = 0

    def embed(self, texts: Sequence[str]) -> np.ndarray:
        if threading.current_thread().name == "limbic-vector-filler":
            self.filler_calls += 1
        raise RuntimeError("the model is broken")


def test_a_failing_step_waits_between_attempts_however_often_writes_wake_it(tmp_path, caplog):
    embedder = BrokenEmbedder()
    service = MemoryService(open_database(str(tmp_path / "memory.db")), embedder, background_vectors=True)
    try:
        started = time.monotonic()
        n = 0
        while time.monotonic() - started < 2.0:  # a write every 10 ms, each waking the filler
            n += 1
            service.entities.create_entities([E(f"note {n}", "T", (O(f"text {n}"),))])
            time.sleep(0.01)
        attempts = embedder.filler_calls
    finally:
        service.close()
    # the first attempt once the writes waited 1 s, then 0.25, 0.5 s between attempts: a handful in 2 s, not one
    # per wake (a spin made thousands)
    assert 2 <= attempts <= 6, attempts
    failures = [r for r in caplog.records if "computing pending vectors failed" in r.getMessage()]
    assert len(failures) == 1
