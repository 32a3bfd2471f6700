"""The chat-log family's verbs as the formats that share them use them (``frames.chatlog``)."""

from __future__ import annotations

import importlib
import pickle
from functools import partial
from pathlib import Path

import pytest

from cc_analytics.frames.chatlog.verbs import batches_of, sessions_batch, turns_batch
from tests.conftest import ROOT

GENERATORS = {
    "gemini": ("gemini", ".gemini/tmp"),
    "qwen": ("qwen", ".qwen/projects"),
}

FORMATS = ("gemini", "qwen", "copilot")


@pytest.mark.parametrize("name", FORMATS)
def test_the_batches_cross_to_worker_processes(name: str) -> None:
    # A worker gets each batch function pickled: one that pickles to another object (a verb
    # made under the same name) fails there, never in-process.
    spec = importlib.import_module(f"cc_analytics.frames.{name}.verbs").SPEC
    batches = batches_of(spec)
    files = spec.resolve(ROOT / "data-samples" / name)
    assert files
    works = {
        "sessions": partial(sessions_batch, batches.tables),
        "turns": partial(turns_batch, batches.tables),
        "events": batches.events,
        "problems": batches.problems,
    }
    for table, work in works.items():
        crossed = pickle.loads(pickle.dumps(work))
        assert crossed(files).equals(work(files)), table
    requests, problems = pickle.loads(pickle.dumps(batches.requests))(files)
    assert requests.height > 0 and requests.equals(batches.requests(files)[0])
    assert problems.equals(batches.requests(files)[1])


@pytest.mark.parametrize("name", sorted(GENERATORS))
def test_the_lean_requests_are_the_tables_requests(name: str, tmp_path: Path) -> None:
    # ``usage`` reads the requests batch, a lean parse: the same requests and problems as the
    # full read's, on the samples and on a generated home (streamed rewrites, rewinds).
    from tests.fixtures.gemini.make_corpus import generate

    agent, store = GENERATORS[name]
    generate(agent, tmp_path / "home", 1.0, seed=4)
    spec = importlib.import_module(f"cc_analytics.frames.{name}.verbs").SPEC
    batches = batches_of(spec)
    for source in (ROOT / "data-samples" / name, tmp_path / "home" / store):
        files = spec.resolve(source)
        requests, problems = batches.requests(files)
        tables = batches.tables(files)
        assert requests.height > 0 and requests.equals(tables.requests)
        assert problems.equals(tables.problems)


@pytest.mark.parametrize("name", FORMATS)
def test_every_reader_batches_chats_alike(name: str) -> None:
    # The table cache batches by the plugin (``batching``), the format's own verbs by its
    # Batches: one size for both (with the engine's 64 MB, a first ``sessions`` through the
    # cache took a 1 GB Copilot CLI home's tree to 460-475 MB, against 297 MB without the cache).
    from cc_analytics.frames.chatlog.store import BATCH_BYTES
    from cc_analytics.frames.engine import BATCH_BYTES as ENGINE_BATCH_BYTES
    from cc_analytics.frames.registry import get

    spec = importlib.import_module(f"cc_analytics.frames.{name}.verbs").SPEC
    batches = batches_of(spec)
    size, threads = get(name).batching(10**9, turns=True)
    assert (size, threads) == (batches.batch_bytes, False)
    assert size == BATCH_BYTES < ENGINE_BATCH_BYTES
    # without turns: a format that tallies its files (Copilot CLI) takes bigger batches, in both
    assert get(name).batching(10**9, turns=False) == (batches.sessions_bytes or batches.batch_bytes, False)
