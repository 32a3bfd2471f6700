"""The fuzz targets: what to call, on which inputs, and which outcomes are documented.

A :class:`Target` pairs a hypothesis strategy with a function that pushes one input
through the code under test and checks the invariants that must hold when it returns.
Raising one of the target's ``documented`` exceptions (with a message of the documented
form) is fine, and so is a warning of the documented form; anything else is a finding.
:func:`check` classifies one run; ``test_fuzz_core.py`` runs every target a little and
``run_long.py`` runs one a lot. Register a new target with :func:`register`. A target may
have seeds (its fuzz corpus, run before anything generated) and may need the C extension
(``unavailable`` then says why it cannot run).
"""

from __future__ import annotations

import glob
import json
import os
import pickle
import re
import struct
import tempfile
import traceback
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import polars as pl
from hypothesis import strategies as st

from cc_analytics.core import (
    Budget,
    ContextWindow,
    SchemaError,
    TranscriptWarning,
    canonical_json,
    capture_window,
    capture_windows,
    compact_json,
)
from cc_analytics.core.jsontext import MISSING, TOO_DEEP, _decode, _decode_any_depth, decode_line
from tests.conftest import extension_unavailable
from tests.fuzz import mutations
from tests.fuzz.extension import CODEX_EXTENSION, COPILOT_EXTENSION

SOURCE = "fuzz.jsonl"
NOT_FOUND = re.compile(r"anchor .* not found in session .*", re.DOTALL)
WINDOW_MESSAGE = re.compile(
    r"(expected schema 'cc-transcript\.context/2', got: |expected preview schema 'cc-transcript\.preview/1', got: "
    r"|unknown preview kind: |window[.\[:])",
    re.DOTALL,
)
LINE_WARNING = re.compile(rf"{re.escape(SOURCE)}:[1-9][0-9]*: ", re.DOTALL)


@dataclass(frozen=True)
class Target:
    """One fuzz target.

    ``run`` raises only the ``documented`` exceptions (type, message pattern matched at the
    start) and emits only warnings of ``warning_category`` whose message matches
    ``warning``; an AssertionError from ``run`` is a broken invariant. A target whose
    ``batch`` is above 1 takes a list of up to ``batch`` inputs at once (the frames loaders
    decode a folder of transcripts in one batch, as the batch engine does); each input is
    still one example.
    """

    name: str
    inputs: st.SearchStrategy
    run: Callable[[Any], None]
    documented: tuple[tuple[type[BaseException], re.Pattern], ...] = ()
    warning_category: type[Warning] | None = None
    warning: re.Pattern | None = None
    group: str = "core"
    batch: int = 1
    notes: str = field(default="", compare=False)
    seeds: Callable[[], tuple[Any, ...]] = field(default=tuple, compare=False)
    unavailable: Callable[[], str | None] = field(default=lambda: None, compare=False)


TARGETS: dict[str, Target] = {}


def register(target: Target) -> Target:
    TARGETS[target.name] = target
    return target


@dataclass(frozen=True)
class Finding:
    """An undocumented outcome: its kind, a one-line summary and where it was raised."""

    kind: str
    summary: str
    where: str

    @property
    def signature(self) -> tuple[str, str]:
        return (self.summary.split(":", 1)[0], self.where)


def _where(exc: BaseException) -> str:
    frames = traceback.extract_tb(exc.__traceback__)
    ours = [f for f in frames if "cc_analytics" in f.filename] or frames
    last = ours[-1] if ours else None
    return f"{Path(last.filename).name}:{last.lineno} in {last.name}" if last else "?"


def check(target: Target, value: Any) -> Finding | None:
    """Run ``target`` on one input; None when everything that happened is documented."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            target.run(value)
        # The harness must classify every exception the code under test lets out, whatever its type.
        except Exception as exc:
            for kind, pattern in target.documented:
                if isinstance(exc, kind) and pattern.match(str(exc)):
                    break
            else:
                return Finding("exception", f"{type(exc).__name__}: {str(exc)[:200]}", _where(exc))
    for item in caught:
        category_ok = target.warning_category is not None and issubclass(item.category, target.warning_category)
        if not (category_ok and target.warning is not None and target.warning.match(str(item.message))):
            where = f"{Path(item.filename).name}:{item.lineno}"
            return Finding("warning", f"{item.category.__name__}: {str(item.message)[:200]}", where)
    return None


# -- core: the line decoder ---------------------------------------------------------------


def run_decode_line(line: bytes) -> None:
    value = decode_line(line)
    if value is MISSING or value is TOO_DEEP:
        return
    compact_json(value)
    canonical_json(value, lenient=True)
    try:  # where the C decoder manages, the any-depth decoder must build the very same value
        fast = _decode(line.decode("utf-8"))
    except (ValueError, RecursionError):
        return
    slow = _decode_any_depth(line.decode("utf-8"))
    # compared as text: ``==`` recurses, and the C decoder may just have fit under the limit
    assert compact_json(fast) == compact_json(slow), "decoders disagree"


register(
    Target(
        "core.decode_line",
        mutations.lines(),
        run_decode_line,
        notes="cc_analytics.core.jsontext.decode_line, then compact and canonical JSON of what it read",
    )
)


# -- core: capture ------------------------------------------------------------------------


def _window_round_trip(window: ContextWindow) -> None:
    text = window.to_json()
    back = ContextWindow.from_json(text)
    assert back == window and back.to_json() == text, "from_json(to_json(w)) != w"
    window.render_preview(budget=Budget())


def run_capture(case: tuple[bytes, list, dict]) -> None:
    raw, anchors, options = case
    windows = capture_windows(raw, anchors, source=SOURCE, **options)
    assert len(windows) == len(anchors)
    for window in windows:
        _window_round_trip(window)
    _window_round_trip(capture_window(raw, anchors[0], source=SOURCE, **options))


register(
    Target(
        "core.capture",
        mutations.transcripts(),
        run_capture,
        documented=((ValueError, NOT_FOUND),),
        warning_category=TranscriptWarning,
        warning=LINE_WARNING,
        notes="capture_windows and capture_window on mutated transcripts; every window round-trips and renders",
    )
)


# -- core: the wire format ----------------------------------------------------------------


def run_from_json(doc: str | bytes) -> None:
    window = ContextWindow.from_json(doc)
    _window_round_trip(window)
    window.render_preview(budget=Budget(turn_chars=-1))
    window.render_preview(budget=Budget(turn_chars=0))


register(
    Target(
        "core.from_json",
        mutations.window_documents(),
        run_from_json,
        documented=((json.JSONDecodeError, re.compile("")), (SchemaError, WINDOW_MESSAGE)),
        notes="ContextWindow.from_json -> to_json -> from_json -> render_preview on mutated golden windows",
    )
)


# -- frames: every frame of both formats' loaders, through their public verbs -------------------

FRAMES_BATCH = 32
CLAUDE_STEM = "00000000-0000-4000-8000-{:012d}"


VERBS = ("events", "turns", "sessions", "problems", "requests")


def _every_frame(package: Any, folder: Path) -> dict[str, pl.DataFrame]:
    """Each ``read_<verb>`` of a format package on ``folder``."""
    return {verb: getattr(package, f"read_{verb}")(folder) for verb in VERBS}


def _frame_schemas(frames: dict[str, pl.DataFrame], schema_module: Any) -> None:
    """Each frame in its format's ``<VERB>_SCHEMA``."""
    for name, frame in frames.items():
        expected = getattr(schema_module, f"{name.upper()}_SCHEMA")
        assert frame.schema == expected, f"{name}: schema {frame.schema} is not {expected}"


def _written(folder: Path, batch: list[bytes], stem: str) -> list[Path]:
    for old in folder.iterdir():
        old.unlink()
    paths = [folder / f"{stem.format(i)}.jsonl" for i in range(len(batch))]
    for path, raw in zip(paths, batch, strict=True):
        path.write_bytes(raw)
    return paths


def _lines_read(raw: bytes) -> set[int]:
    """Line numbers a loader reads: not empty, and not only a CR."""
    return {n for n, line in enumerate(raw.split(b"\n"), start=1) if line not in (b"", b"\r")}


def _per_file(frame: pl.DataFrame, column: str = "line") -> dict[str, list[int]]:
    rows = frame.select("source_file", column).rows()
    out: dict[str, list[int]] = {}
    for source, line in rows:
        out.setdefault(source, []).append(line)
    return out


def run_claude_frames(batch: list[bytes]) -> None:
    import cc_analytics.frames as front
    import cc_analytics.frames.claude as claude
    from cc_analytics.frames.claude import schema as S

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        paths = _written(folder, batch, CLAUDE_STEM)
        frames = _every_frame(claude, folder)
        tables = front.read_tables(paths, format="claude-code")
    _frame_schemas(frames, S)
    sessions = frames["sessions"]
    assert sessions["session_id"].n_unique() == sessions.height, "a session twice in the sessions frame"
    # one decode for every table gives what the separate verbs give
    assert tables.sessions.equals(sessions.sort("format", "session_id")), "read_tables sessions != read_sessions"
    assert tables.turns.equals(frames["turns"]), "read_tables turns != read_turns"
    assert tables.requests.equals(frames["requests"]), "read_tables requests != read_requests"
    costs = frames["requests"]["cost_usd"].drop_nulls()
    assert costs.is_finite().all(), "a request priced at a non-finite cost"


register(
    Target(
        "frames.claude",
        mutations.transcripts().map(lambda case: case[0]),
        run_claude_frames,
        group="frames",
        batch=FRAMES_BATCH,
        notes="frames.claude read_events/turns/sessions/problems/requests and read_tables on a folder of mutated transcripts",
        seeds=lambda: mutations.deep_heads(mutations.transcript_seeds()[0]),
    )
)


def run_claude_skim(batch: list[bytes]) -> None:
    """The C skimmer walks what the Python walker walks: the same lists, for every profile it
    serves, but for the timestamps it reads to microseconds (the same instants as their texts)."""
    from cc_analytics.frames.claude import decode
    from cc_analytics.frames.claude import schema as S
    from cc_analytics.frames.claude.discovery import TranscriptFile
    from cc_analytics.frames.claude.tally import parse_time

    def same_time(fast: object, pure: object) -> object:
        if isinstance(fast, int):
            assert isinstance(pure, str) and parse_time(pure) == parse_time(fast), (fast, pure)
            return pure
        return fast

    skim = decode.SKIM_LINES
    if skim is None:
        msg = f"frames.claude.skim cannot run: {extension_unavailable()}"
        raise RuntimeError(msg)
    files = [
        TranscriptFile(Path(f"/fuzz/{CLAUDE_STEM.format(i)}.jsonl"), "s", None if i % 2 else "a", "main", "p", len(raw))
        for i, raw in enumerate(batch)
    ]
    for profile in (decode.SESSIONS, decode.TURNS, decode.FINDINGS, decode.REQUESTS):
        walked = []
        for walker in (skim, None):
            decode.SKIM_LINES = walker
            try:
                got = decode.walk_files(files, profile, contents=batch)
            finally:
                decode.SKIM_LINES = skim
            walked.append((got.columns, got.blocks.state(), got.problems, got.file_of_row, got.pricing))
        fast, pure = walked[0][0][S.TIMESTAMP], walked[1][0][S.TIMESTAMP]
        if len(fast) == len(pure):
            fast[:] = [same_time(a, b) for a, b in zip(fast, pure, strict=True)]
        assert walked[0] == walked[1], f"the skimmer and the Python walker disagree ({profile})"


register(
    Target(
        "frames.claude.skim",
        mutations.transcripts().map(lambda case: case[0]),
        run_claude_skim,
        group="frames",
        batch=FRAMES_BATCH,
        notes="frames.claude's line walker with and without the C skimmer, every profile it serves, equal lists",
        seeds=mutations.transcript_corpus,
        unavailable=extension_unavailable,
    )
)


def run_codex_scan(batch: list[bytes]) -> None:
    """The Codex lean scan reads each rollout alike with and without its C loop (``_scan.c``):
    the same scan, or both give up on it (then the walker reads it)."""
    from cc_analytics.frames.codex import scan as lean_scan

    if lean_scan.SCAN_LINES is None:
        msg = f"frames.codex.scan cannot run: {extension_unavailable(CODEX_EXTENSION)}"
        raise RuntimeError(msg)
    for raw in batch:
        found = []
        for native in (True, False):
            try:
                found.append(lean_scan.scan(raw, native=native))
            except lean_scan.Unclean:
                found.append(None)
        assert same(found[0], found[1]), "the C loop and the Python scan disagree"


def same(left: object, right: object) -> bool:
    """Deep equality of scans, without recursion: a rollout's header may nest as deep as the line
    policy reads (25,000 levels), past what ``==`` on nested dicts reaches before the
    interpreter's recursion limit."""
    import dataclasses

    pairs = [(left, right)]
    while pairs:
        one, other = pairs.pop()
        if type(one) is not type(other):
            return False
        if isinstance(one, dict):
            if one.keys() != other.keys():
                return False
            pairs.extend((one[key], other[key]) for key in one)
        elif isinstance(one, list | tuple):
            if len(one) != len(other):
                return False
            pairs.extend(zip(one, other, strict=True))
        elif dataclasses.is_dataclass(one) and not isinstance(one, type):
            pairs.extend((getattr(one, f.name), getattr(other, f.name)) for f in dataclasses.fields(one))
        elif one != other:
            return False
    return True


register(
    Target(
        "frames.codex.scan",
        mutations.codex_rollouts(),
        run_codex_scan,
        group="frames",
        batch=FRAMES_BATCH,
        notes="frames.codex's lean scan with and without its C loop: equal scans, or both give up",
        seeds=mutations.codex_corpus,
        unavailable=partial(extension_unavailable, CODEX_EXTENSION),
    )
)


def run_copilot_events(batch: list[bytes]) -> None:
    """The Copilot CLI walk reads each log alike with and without its C loop (``_events.c``): the
    same event rows, requests, problems and line count; and so does the lean read (``laid_out``)."""
    from cc_analytics.frames.copilot import events

    if events.SCAN_LINES is None:
        msg = f"frames.copilot.events cannot run: {extension_unavailable(COPILOT_EXTENSION)}"
        raise RuntimeError(msg)
    for raw in batch:
        found = [events.parse(raw, native=native) for native in (True, False)]
        assert same(found[0], found[1]), "the C loop and the Python walk disagree"
        found = [events.parse(raw, lean=True, native=native) for native in (True, False)]
        assert same(found[0], found[1]), "the lean read in C and in Python disagree"
        _same_tallies(events, raw)


def _same_tallies(events: Any, raw: bytes) -> None:
    """The tally (``parse(..., tally=True)``) in C and in Python is the fold of the full read's
    rows, the times aside where C gave up on them (an escaped timestamp: the file is then read
    again in full)."""
    folded = events.tally_of_rows(events.parse(raw, native=False))
    fast, pure = (events.parse(raw, tally=True, native=native) for native in (True, False))
    assert pure.tally == folded, "the Python tally is not the fold of the rows"
    assert (fast.requests, fast.problems, fast.lines) == (pure.requests, pure.problems, pure.lines)
    times = (events.FIRST_STAMP, events.LAST_STAMP, events.STAMP_SIZE, events.ODD_STAMPS)
    odd = fast.tally[events.ODD_STAMPS]
    for place in range(events.TALLY_WIDTH):
        if odd and place in times:
            continue
        assert fast.tally[place] == folded[place], f"the C tally's place {place} is not the rows'"


register(
    Target(
        "frames.copilot.events",
        mutations.copilot_logs(),
        run_copilot_events,
        group="frames",
        batch=FRAMES_BATCH,
        notes="frames.copilot's event walk with and without its C loop: equal rows, requests, problems and tallies",
        seeds=mutations.copilot_corpus,
        unavailable=partial(extension_unavailable, COPILOT_EXTENSION),
    )
)


def run_copilot_otel(batch: list[bytes]) -> None:
    """Copilot CLI's OpenTelemetry export: any bytes parse (a bad line or value is a problem
    row), every request it gives is dated, in a named session, with counts >= 0, and the lean
    read (``usage``'s) gives the same requests without event rows."""
    from cc_analytics.frames.copilot import otel

    for raw in batch:
        lean = otel.parse(raw, lean=True)
        assert [p.requests for p in lean] == [p.requests for p in otel.parse(raw)], "the lean read's requests differ"
        assert all(not column for p in lean for column in p.events), "the lean read made event rows"
        for parsed in otel.parse(raw):
            if parsed.session_id is None:
                assert not parsed.requests, "requests without a session"
            for row in parsed.requests:
                assert isinstance(row[3], str) and row[3].endswith("Z"), f"a request's time: {row[3]!r}"
                assert all(isinstance(v, int) and v >= 0 for v in row[5:10]), f"a request's counts: {row[5:10]}"
                assert row[9] <= row[8], "reasoning beyond the output"
            assert all(isinstance(line, int) and isinstance(reason, str) for line, reason in parsed.problems)


register(
    Target(
        "frames.copilot.otel",
        mutations.otel_exports(),
        run_copilot_otel,
        group="frames",
        batch=FRAMES_BATCH,
        notes="frames.copilot's reading of the OpenTelemetry export: requests dated, in a session, with counts >= 0",
        seeds=lambda: (b"\n".join(mutations.OTEL_LINES) + b"\n",),
    )
)


def _column_values(state: tuple[Any, ...]) -> list[Any] | None:
    """The values a column state holds, or None where ``append()`` could not have made it."""
    kind, length, nulls, valid, offsets, data = state
    if kind not in mutations.COLUMN_KINDS or not 0 <= nulls <= length <= 2**63 // 16 or None in (valid, data):
        return None
    if (offsets is None) != (kind != "str") or len(valid) != (length + 7) // 8:
        return None
    present = [bool(valid[i // 8] >> (i % 8) & 1) for i in range(length)]
    if present.count(False) != nulls:
        return None
    if kind == "i64":
        if len(data) != 8 * length:
            return None
        numbers = struct.unpack(f"={length}q", data)
        return [v if ok else None for v, ok in zip(numbers, present, strict=True)]
    if kind == "bool":
        if len(data) != length or any(b > 1 for b in data):
            return None
        return [bool(b) if ok else None for b, ok in zip(data, present, strict=True)]
    if len(offsets) != 8 * (length + 1):
        return None
    ends = struct.unpack(f"={length + 1}q", offsets)
    if ends[0] != 0 or ends[-1] != len(data) or any(a > b for a, b in zip(ends, ends[1:], strict=False)):
        return None
    try:
        texts = [data[a:b].decode() for a, b in zip(ends, ends[1:], strict=False)]
    except UnicodeDecodeError:
        return None
    return [t if ok else None for t, ok in zip(texts, present, strict=True)]


def run_column_states(batch: list[tuple[Any, ...]]) -> None:
    """A column is made from a state exactly when ``append()`` could have made that state (but for
    the bytes under a null, which nothing reads), and then holds its values: in its own state, in
    Polars, after pickling and after more appends."""
    from cc_analytics.frames.claude import decode

    if decode.COLUMN is None or decode.COLUMN_FROM_STATE is None:
        msg = f"frames.claude.columns cannot run: {extension_unavailable()}"
        raise RuntimeError(msg)
    dtypes = {"i64": pl.Int64(), "bool": pl.Boolean(), "str": pl.String()}
    refusals = ("column_from_state: ", "Column kind: ", "a bytes-like object", "Python int too large")
    for state in batch:
        values = _column_values(state)
        try:
            made = decode.COLUMN_FROM_STATE(*state)
        except (ValueError, TypeError, OverflowError) as exc:
            assert values is None, f"a good state refused: {exc}"
            assert str(exc).startswith(refusals), f"undocumented: {exc}"
            continue
        assert values is not None, f"a bad state taken: {state!r:.200}"
        kind, length, _, valid, _, _ = state
        if length % 8:  # the validity bits past the last row are cleared, for the rows appended next
            valid = valid[:-1] + bytes([valid[-1] & ((1 << length % 8) - 1)])
        assert made.state() == (*state[:3], valid, *state[4:]), "state() is not the state it was made from"
        assert decode._series("c", made, dtypes[kind]).to_list() == values, "Polars reads other values"
        assert pickle.loads(pickle.dumps(made)) == made, "a column changed in pickling"
        more = {"i64": -5, "bool": True, "str": "é"}[kind]
        made.append(None)
        made.append(more)
        assert decode._series("c", made, dtypes[kind]).to_list() == [*values, None, more], "appends after a state"


register(
    Target(
        "frames.claude.columns",
        mutations.column_states(),
        run_column_states,
        group="frames",
        batch=FRAMES_BATCH,
        notes="the C extension's typed columns made from states, good and broken, as a worker's pickle would",
        unavailable=extension_unavailable,
    )
)


def run_chainless_frames(batch: list[bytes]) -> None:
    import cc_analytics.frames as front
    import cc_analytics.frames.chainless as chainless
    from cc_analytics.frames.chainless import schema as S

    with tempfile.TemporaryDirectory() as name:
        folder = Path(name)
        paths = _written(folder, batch, "s{:03d}")
        frames = _every_frame(chainless, folder)
        context = chainless.context_frame(folder)
        tables = front.read_tables(paths, format="chainlesschain")
    _frame_schemas(frames, S)
    assert context.schema == S.CONTEXT_SCHEMA, "context frame schema"
    assert frames["sessions"].height == context.height == len(batch), "not one session per transcript"
    # every line a loader reads is an event or a problem, never both, never neither
    events, problems = _per_file(frames["events"]), _per_file(frames["problems"])
    for path, raw in zip(paths, batch, strict=True):
        seen = events.get(str(path), []) + problems.get(str(path), [])
        assert sorted(seen) == sorted(_lines_read(raw)), f"{path.name}: lines read are not events + problems"
    token_usage = frames["events"].filter(pl.col("type") == "token_usage").height
    assert frames["requests"].height == token_usage, "not one request per token_usage record"
    # one decode for every table (the events profile) gives what the separate verbs give
    assert tables.problems.equals(frames["problems"]), "the two profiles disagree on problems"
    assert tables.sessions.equals(frames["sessions"].sort("format", "session_id")), "read_tables sessions"
    assert tables.turns.equals(frames["turns"]), "read_tables turns != read_turns"
    assert tables.requests.equals(frames["requests"]), "read_tables requests != read_requests"
    costs = frames["requests"]["cost_usd"].drop_nulls()
    assert costs.is_finite().all(), "a request priced at a non-finite cost"


register(
    Target(
        "frames.chainless",
        mutations.chainless_transcripts(),
        run_chainless_frames,
        group="frames",
        batch=FRAMES_BATCH,
        notes="frames.chainless read_events/turns/sessions/problems/requests, context_frame and read_tables",
        seeds=lambda: mutations.deep_heads(mutations.chainless_seeds()[0]),
    )
)


# -- frames: discovery of transcripts in folder trees -----------------------------------------

UNREADABLE_KINDS = frozenset({"broken", "loop", "fifo"})


def build_tree(root: Path, tree: tuple[mutations.Entry, ...]) -> list[tuple[mutations.Entry, Path]]:
    """Make ``tree`` under ``root``; the entries made, each with its path (a name taken twice is made once)."""
    root.mkdir()
    folders = [root]
    made: list[tuple[mutations.Entry, Path]] = []
    paths: list[Path] = []
    for entry in tree:
        parent = folders[entry.parent]
        path = parent / entry.name
        paths.append(path)
        if os.path.lexists(path):  # taken (or "..": outside the tree): what goes in it goes in the parent
            if entry.kind == "folder":
                folders.append(parent)
            continue
        target = paths[entry.target] if paths else root
        if entry.kind == "file":
            path.write_bytes(entry.data)
        elif entry.kind == "folder":
            path.mkdir()
            folders.append(path)
        elif entry.kind == "link-file":
            path.symlink_to(target)
        elif entry.kind == "link-folder":
            path.symlink_to(folders[entry.target % len(folders)], target_is_directory=True)
        elif entry.kind == "link-up":  # an ancestor: a cycle for whoever follows folder links
            path.symlink_to(os.path.relpath(root, parent), target_is_directory=True)
        elif entry.kind == "broken":
            path.symlink_to(parent / "absent-target.jsonl")
        elif entry.kind == "loop":
            path.symlink_to(path.name)
        else:
            os.mkfifo(path)
        made.append((entry, path))
    return made


def _check_tree(root: Path, made: list[tuple[mutations.Entry, Path]]) -> list[Path]:
    """Discovery of one generated tree checked against the tree itself; the transcripts it holds."""
    from cc_analytics.frames.api import plan
    from cc_analytics.frames.claude.discovery import discover
    from cc_analytics.frames.sources import expand, sniff_format, split_by_format, walk

    walked = walk([root])
    assert walked == sorted(set(walked)), "walk: not sorted, or a path twice"
    expected = sorted(path for _, path in made if path.name.endswith(".jsonl") and not path.is_dir())
    assert walked == expected, f"walk found {walked}, the tree holds {expected}"
    assert expand(root) == walked, "expand(folder) != walk([folder])"
    # a glob also walks the folders it matches; a file named as the pattern is taken as it is
    if any(p.parent == root for p in walked) and not os.path.lexists(root / "*.jsonl"):
        globbed = expand(glob.escape(str(root)) + "/*.jsonl")
        top = {p for p in walked if p.parent == root and not p.name.startswith(".")}
        assert top <= set(globbed), f"a glob of the root's transcripts: {globbed}, walked {walked}"
    distinct = {os.path.realpath(p) for p in walked}
    split = [p for paths in split_by_format(root).values() for p in paths]
    assert len(split) == len(distinct) and {os.path.realpath(p) for p in split} == distinct, "split_by_format"
    for entry, path in made:
        if entry.kind == "file" and path in walked and entry.content in ("summary", "empty", "blank"):
            assert sniff_format(path) == "claude-code", f"{entry.content} file sniffed as ChainlessChain"
        if entry.kind == "file" and path in walked and entry.content == "chainless-deep-head":
            assert sniff_format(path) == "chainlesschain", "a deeply nested first line hid the format"
    assert {os.path.realpath(f.path) for f in discover([root])} == distinct, "discover"
    planned = [f.path.name for files in plan(root).values() for f in files]
    assert len(planned) == len(distinct), f"plan: {planned} of {[p.name for p in walked]}"
    return walked


def run_discovery(batch: list[tuple[mutations.Entry, ...]]) -> None:
    import cc_analytics.frames as front
    from cc_analytics.frames import schema
    from cc_analytics.frames.sources import shown

    with tempfile.TemporaryDirectory() as name:
        roots = [Path(name) / f"t{i:03d}" for i in range(len(batch))]
        trees = [build_tree(root, tree) for root, tree in zip(roots, batch, strict=True)]
        walked = {root: _check_tree(root, made) for root, made in zip(roots, trees, strict=True)}
        # every format's loaders over all the trees at once: what cannot be read is a problems row
        tables = front.read_tables(roots)
        assert tables.sessions.schema == schema.SESSIONS_SCHEMA
        whole_file = set(tables.problems.filter(pl.col("line").is_null())["source_file"])
        first_lines = set(tables.problems.filter(pl.col("line") == 1)["source_file"])
        for root, made in zip(roots, trees, strict=True):
            for entry, path in made:
                if entry.kind == "file" and entry.content == "claude-deep-head" and path in walked[root]:
                    # never an event (not an object, or no type), read or not: a problem, the rest read
                    assert shown(str(path)) in first_lines or os.path.realpath(path) in {
                        os.path.realpath(p) for p in walked[root] if p != path
                    }, f"the deep first line of {path.name!r} is no problems row"
                if entry.kind not in UNREADABLE_KINDS or path not in walked[root] or shown(str(path)) in whole_file:
                    continue
                # the same thing under another name (a link to it) may have been the one reported
                others = {os.path.realpath(p) for p in walked[root] if p != path}
                assert os.path.realpath(path) in others, f"{entry.kind} {path.name!r} is no problems row"


register(
    Target(
        "frames.discovery",
        mutations.trees(),
        run_discovery,
        group="frames",
        batch=FRAMES_BATCH,
        notes="walk, expand, sniff_format, split_by_format, discover, plan and read_tables over generated folder trees",
    )
)
