"""The running cost of one Claude Code session, without Polars, read incrementally.

Imports: the standard library, ``cache``, ``frames.pricebook`` and the Polars-free
modules of ``frames.claude`` (``decode``'s line walker, ``discovery``, ``schema``). This is
what ``cc-analytics statusline`` shows after every assistant message, so it must stay fast
on a transcript that grows to many megabytes: the walker (:data:`~.decode.REQUESTS`
profile) reads the lines, :func:`walked_requests` turns its rows into requests as
``frames.claude.requests.request_rows`` does, and :func:`~cc_analytics.frames.pricebook.request_cost`'s
picodollar form prices each. Per file, the per-request costs so far are kept in a small
state file in the cache folder (with the file's device, inode, the offset read up to and a
checksum of the bytes before it), so the next call reads only the bytes appended since. A file
that shrank, changed identity or was rewritten in place is read afresh; a state that cannot be
read or written only costs time.

Equal to the sessions frame's ``cost_usd`` (``tests/test_cli_statusline.py`` checks it): the
same requests (assistant lines with usage that are not API errors, main chain and subagent
files alike), deduplicated per session by (message id, request id) with the last line
winning, in the files' :func:`~.discovery.discover` order; the known costs summed exactly.
"""

from __future__ import annotations

import json
import os
import re
import zlib
from collections.abc import Iterator
from contextlib import suppress
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, NamedTuple

from cc_analytics.frames import pricebook, sources
from cc_analytics.frames.claude import schema as S
from cc_analytics.frames.claude.decode import REQUESTS, Walked, walk_files
from cc_analytics.frames.claude.discovery import TranscriptFile, session_files
from cc_analytics.frames.sources import open_transcript

STATE_FORMAT = 1  # bump when what the state holds (or how a request is keyed or priced) changes
STATE_FOLDER = "statusline"
# A checksum of the bytes just before the offset read up to: a file rewritten in place (same
# inode, as long or longer) differs there, and is read afresh.
CHECK_BYTES = 256
PROVIDER = "anthropic"  # as frames.claude.requests records it
# RFC 3339 as the frames parse it (frames.claude.decode.parse_timestamps); anything else is
# an unknown time, priced at the latest prices as the frames do.
_FOUR_YEARS_FROM_YEAR_0 = timedelta(days=366 + 3 * 365)  # 0000-01-01 to 0004-01-01 (year 0 is a leap year)
_RFC3339 = re.compile(r"(\d{4}-\d\d-\d\d)[Tt ](\d\d:\d\d:\d\d)(?:\.(\d+))?([Zz]|[+-]\d\d:\d\d)")
# 2026-03-01T10:00:00.123Z: a UTC time that datetime.fromisoformat reads as the rule above does
# (not year 0, not a leap second, at most microseconds).
_CLAUDE_CODE_TIME = re.compile(r"(?!0000)\d{4}-\d\d-\d\dT\d\d:\d\d:[0-5]\d(?:\.\d{1,6})?Z")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)

Costs = dict[str, int | None]  # request key → picodollars (None: no price)


class SessionCost(NamedTuple):
    """What a session cost so far: ``usd`` is the sum of the known costs (None when no
    request has a price), ``unpriced`` how many requests have none."""

    usd: float | None
    requests: int
    unpriced: int


class _FileState:
    # A plain class, as the rest of this path's records are named tuples: ``dataclasses``
    # (which imports ``inspect``) would add about a tenth of the status line's time.
    __slots__ = ("device", "inode", "offset", "lines", "check", "costs")

    def __init__(
        self, device: int, inode: int, offset: int = 0, lines: int = 0, check: int = 0, costs: Costs | None = None
    ) -> None:
        self.device = device
        self.inode = inode
        self.offset = offset  # bytes read, up to the end of the last complete line
        self.lines = lines  # lines in those bytes (line numbers key requests without a message id)
        self.check = check  # zlib.crc32 of the (up to) CHECK_BYTES bytes before ``offset``
        self.costs: Costs = {} if costs is None else costs


def session_cost(main: Path, *, state_dir: Path | None = None) -> SessionCost:
    """The cost of the session whose main transcript is ``main``, and of its subagent files.

    ``state_dir`` is where the per-transcript state is kept (by default the ``statusline``
    folder of :func:`cc_analytics.cache.cache_dir`); the state makes the next call read only
    what was appended.

    Examples:
        >>> import tempfile, pathlib
        >>> folder = pathlib.Path(tempfile.mkdtemp())
        >>> line = ('{"type":"assistant","uuid":"a%d","sessionId":"s","timestamp":"2026-03-01T10:00:00Z",'
        ...         '"requestId":"req_%d","message":{"id":"msg_%d","model":"claude-opus-4-5","content":[],'
        ...         '"usage":{"input_tokens":1000000,"cache_creation_input_tokens":0,'
        ...         '"cache_read_input_tokens":0,"output_tokens":0}}}\\n')
        >>> _ = (folder / "s.jsonl").write_text(line % (1, 1, 1) + line % (2, 1, 1))
        >>> session_cost(folder / "s.jsonl", state_dir=folder / "state")
        SessionCost(usd=5.0, requests=1, unpriced=0)
        >>> with open(folder / "s.jsonl", "a") as handle:
        ...     _ = handle.write(line % (3, 2, 2))
        >>> session_cost(folder / "s.jsonl", state_dir=folder / "state")
        SessionCost(usd=10.0, requests=2, unpriced=0)
    """
    book = _book_name()
    state_path = _state_path(main, state_dir)
    files, peeked = _load(state_path, book)
    before = {path: (entry.device, entry.inode, entry.offset, entry.check) for path, entry in files.items()}
    merged: Costs = {}
    kept: dict[str, _FileState] = {}
    for transcript in session_files(main, peeked=peeked):
        name = str(transcript.path)
        entry, pending = _read(transcript, files.get(name))
        if entry is None:
            continue
        kept[name] = entry
        merged.update(entry.costs)
        merged.update(pending)
    after = {path: (entry.device, entry.inode, entry.offset, entry.check) for path, entry in kept.items()}
    if after != before:
        _save(state_path, book, kept, peeked)
    known = [cost for cost in merged.values() if cost is not None]
    usd = pricebook.to_usd(sum(known)) if known else None
    pricebook.save_book()
    return SessionCost(usd, len(merged), len(merged) - len(known))


def walked_requests(walked: Walked, *, first_line: int = 0) -> Iterator[tuple[str, int | None]]:
    """(key, picodollars) of each request of a walk, in line order: the scalar twin of
    ``frames.claude.requests.request_rows`` priced by ``frames.prices.price_requests``.

    The key is the deduplication key of the requests frame (message id, else the file and
    line, and request id); ``first_line`` is added to the walk's line numbers (a walk of the
    bytes appended after that many lines).
    """
    columns = walked.columns
    kinds, lines, times, models = columns[S.TYPE], columns[S.LINE], columns[S.TIMESTAMP], columns[S.MODEL]
    messages, request_ids, errors = columns[S.MESSAGE_ID], columns[S.REQUEST_ID], columns[S.IS_API_ERROR]
    inputs, creations = columns[S.INPUT_TOKENS], columns[S.CACHE_CREATION_TOKENS]
    reads, outputs = columns[S.CACHE_READ_TOKENS], columns[S.OUTPUT_TOKENS]
    sources = [str(transcript.path) for transcript in walked.files]
    file_of_row = walked.file_of_row
    # Only assistant lines with a usage object have pricing rows, and every request is one.
    for row, _five, hour, searches, tier, speed in walked.pricing:
        if kinds[row] != "assistant" or inputs[row] is None or errors[row]:
            continue
        message = messages[row] or f"line:{sources[file_of_row[row]]}:{lines[row] + first_line}"
        creation = creations[row]
        one_hour = (hour or 0) if creation is None else min(hour or 0, creation)
        five_minutes = None if creation is None else creation - one_hour
        cost = pricebook.request_picodollars(
            model=models[row],
            time=parse_time(times[row]),
            provider=PROVIDER,
            speed=speed,
            service_tier=tier,
            counts=(inputs[row], five_minutes, one_hour, reads[row], outputs[row], searches),
        )
        yield f"{message}\x00{request_ids[row] or ''}", cost


def parse_time(text: str | int | None) -> datetime | None:
    """A transcript's RFC 3339 timestamp as an aware UTC time (None when the frames read none);
    an ``int`` is the microseconds the C skimmer read of one (see ``decode._times``).

    Examples:
        >>> parse_time("2026-03-01T10:00:00.123Z"), parse_time("2026-03-01 11:00:00+01:00").hour
        (datetime.datetime(2026, 3, 1, 10, 0, 0, 123000, tzinfo=datetime.timezone.utc), 10)
        >>> parse_time("2026-03-01T10:00:00"), parse_time("yesterday")
        (None, None)
        >>> parse_time(1772359200123000)
        datetime.datetime(2026, 3, 1, 10, 0, 0, 123000, tzinfo=datetime.timezone.utc)
    """
    if isinstance(text, int):
        return _EPOCH + timedelta(microseconds=text)
    if text and _CLAUDE_CODE_TIME.fullmatch(text):  # the form Claude Code writes, read as is
        with suppress(ValueError):  # no such day or hour: the rule below says so too
            return datetime.fromisoformat(text)
    return parse_rfc3339(text)


def parse_rfc3339(text: str | None) -> datetime | None:
    """:func:`parse_time` by the rule alone (any RFC 3339 form, year 0, leap seconds).

    Examples:
        >>> parse_rfc3339("2026-06-30T23:59:60Z").isoformat()
        '2026-07-01T00:00:00+00:00'
    """
    found = _RFC3339.fullmatch(text) if text else None
    if found is None:
        return None
    day, clock, fraction, zone = found.groups()
    fraction = f".{fraction[:6]}" if fraction else ""
    zone = "+00:00" if zone in ("Z", "z") else zone
    # As the frames read them: a leap second is the next minute's first, and year 0 exists
    # (a time that lands in year 1 UTC or later is kept). Python has neither, so both are
    # parsed shifted and moved back.
    shift = timedelta()
    if clock.endswith(":60"):
        clock, shift = clock[:-2] + "59", timedelta(seconds=1)
    if day.startswith("0000"):
        day, shift = "0004" + day[4:], shift - _FOUR_YEARS_FROM_YEAR_0
    try:
        # In UTC first: a year-0 time with a negative offset lands in year 1 only once in UTC.
        return datetime.fromisoformat(f"{day}T{clock}{fraction}{zone}").astimezone(UTC) + shift
    except (ValueError, OverflowError):
        return None


# ------------------------------------------------------------------ reading and the state


def _read(transcript: TranscriptFile, entry: _FileState | None) -> tuple[_FileState | None, Costs]:
    """The file's state brought up to date, and the costs of a last line without its newline
    (counted now, read again next time: the frames count such a line when it is whole).

    What was appended is read in pieces of about ``sources.PIECE_BYTES``, each counted as a
    later call counts what was appended after it: a big transcript is never in memory whole."""
    try:
        handle = open_transcript(transcript.path)
    except OSError:
        return None, {}
    piece = sources.PIECE_BYTES
    with handle:
        while True:
            try:
                status = os.fstat(handle.fileno())
                if (
                    entry is None
                    or (entry.device, entry.inode) != (status.st_dev, status.st_ino)
                    or status.st_size < entry.offset
                ):
                    entry = _FileState(status.st_dev, status.st_ino)
                back = min(entry.offset, CHECK_BYTES)
                handle.seek(entry.offset - back)
                left = status.st_size - entry.offset
                data = handle.read(min(left, piece) + back)
                if zlib.crc32(data[:back]) != entry.check:  # rewritten in place
                    entry = _FileState(status.st_dev, status.st_ino)
                    back = 0
                    left = status.st_size
                    handle.seek(0)
                    data = handle.read(min(left, piece))
            except OSError:
                return None, {}
            cut = data.rfind(b"\n", back) + 1
            if cut > back:
                complete = data[back:cut]
                entry.costs.update(_costs(transcript, complete, entry.lines))
                entry.offset += len(complete)
                # bytes.count scans byte by byte (6 ms for 8 MB); replace finds each newline with
                # memchr and copies the rest (1.3 ms).
                entry.lines += len(complete) - len(complete.replace(b"\n", b""))
                entry.check = zlib.crc32(data[max(0, cut - CHECK_BYTES) : cut])
            else:
                cut = back
            if len(data) - back < left:  # more after this piece
                piece = sources.PIECE_BYTES if cut > back else 2 * piece  # a line longer than a piece: a longer one
                continue
            tail = data[cut:]
            return entry, (_costs(transcript, tail, entry.lines) if tail.strip() else {})


def _costs(transcript: TranscriptFile, data: bytes, first_line: int) -> Costs:
    walked = walk_files([transcript], REQUESTS, contents=[data])
    return dict(walked_requests(walked, first_line=first_line))


def _book_name() -> str | None:
    path = pricebook.BOOK.path()
    return None if path is None else path.name


def _state_path(main: Path, state_dir: Path | None) -> Path:
    if state_dir is None:
        from cc_analytics.cache import cache_dir

        state_dir = cache_dir() / STATE_FOLDER
    # A checksum, not a cryptographic hash (hashlib alone would cost the status line more than
    # its work): two transcripts that share a state file only make each other read afresh.
    where = os.fsencode(os.path.abspath(main))
    return state_dir / f"{main.stem[:80]}-{zlib.crc32(where):08x}.json"


def _load(path: Path, book: str | None) -> tuple[dict[str, _FileState], dict[str, str | None]]:
    """The kept state of a transcript's files; an empty one when it is absent, unreadable,
    of another format, or made with other prices."""
    try:
        stored = json.loads(path.read_bytes())
    except (OSError, ValueError):  # ValueError: not JSON, or not UTF-8
        return {}, {}
    try:
        if stored["format"] != STATE_FORMAT or stored["book"] != book:
            return {}, {}
        files = {
            str(name): _FileState(int(d), int(i), int(o), int(n), int(c), {str(k): _cost(v) for k, v in costs.items()})
            for name, (d, i, o, n, c, costs) in stored["files"].items()
        }
        peeked: dict[str, str | None] = {str(name): str(session) for name, session in stored["peeked"].items()}
    except (KeyError, TypeError, ValueError, AttributeError):
        return {}, {}
    return files, peeked


def _cost(value: Any) -> int | None:
    if value is None:
        return None
    if type(value) is not int:
        msg = f"not a cost: {value!r}"
        raise ValueError(msg)
    return value


def _save(path: Path, book: str | None, files: dict[str, _FileState], peeked: dict[str, str | None]) -> None:
    document = {
        "format": STATE_FORMAT,
        "book": book,
        "files": {name: [e.device, e.inode, e.offset, e.lines, e.check, e.costs] for name, e in files.items()},
        "peeked": {name: session for name, session in peeked.items() if session is not None},
    }
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        # ASCII with escapes: a path that is not valid Unicode (lone surrogates) is kept too.
        temporary.write_bytes(json.dumps(document, separators=(",", ":")).encode("ascii"))
        os.replace(temporary, path)
    except OSError:
        with suppress(OSError):
            temporary.unlink(missing_ok=True)
