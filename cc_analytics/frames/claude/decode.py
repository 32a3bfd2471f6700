"""The one line walker of Claude Code JSONL: bytes → event columns, content blocks and problems.

Imports: the standard library, ``jsonline`` (the JSON line policy), ``frames.extension`` (the C
skimmer, when there is one), ``frames.sources`` (reading a file), ``frames.memory`` (the
collector's pause), ``frames.engine`` (the batch size, when asked for) and ``frames.claude``'s
``schema``/``discovery``; ``frames.lines`` (orjson) at
the first line read in Python, ``frames.estimate`` when blocks are measured, polars and
``buckets`` only where frames are built (:func:`frames_of`), so a worker process that only
walks lines (:func:`walk_files`) never imports Polars, and a caller that wants only the
requests (:data:`REQUESTS`, ``cc-analytics statusline``) starts quickly. This is the one place
that loops over lines in Python (``frames.lines`` decodes each line, a few ``dict.get`` calls
pick the fields); everything after it is vectorised Polars.

For the profiles that keep no text, an optional C skimmer (``_skim.c``, built when a compiler
is there; ``CC_ANALYTICS_PURE_PYTHON=1`` turns it off, see ``frames.extension``) walks a file's lines first, each in one
strict pass, and appends what the walker would. It reads a line as the JSON line policy does
(its depth limit and first-wins are the policy's: a test holds them equal), accepts only lines
on which no rule fires (no problem, no fallback, no escaped key, no repeated key inside a tool
input) and stops at the first other line, which the Python walker reads as it always did
before handing the rest of the file back. A file of
clean lines is one call, and orjson is never imported for it. The batch profiles
(:attr:`Profile.columnar`) keep their columns in the extension's typed columns rather than
lists: Arrow buffers that both walkers append to and Polars takes through the Arrow PyCapsule
interface, without a Python object per value in between (on the 1 GB corpus, 7% less CPU).

Every line rule lives here once; what a caller needs decides what is
kept, through a :class:`Profile`: :data:`EVENTS` keeps every column of the events frame and
the text of every content block, :data:`SESSIONS` keeps the columns the session summary
reads and measures each block's tokens as it goes (no text kept), :data:`TURNS` adds the
line identity (uuid, session id, agent id) that turns need to :data:`SESSIONS`,
:data:`FINDINGS` adds to :data:`TURNS` each block's marks (what the composition and the
findings read of a block besides its tokens: ids, a tool call's input, the memory mark; see
:attr:`Profile.marks`), and :data:`REQUESTS` keeps the summary's columns without looking at
content blocks at all.

A file is read in line-aligned pieces (``frames.sources.read_pieces``, ``PIECE_BYTES``: one
piece unless it is larger), walked one after the other as one walk (line numbers and the walk's
state go on): a big transcript's bytes are never all in memory, and what it gives is the same.

Lines are cut on LF only; a line of ASCII whitespace is skipped; each line is read by the
JSON line policy (:mod:`cc_analytics.jsonline`) under :data:`RULES`, whatever its length: a
line that breaks it (invalid UTF-8, a BOM, ``NaN``, lone surrogates, raw control characters,
trailing garbage, nesting deeper than ``jsonline.MAX_DEPTH``), is not an object, has no string
``type``, or an envelope line (user, assistant, system, attachment) without string
``uuid``/``sessionId``/``timestamp`` becomes a problem row and is left out. Numbers beyond
double range read as infinity and integers are exact at any length. Where a key repeats, the
first occurrence wins, as the reference reads its fields, except inside tool inputs and
``toolUseResult`` (the last, as the reference stores them). A line with a year-0 timestamp is
left out too (Claude Code never writes one; the reference
parser drops it). Fields of the wrong type are read as null and reported, and the rest of
the line is kept. A file that cannot be read is one problem row with a null ``line``.

Every profile also keeps what pricing needs of an assistant line's usage (:data:`PRICING_COLUMNS`:
the cache-write breakdown by lifetime, web searches, service tier, speed). Only assistant
lines with a usage object have them, so the walker appends them to a side list with their
row number, and they are scattered into full columns once per batch.
"""

from __future__ import annotations

import marshal
import reprlib
from collections.abc import Sequence
from functools import cache
from typing import TYPE_CHECKING, Any, NamedTuple

from cc_analytics.frames import extension, sources
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.discovery import TranscriptFile
from cc_analytics.frames.memory import no_cycle_collection, release_memory
from cc_analytics.jsonline import BOM, INT64_MAX, INT64_MIN, LineError, LongInt, Rules

if TYPE_CHECKING:
    from collections.abc import Callable

    import polars as pl

# The optional C skimmer (``_skim.c``, see ``frames.extension``): None when it was not built or
# the environment asks for pure Python; the walker then reads every line in Python, with the same result.
_EXTENSION = extension.load()
SKIM_LINES: Callable[[bytes | memoryview, int, int, tuple[Any, ...], list[Any]], tuple[int, int, int] | int] | None = (
    None if _EXTENSION is None else _EXTENSION.skim_lines
)
# Its typed columns (``Column``), which the batch profiles keep their columns in instead of lists
# (Arrow buffers, handed to Polars without a Python object per value): None likewise.
COLUMN: Callable[[str], Any] | None = None if _EXTENSION is None else _EXTENSION.Column
COLUMN_FROM_STATE: Callable[..., Any] | None = None if _EXTENSION is None else _EXTENSION.column_from_state

ENVELOPE_TYPES = frozenset(("user", "assistant", "system", "attachment"))
SYNTHETIC_MODEL = "<synthetic>"
USAGE_FIELDS = (
    "input_tokens",
    "cache_creation_input_tokens",
    "cache_read_input_tokens",
    "output_tokens",
)
TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S%.f%:z"
FAST_TIMESTAMP_FORMAT = "%Y-%m-%dT%H:%M:%S%.fZ"
NULL_USAGE = (None, None, None, None)
# Token counts are Int64 columns (INT64_MIN..INT64_MAX): a count beyond is a problem, not a
# value (nor a crash).
# Values stored as JSON by the reference keep Python dict semantics (last duplicate wins).
LAST_WINS_KEYS = frozenset(("input", "toolUseResult"))
# How a line is read (the JSON line policy, with the reference's last-wins values).
RULES = Rules(last_wins_under=LAST_WINS_KEYS)

# Columns every profile keeps, then what the turns and the events frame add.
SUMMARY_COLUMNS = (
    S.LINE,
    S.TYPE,
    S.SUBTYPE,
    S.TIMESTAMP,
    S.CWD,
    S.VERSION,
    S.MODEL,
    S.MESSAGE_ID,
    S.REQUEST_ID,
    S.HAS_ENVELOPE,
    S.IS_SIDECHAIN,
    S.IS_META,
    S.IS_COMPACT_SUMMARY,
    S.IS_API_ERROR,
    S.HAS_INTERRUPTED_ID,
    S.INPUT_TOKENS,
    S.CACHE_CREATION_TOKENS,
    S.CACHE_READ_TOKENS,
    S.OUTPUT_TOKENS,
    S.PROMPT_TEXT,
    S.COMPACT_TRIGGER,
    S.COMPACT_PRE_TOKENS,
)
IDENTITY_COLUMNS = (S.UUID, S.SESSION_ID, S.AGENT_ID)
TEXT_COLUMNS = (
    S.PARENT_UUID,
    S.GIT_BRANCH,
    S.STOP_REASON,
    S.ASSISTANT_TEXT,
    S.THINKING_CHARS,
    S.SYSTEM_TEXT,
    S.ATTACHMENT_TYPE,
)
# Columns set per file rather than per line.
FILE_COLUMNS = (S.SOURCE_FILE, S.FILE_SESSION_ID, S.IS_SUBAGENT_FILE)
# Columns kept for the assistant lines that record usage only (see _pricing), in every profile.
PRICING_COLUMNS = (
    S.CACHE_CREATION_5M_TOKENS,
    S.CACHE_CREATION_1H_TOKENS,
    S.WEB_SEARCH_REQUESTS,
    S.SERVICE_TIER,
    S.SPEED,
)

# What a typed column holds (see COLUMN), for each column a batch profile keeps but the
# timestamp (the skimmer's microseconds or the text it left to Python: two types).
COLUMN_KINDS: dict[str, str] = {
    **dict.fromkeys(
        (S.LINE, S.INPUT_TOKENS, S.CACHE_CREATION_TOKENS, S.CACHE_READ_TOKENS, S.OUTPUT_TOKENS, S.COMPACT_PRE_TOKENS),
        "i64",
    ),
    **dict.fromkeys(
        (S.HAS_ENVELOPE, S.IS_SIDECHAIN, S.IS_META, S.IS_COMPACT_SUMMARY, S.IS_API_ERROR, S.HAS_INTERRUPTED_ID),
        "bool",
    ),
    **dict.fromkeys(
        (S.TYPE, S.SUBTYPE, S.CWD, S.VERSION, S.MODEL, S.MESSAGE_ID, S.REQUEST_ID, S.PROMPT_TEXT, S.COMPACT_TRIGGER)
        + IDENTITY_COLUMNS,
        "str",
    ),
}
# The measured blocks' columns (row, kind, name, is_error, tokens) likewise, and their marks
# (:attr:`Profile.marks`: id, memory, tool input).
BLOCK_COLUMN_KINDS = ("i64", "str", "str", "bool", "i64")
MARK_COLUMN_KINDS = ("str", "bool", "str")
# What a prompt that names a memory file holds (harness-injected CLAUDE.md text).
MEMORY_MARK = "CLAUDE.md"

# The columns the C skimmer appends to, in the order of its tuple (see ``_skim.c``); it keeps
# cwd and version as the walker does, where they change (see ``_walk``).
SKIM_COLUMNS = (*SUMMARY_COLUMNS[1:], *IDENTITY_COLUMNS)  # every summary column but the line number, then identity


class Profile(NamedTuple):
    """What the walker keeps of each line; the rules it applies are the same for every profile.

    ``texts``: every events column and the text of every block (else the summary's columns,
    blocks measured in tokens as they are read, ``cwd`` only on the first line of a file that
    has one and ``version`` only where it changes: all the summary and turns read of them).
    ``identity``: each line's uuid, session id and agent id (what turns list and group by).
    ``blocks``: content blocks are kept (their text, or their tokens); without, they are
    skipped (a :class:`Decoded` then has no block rows).
    ``marks``: measured blocks also keep what the findings read of them instead of their text
    (``S.BLOCK_ID``: a tool call's id, a tool result's ``tool_use_id``; ``S.NAMES_MEMORY``:
    whether a prompt holds :data:`MEMORY_MARK`, null for other kinds; ``S.TOOL_INPUT``: a tool
    call's input as compact JSON).
    """

    texts: bool
    identity: bool
    blocks: bool = True
    marks: bool = False

    @property
    def columns(self) -> tuple[str, ...]:
        """The per-line columns this profile keeps."""
        kept: tuple[str, ...] = SUMMARY_COLUMNS
        if self.identity or self.texts:
            kept += IDENTITY_COLUMNS
        if self.texts:
            kept += TEXT_COLUMNS
        return kept

    @property
    def columnar(self) -> bool:
        """Whether the columns are typed columns (see ``COLUMN``) rather than lists: for the
        profiles that read batches (measured blocks), when the C extension is there."""
        return COLUMN is not None and self.blocks and not self.texts

    @property
    def batch_bytes(self) -> int:
        """Transcript bytes per batch: the engine's default, for every profile. Each batch pays
        some 40 ms of small Polars queries: on the 1 GB corpus, 64 MB batches took 11% less CPU
        and 8% less wall time than 32 MB ones, for 20 MB more in the process tree (270 against
        250 MB, where the bound is 300)."""
        from cc_analytics.frames.engine import BATCH_BYTES

        return BATCH_BYTES


EVENTS = Profile(texts=True, identity=True)
TURNS = Profile(texts=False, identity=True)
FINDINGS = Profile(texts=False, identity=True, marks=True)
SESSIONS = Profile(texts=False, identity=False)
REQUESTS = Profile(texts=False, identity=False, blocks=False)


@cache
def measured_blocks_schema(*, marks: bool = False) -> pl.Schema:
    """Blocks measured as they are read: no text, their tokens instead (and their marks, see
    :attr:`Profile.marks`)."""
    import polars as pl

    from cc_analytics.frames.claude.buckets import TOKENS

    marked = {S.BLOCK_ID: pl.String(), S.NAMES_MEMORY: pl.Boolean(), S.TOOL_INPUT: pl.String()} if marks else {}
    return pl.Schema(
        {
            S.ROW: pl.Int64(),
            S.KIND: S.BLOCK_KIND,
            S.NAME: pl.String(),
            S.IS_ERROR: pl.Boolean(),
            TOKENS: pl.Int64(),
            **marked,
        }
    )


class Decoded(NamedTuple):
    """Frames decoded from a batch of files: events, blocks and problems.

    With a profile that keeps texts, ``events`` has every column of ``S.EVENT_SCALARS`` in
    order and ``blocks`` is in ``S.BLOCKS_SCHEMA``; otherwise ``events`` has the profile's
    columns and ``blocks`` is in ``measured_blocks_schema()``. ``problems`` is in
    ``S.PROBLEMS_SCHEMA``.
    """

    events: pl.DataFrame
    blocks: pl.DataFrame
    problems: pl.DataFrame


Problems = list[tuple[str, int | None, str]]
# (row, 5-minute cache writes, 1-hour cache writes, web searches, service tier, speed)
Pricing = list[tuple[int, int | None, int | None, int | None, str | None, str | None]]


class Walked(NamedTuple):
    """What the walker kept of a batch of files, in plain Python lists: a worker process walks,
    the process that asked builds the frames with :func:`frames_of`.

    Pickled with the lists in one ``marshal`` blob: they hold only JSON scalars, tuples and
    lists, which marshal writes and reads in less than half the time pickle takes.
    """

    files: Sequence[TranscriptFile]
    profile: Profile
    columns: dict[str, list[Any]]
    blocks: Blocks
    problems: Problems
    file_of_row: list[int]
    pricing: Pricing

    def __reduce__(self) -> tuple[Any, ...]:
        columns = {name: _marshalled(values) for name, values in self.columns.items()}
        lists = (columns, self.blocks.state(), self.problems, self.file_of_row, self.pricing)
        return _unmarshal_walked, (self.files, self.profile, marshal.dumps(lists))


def _new_column(kind: str | None, columnar: bool) -> Any:
    """A typed column of ``kind`` for a columnar profile, else (or with no kind) a list."""
    return COLUMN(kind) if columnar and kind is not None else []  # type: ignore[misc]


def _marshalled(values: Any) -> Any:
    """A list as it is, a typed column as its state (a tuple: marshal writes bytes)."""
    return values if type(values) is list else tuple(values.state())


def _unmarshalled(values: Any) -> Any:
    return values if type(values) is list else COLUMN_FROM_STATE(*values)  # type: ignore[misc]


def _unmarshal_walked(files: Sequence[TranscriptFile], profile: Profile, data: bytes) -> Walked:
    columns, state, problems, file_of_row, pricing = marshal.loads(data)
    columns = {name: _unmarshalled(values) for name, values in columns.items()}
    kind = _TextBlocks if profile.texts else _MeasuredBlocks if profile.blocks else _NoBlocks
    blocks = kind.from_state(state)
    return Walked(files, profile, columns, blocks, problems, file_of_row, pricing)


def decode_files(
    files: Sequence[TranscriptFile], profile: Profile = EVENTS, *, contents: Sequence[bytes] | None = None
) -> Decoded:
    """Decode every line of ``files`` (in order), keeping what ``profile`` asks for.

    ``contents`` holds each file's bytes when they were read elsewhere (an archive's raw
    copy, object storage); by default each file is read from its path.

    Examples:
        >>> import tempfile, pathlib
        >>> from cc_analytics.frames.claude.discovery import discover
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> _ = (folder / "s.jsonl").write_text('{"type":"summary"}\\n[1]\\n')
        >>> decoded = decode_files(discover([folder]), SESSIONS)
        >>> decoded.events["type"].to_list(), decoded.problems["reason"].to_list()
        (['summary'], ['not a JSON object (array)'])
    """
    return frames_of(walk_files(files, profile, contents=contents))


def walk_files(
    files: Sequence[TranscriptFile], profile: Profile = EVENTS, *, contents: Sequence[bytes] | None = None
) -> Walked:
    """The first half of :func:`decode_files`: every line rule applied, nothing built in Polars."""
    columnar = profile.columnar
    columns: dict[str, Any] = {name: _new_column(COLUMN_KINDS.get(name), columnar) for name in profile.columns}
    blocks: Blocks = (
        _TextBlocks()
        if profile.texts
        else _MeasuredBlocks(columnar=columnar, marks=profile.marks)
        if profile.blocks
        else _NoBlocks()
    )
    problems: Problems = []
    pricing: Pricing = []
    file_of_row: list[int] = []
    lines = columns[S.LINE]
    with no_cycle_collection():
        for index, transcript in enumerate(files):
            start = len(lines)
            if contents is not None:
                _walk(contents[index], transcript, profile, columns, blocks, problems, pricing)
            else:
                try:
                    _walk_pieces(transcript, profile, columns, blocks, problems, pricing)
                except OSError as exc:
                    problems.append((transcript.source_file, None, f"cannot read file: {exc.strerror or exc}"))
            file_of_row.extend([index] * (len(lines) - start))
    if contents is None and _in_pieces(files):
        release_memory()  # the pieces' pages, freed: a big file's columns are built next
    return Walked(files, profile, columns, blocks, problems, file_of_row, pricing)


def _in_pieces(files: Sequence[TranscriptFile]) -> bool:
    """Whether a file of ``files`` is read in more than one piece (see :func:`_walk_pieces`)."""
    return any(f.size > sources.PIECE_BYTES for f in files)


def frames_of(walked: Walked) -> Decoded:
    """The second half of :func:`decode_files`: the frames of what :func:`walk_files` kept.

    The walk's lists are emptied as their frames are built (they are not needed twice, and a
    batch's lists are a large part of the memory it takes).
    """
    files, profile, columns, blocks, problems, file_of_row, pricing = walked
    events = _events_frame(files, profile, columns, file_of_row, problems, pricing)
    columns.clear()
    file_of_row.clear()
    pricing.clear()
    block_frame = blocks.frame()
    blocks.clear()
    decoded = Decoded(events, block_frame, _columnar(problems, S.PROBLEMS_SCHEMA))
    problems.clear()
    if _in_pieces(files):
        release_memory()  # the walk's columns, freed: a big file's frames are prepared next
    return decoded


def _events_frame(
    files: Sequence[TranscriptFile],
    profile: Profile,
    columns: dict[str, list[Any]],
    file_of_row: list[int],
    problems: Problems,
    pricing: Pricing,
) -> pl.DataFrame:
    import polars as pl

    data: dict[str, pl.Series] = {}
    for name, values in columns.items():
        if name != S.TIMESTAMP:
            data[name] = _series(name, values, S.EVENT_SCALARS[name])
    rows = len(columns[S.LINE])
    sparse: list[Sequence[Any]] = list(zip(*pricing, strict=True)) if pricing else [()] * (len(PRICING_COLUMNS) + 1)
    at = pl.Series(sparse[0], dtype=pl.Int64)
    for name, kept in zip(PRICING_COLUMNS, sparse[1:], strict=True):
        dtype = S.EVENT_SCALARS[name]
        data[name] = (
            pl.repeat(None, rows, dtype=dtype, eager=True).alias(name).scatter(at, pl.Series(kept, dtype=dtype))
        )
    which = pl.Series(file_of_row, dtype=pl.UInt32)
    per_file: tuple[list[Any], ...] = (
        [f.source_file for f in files],
        [f.session_id for f in files],
        [f.is_subagent for f in files],
    )
    for name, values in zip(FILE_COLUMNS, per_file, strict=True):
        data[name] = pl.Series(name, values, dtype=S.EVENT_SCALARS[name]).gather(which)
    times, texts = _times(columns[S.TIMESTAMP])
    data[S.TIMESTAMP] = times
    frame = pl.DataFrame(data)
    if texts is not None:
        bad_time = frame.select(S.SOURCE_FILE, S.LINE).filter(texts.is_not_null() & frame[S.TIMESTAMP].is_null())
        for source, line in bad_time.iter_rows():
            problems.append((source, line, "invalid or out-of-range timestamp (line kept, time unknown)"))
    if profile.texts:
        frame = frame.select(list(S.EVENT_SCALARS))
    return frame


def _series(name: str, values: Any, dtype: pl.DataType) -> pl.Series:
    """A column of the walk (a list, or a typed column read through the Arrow interface,
    which keeps neither name nor dtype) as a Series."""
    import polars as pl

    if type(values) is list:
        return pl.Series(name, values, dtype=dtype)
    series = pl.Series(values).alias(name)
    return series if series.dtype == dtype else series.cast(dtype)


def _times(values: list[int | str | None]) -> tuple[pl.Series, pl.Series | None]:
    """The timestamp column of a walk, and the texts among it (None when there is none).

    The C skimmer gives the microseconds of the timestamps it read in Claude Code's own form
    (an ``int``); every other timestamp is its text, parsed here by :func:`parse_timestamps`.
    """
    import polars as pl

    micros = pl.Series(S.TIMESTAMP, [v if v.__class__ is int else None for v in values], dtype=pl.Int64)
    times = micros.cast(pl.Datetime("us", "UTC"))
    texts = [v if v.__class__ is str else None for v in values]
    if texts.count(None) == len(texts):
        return times, None  # no text among them
    raw = pl.Series(S.TIMESTAMP, texts, dtype=pl.String)
    parsed = parse_timestamps(raw)
    return times.zip_with(micros.is_not_null(), parsed), raw


def _columnar(rows: list[tuple[Any, ...]], schema: pl.Schema) -> pl.DataFrame:
    # Transposing in Python then building typed Series is much faster than orient="row".
    import polars as pl

    if not rows:
        return pl.DataFrame(schema=schema)
    columns = zip(*rows, strict=True)
    return pl.DataFrame(
        [pl.Series(name, values, dtype=dtype) for (name, dtype), values in zip(schema.items(), columns, strict=True)]
    )


def parse_timestamps(raw: pl.Series) -> pl.Series:
    """:func:`parse_timestamp` of a column, with a fast path for the form Claude Code writes.

    ``2026-03-01T10:00:00.123Z`` parses with one fixed format (no regex rewriting); only the
    texts it rejects go through :func:`parse_timestamp`, and the year check applies to all.

    Examples:
        >>> import polars as pl
        >>> parse_timestamps(pl.Series(["2026-03-01T10:00:00.5Z", "2026-03-01 11:00:00+01:00"])).to_list()
        [datetime.datetime(2026, 3, 1, 10, 0, 0, 500000, tzinfo=zoneinfo.ZoneInfo(key='UTC')), \
datetime.datetime(2026, 3, 1, 10, 0, tzinfo=zoneinfo.ZoneInfo(key='UTC'))]
    """
    import polars as pl

    fast = raw.str.to_datetime(FAST_TIMESTAMP_FORMAT, time_unit="us", strict=False).dt.replace_time_zone("UTC")
    missed = (fast.is_null() & raw.is_not_null()).arg_true()
    if missed.len():
        slow = raw.gather(missed).to_frame("raw").select(parse_timestamp(pl.col("raw"))).to_series()
        fast = fast.scatter(missed, slow)
    return fast.to_frame("t").select(pl.when(pl.col("t").dt.year() >= 1).then(pl.col("t"))).to_series().alias(raw.name)


def parse_timestamp(text: pl.Expr) -> pl.Expr:
    """RFC 3339 text (``T``/``t``/space, any fraction, ``Z``/``z`` or ``±HH:MM``) → UTC time."""
    import polars as pl

    normal = text.str.replace(r"[Zz]$", "+00:00").str.replace(r"^(\d{4}-\d\d-\d\d)[Tt ]", "${1}T")
    parsed = normal.str.to_datetime(TIMESTAMP_FORMAT, time_zone="UTC", time_unit="us", strict=False)
    # Year 1 at a positive offset is year 0 in UTC: no Python datetime can hold it.
    return pl.when(parsed.dt.year() >= 1).then(parsed)


# --- What is kept of content blocks --------------------------------------------------------


class _TextBlocks:
    """Blocks with their text: (row, kind, name, id, text, is_error) in ``S.BLOCKS_SCHEMA``."""

    def __init__(self) -> None:
        self.rows: list[tuple[Any, ...]] = []

    def text(self, row: int, kind: str, text: str) -> None:
        self.rows.append((row, kind, None, None, text, None))

    def tool_result(self, row: int, tool_use_id: str | None, text: str | None, is_error: bool) -> None:
        self.rows.append((row, "tool_result", None, tool_use_id, text, is_error))

    def tool_use(self, row: int, name: str | None, block_id: str | None, payload: bytes) -> None:
        self.rows.append((row, "tool_use", name, block_id, payload.decode(), None))

    def lists(self) -> tuple[list[Any], ...]:
        msg = "the C skimmer never reads a line whose texts are kept"
        raise TypeError(msg)

    def frame(self) -> pl.DataFrame:
        return _columnar(self.rows, S.BLOCKS_SCHEMA)

    def state(self) -> list[tuple[Any, ...]]:
        return self.rows

    @classmethod
    def from_state(cls, state: list[tuple[Any, ...]]) -> _TextBlocks:
        blocks = cls()
        blocks.rows = state
        return blocks

    def clear(self) -> None:
        self.rows.clear()


class _MeasuredBlocks:
    """Blocks measured as they are read (``measured_blocks_schema()``): the estimate, not the text,
    and with ``marks`` what the findings read of them (see :attr:`Profile.marks`).

    ASCII text is measured inline, other text by :func:`~cc_analytics.frames.estimate.text_tokens`;
    the rare text it leaves to the shared estimator is measured in one vectorised call.
    """

    def __init__(self, *, columnar: bool = False, marks: bool = False) -> None:
        # Lists, or typed columns (see COLUMN) for a columnar profile: both take append().
        self.row, self.kind, self.name, self.is_error, self.tokens = (
            _new_column(kind, columnar) for kind in BLOCK_COLUMN_KINDS
        )
        self.marks: tuple[Any, ...] = tuple(_new_column(kind, columnar) for kind in MARK_COLUMN_KINDS) if marks else ()
        self.wide_index: list[int] = []
        self.wide_text: list[str] = []
        from cc_analytics.frames.estimate import text_tokens

        self._text_tokens = text_tokens

    def _mark(self, block_id: str | None, memory: bool | None, tool_input: str | None) -> None:
        if self.marks:
            ids, memories, inputs = self.marks
            ids.append(block_id)
            memories.append(memory)
            inputs.append(tool_input)

    def text(self, row: int, kind: str, text: str | None) -> None:
        self.row.append(row)
        self.kind.append(kind)
        self.name.append(None)
        self.is_error.append(None)
        self._mark(None, (text is not None and MEMORY_MARK in text) if kind == "prompt" else None, None)
        self._measure(text)

    def tool_result(self, row: int, tool_use_id: str | None, text: str | None, is_error: bool) -> None:
        self.row.append(row)
        self.kind.append("tool_result")
        self.name.append(None)
        self.is_error.append(is_error)
        self._mark(tool_use_id, None, None)
        self._measure(text)

    def tool_use(self, row: int, name: str | None, block_id: str | None, payload: bytes) -> None:
        self.row.append(row)
        self.kind.append("tool_use")
        self.name.append(name)
        self.is_error.append(None)
        self._mark(block_id, None, payload.decode())
        # Measured as the events path does: the name followed by the compact input.
        name = name or ""
        if payload.isascii() and name.isascii():
            self.tokens.append((len(name) + len(payload) + 3) >> 2)
        else:
            self._measure(name + payload.decode())

    def lists(self) -> tuple[list[Any], ...]:
        """Where the C skimmer appends the blocks it measured: row, kind, name, is_error, tokens
        (then id, memory and tool input, with marks)."""
        return (self.row, self.kind, self.name, self.is_error, self.tokens, *self.marks)

    def _measure(self, text: str | None) -> None:
        if text is None:
            self.tokens.append(0)
        elif text.isascii():
            self.tokens.append((len(text) + 3) >> 2)
        else:
            tokens = self._text_tokens(text)
            if tokens is None:
                self.wide_index.append(len(self.tokens))
                self.wide_text.append(text)
                tokens = 0
            self.tokens.append(tokens)

    def state(self) -> tuple[Any, ...]:
        columns = (self.row, self.kind, self.name, self.is_error, self.tokens)
        marks = tuple(_marshalled(values) for values in self.marks)
        return (*(_marshalled(values) for values in columns), self.wide_index, self.wide_text, marks)

    @classmethod
    def from_state(cls, state: tuple[Any, ...]) -> _MeasuredBlocks:
        blocks = cls()
        row, kind, name, is_error, tokens, blocks.wide_index, blocks.wide_text, marks = state
        blocks.row, blocks.kind, blocks.name, blocks.is_error, blocks.tokens = (
            _unmarshalled(values) for values in (row, kind, name, is_error, tokens)
        )
        blocks.marks = tuple(_unmarshalled(values) for values in marks)
        return blocks

    def frame(self) -> pl.DataFrame:
        import polars as pl

        from cc_analytics.frames.claude.buckets import TOKENS
        from cc_analytics.frames.estimate import estimate_tokens

        values: tuple[list[Any], ...] = (self.row, self.kind, self.name, self.is_error, self.tokens, *self.marks)
        schema = measured_blocks_schema(marks=bool(self.marks))
        frame = pl.DataFrame(
            [_series(name, column, dtype) for (name, dtype), column in zip(schema.items(), values, strict=True)]
        )
        if self.wide_text:
            wide = pl.Series("text", self.wide_text, dtype=pl.String())
            measured = wide.to_frame().select(estimate_tokens(pl.col("text")).fill_null(0)).to_series()
            frame = frame.with_columns(frame[TOKENS].scatter(self.wide_index, measured))
        return frame

    def clear(self) -> None:
        for values in (self.row, self.kind, self.name, self.is_error, self.tokens, self.wide_index, self.wide_text):
            values.clear()
        for values in self.marks:
            values.clear()


class _NoBlocks:
    """Blocks not kept at all (:data:`REQUESTS`): what only the requests need."""

    def text(self, row: int, kind: str, text: str | None) -> None:
        pass

    def tool_result(self, row: int, tool_use_id: str | None, text: str | None, is_error: bool) -> None:
        pass

    def tool_use(self, row: int, name: str | None, block_id: str | None, payload: bytes) -> None:
        pass

    def lists(self) -> tuple[list[Any], ...]:
        return ()

    def frame(self) -> pl.DataFrame:
        import polars as pl

        return pl.DataFrame(schema=measured_blocks_schema())

    def state(self) -> None:
        return None

    @classmethod
    def from_state(cls, state: None) -> _NoBlocks:
        return cls()

    def clear(self) -> None:
        pass


Blocks = _TextBlocks | _MeasuredBlocks | _NoBlocks


# --- The line walker -------------------------------------------------------------------------


def _walk_pieces(
    transcript: TranscriptFile,
    profile: Profile,
    columns: dict[str, list[Any]],
    blocks: Blocks,
    problems: Problems,
    pricing: Pricing,
) -> None:
    """:func:`_walk` over a file read in line-aligned pieces (``frames.sources.read_pieces``):
    a big transcript never has all its bytes in memory at once, and its lines are walked as
    they would be in one piece (the line numbers and the walk's state go on from piece to piece)."""
    state = _walk_state()
    kept = (columns, blocks, problems, pricing)
    number = 0
    for piece in sources.read_pieces(transcript.path):
        # The piece's last segment is the empty one after its final line feed (but in the last piece).
        number = _walk(piece.data, transcript, profile, *kept, size=piece.size, number=number, state=state) - 1


def _walk_state() -> list[Any]:
    """What the walk of a file remembers of its earlier lines: whether a ``cwd`` is still to be
    kept (the first), and the last ``version`` kept."""
    return [True, None]


def _walk(
    raw: bytes,
    transcript: TranscriptFile,
    profile: Profile,
    columns: dict[str, list[Any]],
    blocks: Blocks,
    problems: Problems,
    pricing: Pricing,
    *,
    size: int | None = None,
    number: int = 0,
    state: list[Any] | None = None,
) -> int:
    """Apply every line rule to the lines of ``raw[:size]`` (all of it by default), appending what
    ``profile`` keeps; returns the number of its last LF-separated segment.

    A file read in pieces (see :func:`walk_files`) is walked piece by piece: each piece but the
    last ends with a line feed, ``number`` is the number of the line before the piece, and
    ``state`` carries what the walk remembers of the file's earlier lines (see below).
    """
    source = transcript.source_file
    path_agent = transcript.agent_id
    texts = profile.texts
    identity = texts or profile.identity
    # frames.lines (orjson) is imported at the first line the skimmer leaves to Python (importing
    # it takes longer than walking a small transcript, and ``cc-analytics statusline`` starts fast).
    read: Any = None
    add_line = columns[S.LINE].append
    add_type = columns[S.TYPE].append
    add_subtype = columns[S.SUBTYPE].append
    add_time = columns[S.TIMESTAMP].append
    add_cwd = columns[S.CWD].append
    add_version = columns[S.VERSION].append
    add_model = columns[S.MODEL].append
    add_message = columns[S.MESSAGE_ID].append
    add_request = columns[S.REQUEST_ID].append
    add_envelope = columns[S.HAS_ENVELOPE].append
    add_sidechain = columns[S.IS_SIDECHAIN].append
    add_meta = columns[S.IS_META].append
    add_summary = columns[S.IS_COMPACT_SUMMARY].append
    add_error = columns[S.IS_API_ERROR].append
    add_interrupted = columns[S.HAS_INTERRUPTED_ID].append
    add_input = columns[S.INPUT_TOKENS].append
    add_creation = columns[S.CACHE_CREATION_TOKENS].append
    add_read = columns[S.CACHE_READ_TOKENS].append
    add_output = columns[S.OUTPUT_TOKENS].append
    add_prompt = columns[S.PROMPT_TEXT].append
    add_trigger = columns[S.COMPACT_TRIGGER].append
    add_pre = columns[S.COMPACT_PRE_TOKENS].append
    add_pricing = pricing.append
    text_block = blocks.text
    row_count = columns[S.LINE].__len__
    # The C skimmer reads the lines on which no rule fires and appends what they keep to the
    # lists; it hands back the first it declines, which is read below.
    skim = None if texts else SKIM_LINES
    sink = (
        (
            *(columns[name] if name in columns else None for name in SKIM_COLUMNS),
            pricing,
            blocks.lists() if profile.blocks else None,
            columns[S.LINE],
            path_agent,
        )
        if skim is not None
        else ()
    )
    # cwd only on the first line of a file that has one, version only where it changes (the
    # skimmer reads and updates this state too, for the lines it keeps).
    if state is None:
        state = _walk_state()
    # Lines are zero-copy slices of ``raw`` (frames.lines reads a memoryview as it reads bytes).
    view = memoryview(raw)
    find = raw.find
    if size is None:
        size = len(raw)
    skimmed = raw if size == len(raw) else view[:size]
    position = 0
    while position <= size:
        if skim is not None:
            # The skimmer keeps every line it can up to the first it cannot (or the end).
            span = skim(skimmed, position, number, sink, state)
            if isinstance(span, int):  # the end of the data: its last segment's number
                return span
            start, end, number = span
        else:
            start = position
            end = find(b"\n", start, size)
            if end < 0:
                end = size
            number += 1
            if start == end:
                position = end + 1
                continue
        position = end + 1
        if raw[start] == 0x7B:  # "{": the line is not blank
            line: Any = view[start:end]
        else:
            line = raw[start:end]
            if line.isspace():
                continue
        if read is None:
            from cc_analytics.frames.lines import read_line as read
        try:
            obj = read(line, RULES)
        except LineError as exc:
            # Only a last line without its newline ends at the end of the data.
            problems.append((source, number, _parse_reason(line, exc, truncated=end == size)))
            continue
        if type(obj) is not dict:
            problems.append((source, number, f"not a JSON object ({_json_kind(obj)})"))
            continue
        kind = obj.get("type")
        if type(kind) is not str:
            problems.append((source, number, "missing or non-string 'type'"))
            continue
        row = row_count()
        subtype = model = message_id = request_id = prompt = trigger = pre_tokens = None
        stop_reason = assistant_text = system_text = attachment_type = None
        thinking_chars = None
        usage: tuple[int | None, ...] = NULL_USAGE
        api_error = False
        uuid = obj.get("uuid")
        session = obj.get("sessionId")
        stamp = obj.get("timestamp")
        if kind in ENVELOPE_TYPES:
            if type(uuid) is not str or type(session) is not str or type(stamp) is not str:
                missing = [
                    key
                    for key, value in (("uuid", uuid), ("sessionId", session), ("timestamp", stamp))
                    if type(value) is not str
                ]
                problems.append((source, number, f"{kind} line without string {', '.join(missing)}"))
                continue
            if stamp.startswith("0000"):
                problems.append((source, number, f"year-0 timestamp {stamp[:40]!r}, line dropped"))
                continue
            has_envelope = True
            if kind == "user":
                message = obj.get("message")
                content = message.get("content") if type(message) is dict else None
                if type(content) is str:
                    prompt = content
                    text_block(row, "prompt", content)
                elif type(content) is list:
                    prompt = _user_blocks(content, row, blocks, problems, source, number)
                else:
                    problems.append((source, number, "user message content is neither a string nor a list"))
            elif kind == "assistant":
                message = obj.get("message")
                if type(message) is not dict:
                    problems.append((source, number, "assistant line without a message object"))
                    message = {}
                model = message.get("model")
                if type(model) is not str:
                    model = None
                content = message.get("content")
                if type(content) is list:
                    assistant_text, thinking_chars = _assistant_blocks(
                        content, row, blocks, problems, source, number, keep_text=texts
                    )
                else:
                    thinking_chars = 0
                    if content is not None:
                        problems.append((source, number, "assistant message content is not a list"))
                recorded = message.get("usage")
                if type(recorded) is dict:  # the common case inline: four integers
                    counts: tuple[Any, ...] = (
                        recorded.get("input_tokens"),
                        recorded.get("cache_creation_input_tokens"),
                        recorded.get("cache_read_input_tokens"),
                        recorded.get("output_tokens"),
                    )
                    if (
                        type(counts[0]) is type(counts[1]) is type(counts[2]) is type(counts[3]) is int
                        and INT64_MIN <= min(counts)
                        and max(counts) <= INT64_MAX
                    ):
                        usage = counts
                    else:
                        usage = _usage(recorded, problems, source, number)
                    add_pricing(_pricing(row, recorded, problems, source, number))
                elif recorded:
                    usage = _usage(recorded, problems, source, number)
                api_error = model == SYNTHETIC_MODEL
                message_id = message.get("id")
                if type(message_id) is not str:
                    message_id = None
                request_id = obj.get("requestId")
                if type(request_id) is not str:
                    request_id = None
                if texts:
                    stop_reason = _string(message.get("stop_reason"))
            elif kind == "system":
                subtype = obj.get("subtype")
                if type(subtype) is not str:
                    subtype = None
                content = obj.get("content")
                if type(content) is str:
                    system_text = content
                if subtype == "compact_boundary":
                    meta = obj.get("compactMetadata")
                    if type(meta) is dict:
                        trigger = _string(meta.get("trigger"))
                        pre_tokens = _integer(meta.get("preTokens"))
                elif system_text:
                    text_block(row, "system", system_text)
                api_error = subtype == "api_error"
            else:
                attachment = obj.get("attachment")
                if type(attachment) is dict:
                    attachment_type = _string(attachment.get("type")) or ""
                    if attachment_type == "queued_command":
                        queued = attachment.get("prompt")
                        if type(queued) is str and queued:
                            text_block(row, "prompt", queued)
        else:
            if type(stamp) is not str:
                stamp = None
            has_envelope = False
        add_line(number)
        add_type(kind)
        add_subtype(subtype)
        add_time(stamp)
        cwd = obj.get("cwd")
        version = obj.get("version")
        if texts:
            add_cwd(cwd if type(cwd) is str else None)
            add_version(version if type(version) is str else None)
        else:
            if state[0] and type(cwd) is str:
                state[0] = False
                add_cwd(cwd)
            else:
                add_cwd(None)
            if type(version) is str and version != state[1]:
                state[1] = version
                add_version(version)
            else:
                add_version(None)
        add_model(model)
        add_message(message_id)
        add_request(request_id)
        add_envelope(has_envelope)
        add_sidechain(bool(obj.get("isSidechain")))
        add_meta(bool(obj.get("isMeta")))
        add_summary(bool(obj.get("isCompactSummary")))
        add_error(api_error or bool(obj.get("isApiErrorMessage")))
        add_interrupted(kind == "user" and type(obj.get("interruptedMessageId")) is str)
        add_input(usage[0])
        add_creation(usage[1])
        add_read(usage[2])
        add_output(usage[3])
        add_prompt(prompt)
        add_trigger(trigger)
        add_pre(pre_tokens)
        if identity:
            agent = obj.get("agentId")
            columns[S.UUID].append(uuid if type(uuid) is str else None)
            columns[S.SESSION_ID].append(session if type(session) is str else None)
            columns[S.AGENT_ID].append(agent if type(agent) is str else path_agent)
        if texts:
            columns[S.PARENT_UUID].append(_string(obj.get("parentUuid")))
            columns[S.GIT_BRANCH].append(_string(obj.get("gitBranch")))
            columns[S.STOP_REASON].append(stop_reason)
            columns[S.ASSISTANT_TEXT].append(assistant_text)
            columns[S.THINKING_CHARS].append(thinking_chars)
            columns[S.SYSTEM_TEXT].append(system_text)
            columns[S.ATTACHMENT_TYPE].append(attachment_type)
    return number


def _user_blocks(
    content: list[Any],
    row: int,
    blocks: Blocks,
    problems: Problems,
    source: str,
    number: int,
) -> str | None:
    """Keep the tool results and the prompt of a user line's blocks; returns the prompt."""
    texts: list[str] = []
    for block in content:
        if type(block) is not dict:
            continue
        block_type = block.get("type")
        if block_type == "text":
            text = block.get("text")
            if type(text) is str:
                texts.append(text)
        elif block_type == "tool_result":
            result = block.get("content")
            if type(result) is list:
                result = "".join(
                    item["text"]
                    for item in result
                    if type(item) is dict and item.get("type") == "text" and type(item.get("text")) is str
                )
            elif type(result) is not str:
                problems.append((source, number, "tool_result content is neither a string nor a list"))
                result = None
            blocks.tool_result(row, _string(block.get("tool_use_id")), result, bool(block.get("is_error")))
    if not texts:
        return None
    prompt = " ".join(texts)
    blocks.text(row, "prompt", prompt)
    return prompt


def _assistant_blocks(
    content: list[Any],
    row: int,
    blocks: Blocks,
    problems: Problems,
    source: str,
    number: int,
    *,
    keep_text: bool,
) -> tuple[str | None, int]:
    """Keep an assistant line's blocks; returns its text (``keep_text`` only) and thinking characters."""
    texts: list[str] = []
    thinking_chars = 0
    text_block = blocks.text
    for block in content:
        if type(block) is not dict:
            problems.append((source, number, "assistant content block is not an object"))
            continue
        block_type = block.get("type")
        if block_type == "text":
            text = block.get("text")
            if type(text) is str:
                if keep_text:
                    texts.append(text)
                text_block(row, "text", text)
            else:
                problems.append((source, number, "text block without string 'text'"))
        elif block_type == "thinking":
            thinking = block.get("thinking")
            if type(thinking) is str:
                thinking_chars += len(thinking)
                text_block(row, "thinking", thinking)
            else:
                problems.append((source, number, "thinking block without string 'thinking'"))
        elif block_type == "tool_use":
            blocks.tool_use(row, _string(block.get("name")), _string(block.get("id")), _compact(block.get("input")))
    return ("\n".join(texts) if texts else None), thinking_chars


def _compact(value: Any) -> bytes:
    """Compact JSON of a tool input, as orjson writes it (what orjson cannot write, integers
    beyond 64 bits and nesting beyond 255 levels, in the same layout by the core's writer)."""
    import orjson

    try:
        return orjson.dumps(value)
    except orjson.JSONEncodeError:
        from cc_analytics.core.jsontext import compact_json

        return compact_json(value).encode()


def _usage(usage: Any, problems: Problems, source: str, number: int) -> tuple[int | None, ...]:
    if not usage:
        return NULL_USAGE
    if type(usage) is not dict:
        problems.append((source, number, f"usage is not an object ({_json_kind(usage)})"))
        return NULL_USAGE
    values: list[int | None] = []
    for field in USAGE_FIELDS:
        value = usage.get(field)
        if type(value) is int and INT64_MIN <= value <= INT64_MAX:
            values.append(value)
        elif value is None:
            values.append(0)
        else:
            noun = "a 64-bit integer" if _is_integer(value) else "an integer"
            problems.append((source, number, f"usage.{field} is not {noun} ({_shown(value)})"))
            values.append(None)
    return tuple(values)


def _pricing(
    row: int, usage: dict[str, Any], problems: Problems, source: str, number: int
) -> tuple[int, int | None, int | None, int | None, str | None, str | None]:
    """What pricing needs of a usage object beyond its four totals (see ``PRICING_COLUMNS``)."""
    creation = usage.get("cache_creation")
    server = usage.get("server_tool_use")
    five = hour = searches = None
    if type(creation) is dict:
        five = creation.get("ephemeral_5m_input_tokens")
        hour = creation.get("ephemeral_1h_input_tokens")
    if type(server) is dict:
        searches = server.get("web_search_requests")
    tier = usage.get("service_tier")
    speed = usage.get("speed")
    if (
        (five is None or _integer(five) is not None)
        and (hour is None or _integer(hour) is not None)
        and (searches is None or _integer(searches) is not None)
        and (tier is None or type(tier) is str)
        and (speed is None or type(speed) is str)
    ):
        return row, five, hour, searches, tier, speed
    checked: list[Any] = []
    for field, value, kind in (
        ("cache_creation.ephemeral_5m_input_tokens", five, int),
        ("cache_creation.ephemeral_1h_input_tokens", hour, int),
        ("server_tool_use.web_search_requests", searches, int),
        ("service_tier", tier, str),
        ("speed", speed, str),
    ):
        if value is None or (type(value) is kind and (kind is str or _integer(value) is not None)):
            checked.append(value)
        else:
            noun = "a string" if kind is str else "a 64-bit integer" if _is_integer(value) else "an integer"
            problems.append((source, number, f"usage.{field} is not {noun} ({_shown(value)})"))
            checked.append(None)
    for field, value in (("cache_creation", creation), ("server_tool_use", server)):
        if value is not None and type(value) is not dict:
            problems.append((source, number, f"usage.{field} is not an object ({_json_kind(value)})"))
    return row, *checked


def _string(value: Any) -> str | None:
    return value if type(value) is str else None


def _integer(value: Any) -> int | None:
    """An integer that fits the Int64 columns, else None."""
    return value if type(value) is int and INT64_MIN <= value <= INT64_MAX else None


def _is_integer(value: Any) -> bool:
    return type(value) is int or type(value) is LongInt


def _shown(value: Any) -> str:
    """A value in a problem's reason: its repr, cut at 40 characters (a long integer's digits;
    an array or object shown a few levels deep, as it may nest deeper than ``repr`` recurses)."""
    if type(value) is LongInt:
        return value.text[:40]
    if type(value) is list or type(value) is dict:
        return f"{reprlib.repr(value):.40}"
    return f"{value!r:.40}"


def _json_kind(value: Any) -> str:
    return {list: "array", str: "string", int: "number", float: "number", bool: "boolean", LongInt: "number"}.get(
        type(value), "null" if value is None else type(value).__name__
    )


def _parse_reason(line: bytes | memoryview, exc: LineError, *, truncated: bool) -> str:
    if truncated:
        return "truncated last line (the file may still be being written)"
    if line[:3] == BOM:
        return "line starts with a UTF-8 byte-order mark"
    if exc.too_deep:
        return f"line {exc.reason}"
    return f"invalid JSON: {exc.reason}"
