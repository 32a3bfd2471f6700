"""The tables of every session read once, kept between runs: a warm run stats, reads, and decodes
only what changed.

Imports: the standard library, ``cache``, ``errors``, ``frames.memory``, ``frames.sources``, ``frames.engine``,
``frames.tables`` and the registry; polars when tables are read or written. The front API
(``frames.api``) reads through here unless ``cache=False``; no format is named: a session (a
format's files sharing a ``session_id``) is decoded by its format's ``tables_batch``, as the
loaders and the archive decode it.

What is kept, under ``cache_dir()/tables/<fingerprint>/``:

* ``manifest.json``: each session (*unit*) by the identity of its files (format, paths,
  session, agent, layout, project), with each file's size, modification time and inode as
  they were before it was read, and the *pack* holding its rows;
* ``packs/<id>.<table>.arrow``: the sessions, turns, problems, priced requests and findings of
  one decoded batch (Arrow IPC, read memory-mapped), with a ``_unit`` column tying each row to
  its session (turns and findings are empty where they were not asked for);
* ``plans/<key>.json``: what a source listed and how its files were planned (formats told
  apart by content), reused while no file nor folder of it changed;
* ``outputs/<key>.out``: what ``sessions`` and ``usage`` printed, for sources as they were
  (written and read by ``commands.memo``).

A session is read from its pack while each of its files has the size, modification time and
inode it had; any other session (new, grown, rewritten, turns or findings wanted that were not kept) is
decoded again, whole, and kept in a new pack. Files that are gone leave the results with the
plan, and their sessions leave the manifest at the next write. The fingerprint is made of the
package's own files (a new version, an edited schema), Polars', Python's and genai-prices'
versions (costs): another fingerprint is another folder, and the old one is removed. A pack
that cannot be read whole, or does not hold the rows the manifest says, is decoded again; a
manifest that cannot be read is an empty one. Files are written beside their name and renamed;
the manifest is replaced under a lock (``flock``), re-read first; a run that finds the lock
taken keeps nothing, and results never depend on the cache. The packs stay under
``CC_ANALYTICS_CACHE_MAX_MB`` (default :data:`DEFAULT_MAX_MB`): the least recently written go
first.

Examples:
    >>> import os, tempfile
    >>> os.environ["CC_ANALYTICS_CACHE_DIR"] = tempfile.mkdtemp()
    >>> from cc_analytics.report import SAMPLES_DIR
    >>> from cc_analytics.frames.sources import plan
    >>> cold = dict(iter_tables(plan(SAMPLES_DIR), turns=False))
    >>> warm = dict(iter_tables(plan(SAMPLES_DIR), turns=False))
    >>> all(warm[name].sessions.equals(cold[name].sessions) for name in cold)
    True
    >>> info()["sessions"] > 0
    True
    >>> del os.environ["CC_ANALYTICS_CACHE_DIR"]
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from functools import cache, partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, NamedTuple

from cc_analytics.atomic import open_pieces, write_file
from cc_analytics.frames import memory
from cc_analytics.frames.sources import TranscriptFile

if TYPE_CHECKING:
    import polars as pl

    from cc_analytics.frames.engine import Progress
    from cc_analytics.frames.sources import Plan, Source
    from cc_analytics.frames.tables import Tables

LAYOUT = 2  # bump when what is kept, or how, changes
TABLES = ("sessions", "turns", "problems", "requests", "findings")
# The tables kept only when asked for (each entry says whether it holds them): the sessions too,
# which a requests-only read of a format whose requests cost less than its tables leaves out.
OPTIONAL = ("turns", "findings", "sessions")
# Which column ties a table's rows to their session: its id, or the file it came from.
KEYS = {
    "sessions": "session_id",
    "turns": "source_file",
    "problems": "source_file",
    "requests": "session_id",
    "findings": "source_file",
}
UNIT = "_unit"
# A plan's stamps serve the read that follows it this soon (the files are stat'ed once a run).
STAMPS_SECONDS = 10.0
_planned_stamps: dict[str, Stamp | None] = {}
_planned_at = [0.0, 0.0]  # monotonic and wall-clock (ns) time just before the plan's stats
# A file modified this little before it was stat'ed may change again within its timestamp's
# granularity (a few milliseconds on Linux) keeping size and time: its session is not kept.
RACY_NS = 2_000_000_000
MAX_MB_ENV = "CC_ANALYTICS_CACHE_MAX_MB"
DEFAULT_MAX_MB = 2048
MANIFEST = "manifest.json"
OUTPUTS = "outputs"  # the commands' outputs kept whole (``commands.memo``)
LOCK = "lock"
# Packs no manifest names are another run's unfinished work for this long, then debris.
ORPHAN_SECONDS = 600.0
# A format's sessions spread over more packs than this are written again into one.
MAX_PACKS = 16

Stamp = tuple[int, int, int]  # size, modification time (ns), inode
# The libraries whose release changes the tables, and the files of theirs that a release replaces
# (genai-prices: its price data, so costs follow a new release; Polars: its version and binary).
LIBRARIES = {
    "polars": ("__init__.py", "_plr.py"),
    "genai_prices": ("__init__.py", "data.py"),
    "orjson": ("__init__.py",),
}


# ------------------------------------------------------------------ where, and for which code


def root() -> Path:
    """The folder of the tables kept for this version of everything that makes them.

    Examples:
        >>> root().parent.name, len(root().name)
        ('tables', 16)
    """
    from cc_analytics.cache import cache_dir

    return cache_dir() / "tables" / fingerprint()


@cache
def fingerprint() -> str:
    """What the kept tables depend on besides the transcripts, as a short digest: the package's
    files (its version, schemas, decoders), Python's, Polars' and genai-prices' versions (and
    its price data), the registered formats and whether the C extension may be used."""
    import importlib.util

    from cc_analytics.frames.registry import formats

    # The package's version is in its files (``__init__.py``), stat'ed below with the others.
    parts: list[str] = [str(LAYOUT), sys.version, os.environ.get("CC_ANALYTICS_PURE_PYTHON", "")]
    # Each library as installed (a new release is new files): its folder's files that say so.
    for module, files in LIBRARIES.items():
        spec = importlib.util.find_spec(module)
        where = Path(next(iter(spec.submodule_search_locations))) if spec and spec.submodule_search_locations else None
        parts.append(f"{module}:{[_stamp(where / name) if where else None for name in files]}")
    package = Path(__file__).resolve().parent.parent
    for folder, folders, names in os.walk(package):
        folders[:] = sorted(name for name in folders if name != "__pycache__")
        for name in sorted(names):
            if name.endswith((".py", ".so", ".pyd", ".c")):
                path = Path(folder) / name
                parts.append(f"{path.relative_to(package)}:{_stamp(path)}")
    parts.extend(f"{plugin.name}:{plugin.package}" for plugin in formats())
    return hashlib.sha1("\n".join(parts).encode(), usedforsecurity=False).hexdigest()[:16]


def max_bytes() -> int:
    """The bound on the packs' size: ``CC_ANALYTICS_CACHE_MAX_MB`` megabytes (default
    :data:`DEFAULT_MAX_MB`; 0 keeps nothing).

    Examples:
        >>> os.environ[MAX_MB_ENV] = "10"
        >>> max_bytes()
        10000000
        >>> del os.environ[MAX_MB_ENV]
    """
    text = os.environ.get(MAX_MB_ENV, "").strip()
    try:
        megabytes = float(text) if text else DEFAULT_MAX_MB
    except ValueError:
        megabytes = DEFAULT_MAX_MB
    return max(0, int(megabytes * 1_000_000))


ABSENT: Stamp = (-1, 0, 0)  # the stamp of a watched file that does not exist


def _stamp(path: str | os.PathLike[str]) -> Stamp | None:
    """Size, modification time and inode of a file, None when it cannot be stat'ed (then it is never kept)."""
    try:
        found = os.stat(path)
    except (OSError, ValueError):
        return None
    return (found.st_size, found.st_mtime_ns, found.st_ino)


def _stamps_of(paths: list[str]) -> list[Stamp | None]:
    """The stamps of a planned file and of the files read beside it (``FormatPlugin.watched``):
    one of those that does not exist is :data:`ABSENT` (its appearing is a change)."""
    first, *beside = paths
    return [_stamp_now(first), *(_stamp(path) or ABSENT for path in beside)]


def _stamps_fresh() -> bool:
    return time.monotonic() - _planned_at[0] < STAMPS_SECONDS


def _stamp_now(text: str) -> Stamp | None:
    """:func:`_stamp`, or what the plan just made found (stat'ed before anything was read)."""
    if text in _planned_stamps and _stamps_fresh():
        return _planned_stamps[text]
    return _stamp(text)


# ------------------------------------------------------------------ the manifest


class Manifest:
    """Units (sessions) by key, and packs by id; read from and written to ``manifest.json``."""

    def __init__(self, units: dict[str, Any] | None = None, packs: dict[str, Any] | None = None) -> None:
        self.units: dict[str, Any] = units or {}  # key -> {"pack", "index", "stamps", "turns"}
        self.packs: dict[str, Any] = packs or {}  # id -> {"units", "rows", "bytes", "turns", "time"}

    @classmethod
    def read(cls, folder: Path, *, checked: bool = False) -> Manifest:
        """The manifest in ``folder``; an empty one when it is absent or cannot be read whole.

        ``checked``: units of another shape are left out too (a run only reading takes each
        unit it looks up through :meth:`_Run.usable`, which checks it, and that costs less)."""
        document = _read_json(folder / MANIFEST)
        if not isinstance(document, dict) or document.get("layout") != LAYOUT:
            return cls()
        units, packs = document.get("units"), document.get("packs")
        if not isinstance(units, dict) or not isinstance(packs, dict):
            return cls()
        # Entries of another shape (a bug, a hand edit) are no entries: their sessions are decoded again.
        packs = {key: pack for key, pack in packs.items() if _pack_shaped(pack)}
        if checked:
            units = {key: unit for key, unit in units.items() if _unit_shaped(unit) and unit["pack"] in packs}
        return cls(units, packs)

    def write(self, folder: Path) -> None:
        # A path that is not UTF-8 (surrogate escapes) is written by ``json``: orjson raised TypeError.
        _write_beside(folder / MANIFEST, _json_bytes({"layout": LAYOUT, "units": self.units, "packs": self.packs}))

    def live_units(self) -> dict[str, int]:
        """How many units each pack still holds for the manifest."""
        counts = dict.fromkeys(self.packs, 0)
        for entry in self.units.values():
            if entry["pack"] in counts:
                counts[entry["pack"]] += 1
        return counts


def _pack_shaped(pack: object) -> bool:
    return (
        isinstance(pack, dict)
        and isinstance(pack.get("units"), int)
        and isinstance(pack.get("rows"), dict)
        and all(isinstance(pack["rows"].get(table), int) for table in TABLES)
        and isinstance(pack.get("bytes"), int)
        and isinstance(pack.get("turns"), bool)
        and isinstance(pack.get("time"), int | float)
    )


def _unit_shaped(unit: object) -> bool:
    return (
        isinstance(unit, dict)
        and isinstance(unit.get("pack"), str)
        and isinstance(unit.get("index"), int)
        and isinstance(unit.get("turns"), bool)
        and isinstance(unit.get("stamps"), list)
        and all(_stamp_shaped(stamp) and stamp is not None for stamp in unit["stamps"])
        and isinstance(unit.get("paths"), list)
        and all(isinstance(path, str) for path in unit["paths"])
    )


def _write_beside(target: Path, data: bytes) -> None:
    temporary = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    try:
        write_file(temporary, data)
        os.replace(temporary, target)
    finally:
        with suppress(OSError):
            temporary.unlink()


@contextmanager
def _locked(folder: Path) -> Iterator[bool]:
    """Whether this run holds the writer's lock of ``folder`` (it waits for nobody: another run
    writing now means this one keeps nothing)."""
    try:
        import fcntl
    except ImportError:  # no advisory locks here: keep nothing rather than race
        yield False
        return
    try:
        descriptor = os.open(folder / LOCK, os.O_RDWR | os.O_CREAT | getattr(os, "O_CLOEXEC", 0), 0o644)
    except OSError:
        yield False
        return
    try:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            yield False
            return
        yield True
    finally:
        os.close(descriptor)  # closing releases the lock, as the end of the process does


# ------------------------------------------------------------------ units


def unit_key(format: str, files: Sequence[TranscriptFile]) -> str:
    """What names a session's cached rows: its format and its files as planned (paths as given,
    so the ``source_file`` column the rows hold is the one asked for).

    Examples:
        >>> from pathlib import Path
        >>> file = TranscriptFile(Path("/p/s.jsonl"), "s", None, "main", "p", 10)
        >>> unit_key("f", [file]) == unit_key("f", [file._replace(size=20)]), len(unit_key("f", [file]))
        (True, 24)
    """
    identity = [(_text(f), f.session_id, f.agent_id, f.layout, f.project_dir) for f in files]
    return hashlib.sha1(repr((format, identity)).encode(), usedforsecurity=False).hexdigest()[:24]


def _units(files: Sequence[TranscriptFile]) -> list[list[TranscriptFile]]:
    """The files by session, in the order sessions first appear."""
    out: dict[str, list[TranscriptFile]] = {}
    for file in files:
        out.setdefault(file.session_id, []).append(file)
    return list(out.values())


# ------------------------------------------------------------------ reading through the cache


def iter_tables(
    by_format: Plan,
    *,
    turns: bool = True,
    workers: int | None = 1,
    on_progress: Progress | None = None,
    findings: bool = False,
    requests_only: bool = False,
) -> Iterator[tuple[str, Tables]]:
    """(format, tables) of a plan, one per format, sessions read from the cache where they are
    kept and decoded (then kept) where they are not. Rows come in the plan's order of sessions,
    each session's as its format decodes them. ``findings``: their findings too (``Tables.findings``,
    else None), from the same decode. ``requests_only``: what ``usage`` reads (the requests and
    problems): a format whose requests cost less than its tables (``FormatPlugin.lean_requests``)
    gives no sessions, and what it decodes is its requests alone (``requests_batch``), kept so."""
    from cc_analytics.frames.tables import Tables

    if not (workers is None or (type(workers) is int and workers == 1)):
        from cc_analytics.frames.engine import worker_count

        worker_count(0, workers)  # refused as it is without the cache, even when nothing is decoded
    run = _Run(turns=turns, findings=findings, requests_only=requests_only)
    total = sum(f.size for files in by_format.values() for f in files)
    done = 0
    try:
        for name, files in by_format.items():
            if not files:
                continue
            base = done

            def step(part: int, _total: int, base: int = base) -> None:
                if on_progress is not None:
                    on_progress(base + part, total)

            frames = run.tables(name, list(files), workers=workers, on_progress=step, total=total)
            done += sum(f.size for f in files)
            four = (frames["sessions"], frames["turns"], frames["problems"], frames["requests"])
            yield name, Tables(*four, frames["findings"] if findings else None)
        if on_progress is not None:
            on_progress(total, total)
    finally:
        run.commit()


class _Run:
    """One read through the cache: what it found, what it decoded, what it will keep."""

    def __init__(self, *, turns: bool, findings: bool = False, requests_only: bool = False) -> None:
        self.asked = {"turns": turns, "findings": findings, "sessions": True}
        self.requests_only = requests_only
        self.wanted = dict(self.asked)  # what the format being read keeps (see ``tables``)
        self.folder = root()
        self.manifest = Manifest.read(self.folder)
        self.new_units: dict[str, Any] = {}
        self.new_packs: dict[str, Any] = {}
        self.seen: set[str] = set()  # units of this run, kept or new
        self.dropped: set[str] = set()  # units found stale or unreadable

    def tables(
        self, name: str, files: list[TranscriptFile], *, workers: int | None, on_progress: Progress, total: int
    ) -> dict[str, pl.DataFrame]:
        """One format's tables: its sessions' rows kept where they are valid, decoded where not
        (Polars is imported once the first batches are the workers': see ``_decode``)."""
        from cc_analytics.frames.registry import get

        lean = self.requests_only and get(name).lean_requests
        self.wanted = {**self.asked, "sessions": not lean}
        units = _units(files)
        keys = [unit_key(name, unit) for unit in units]
        self.seen.update(keys)
        # Stamps are taken before anything is read: a file that grows meanwhile is read again next time.
        stat_time = min(time.time_ns(), int(_planned_at[1]) if _stamps_fresh() else time.time_ns())
        watched = get(name).watched
        stamps = [[stamp for f in unit for stamp in _stamps_of(watched(_text(f)))] for unit in units]
        kept: dict[str, dict[int, int]] = {}  # pack -> its unit index -> position in the plan
        missing: list[int] = []
        for position, (key, unit_stamps) in enumerate(zip(keys, stamps, strict=True)):
            entry = self.manifest.units.get(key)
            if entry is not None and None not in unit_stamps and self.usable(entry, unit_stamps):
                kept.setdefault(entry["pack"], {})[entry["index"]] = position
            else:
                if entry is not None:
                    self.dropped.add(key)
                missing.append(position)
        # Each table's frames, with what to add to their ``_unit`` to make it a key of ``where``.
        found: dict[str, list[tuple[int, pl.DataFrame]]] = {table: [] for table in TABLES}
        where: dict[int, int] = {}  # (pack number << 32) + unit index -> position in the plan
        for number, (pack, members) in enumerate(kept.items()):
            frames = self._read_pack(pack, _schemas())
            if frames is None:
                missing.extend(members.values())
                self.dropped.update(keys[position] for position in members.values())
                continue
            where.update({(number << 32) + index: position for index, position in members.items()})
            for table in TABLES:
                found[table].append((number << 32, frames[table]))
        missing.sort()
        wanted = [f for position in missing for f in units[position]]
        position_of = {keys[position]: position for position in missing}
        # A batch's sessions are the plan's (the engine never splits one): known by their id.
        position_of_session = {units[position][0].session_id: position for position in missing}
        done = sum(f.size for f in files) - sum(f.size for f in wanted)
        on_progress(done, total)
        fresh: dict[str, list[pl.DataFrame]] = {table: [] for table in TABLES}
        fresh_units: list[tuple[list[TranscriptFile], str]] = []
        offset = 1 << 62  # decoded rows' keys, apart from the packs'
        # Each decoded batch's frames (with its offset, and its first unit's place among the
        # sessions kept: None when not kept), out of this process while the workers run.
        spill = memory.Spill(self.folder)
        held: list[tuple[int, int | None, dict[str, Any]]] = []
        try:
            for batch_files, batch in _decode(
                name, wanted, turns=self.wanted["turns"], findings=self.wanted["findings"], workers=workers, lean=lean
            ):
                batch_units = _units(batch_files)
                frames, complete = _with_units(batch, batch_units)
                positions = [position_of_session[unit[0].session_id] for unit in batch_units]
                for index, position in enumerate(positions):
                    where[offset + index] = position
                base = None
                if complete:
                    base = len(fresh_units)
                    fresh_units.extend(
                        (unit, keys[position]) for unit, position in zip(batch_units, positions, strict=True)
                    )
                held.append((offset, base, {table: spill.keep(frames[table]) for table in TABLES}))
                offset += len(batch_units)
                done += sum(f.size for f in batch_files)
                on_progress(done, total)
            import polars as pl

            for offset, base, kept_frames in held:  # the workers have ended: the batches' frames back
                for table in TABLES:
                    frame = spill.take(kept_frames.pop(table))
                    # Rows the batch could not tie to a session (then nothing of it is kept) go with its first.
                    found[table].append((offset, frame.with_columns(pl.col(UNIT).fill_null(0))))
                    if base is not None:
                        fresh[table].append(frame.with_columns(pl.col(UNIT) + base))
        finally:
            spill.close()  # what was taken back is in this process now
        import polars as pl

        schemas = _schemas()
        # Every session of the format goes into one new pack when it is spread over too many
        # (each run that decodes something writes one): what a warm run reads stays a few files.
        compact = len(kept) + bool(fresh_units) > MAX_PACKS and len(fresh_units) == len(missing)
        if fresh_units and not compact:
            frames = {t: pl.concat(fresh[t], how="vertical") for t in TABLES}
            self._keep(frames, fresh_units, stamps, position_of, settled_before=stat_time - RACY_NS)
        # Whole packs whose sessions come in the plan's order (a warm run over unchanged sources)
        # are the result as they are.
        order = [where[key] for key in sorted(where)]
        whole = len(where) == len(units) and order == sorted(order) and not compact
        whole = whole and all(len(members) == self.manifest.packs[pack]["units"] for pack, members in kept.items())
        out: dict[str, pl.DataFrame] = {}
        positioned_frames: dict[str, pl.DataFrame] = {}
        for table in TABLES:
            if not found[table] or not self.wanted.get(table, True):
                out[table] = pl.DataFrame(schema=schemas[table])
                positioned_frames[table] = out[table].with_columns(pl.lit(None, pl.UInt32).alias(UNIT))
                continue
            if whole and all(frame[UNIT].is_sorted() for _base, frame in found[table]):
                out[table] = pl.concat([frame.drop(UNIT) for _base, frame in found[table]], how="vertical")
                continue
            keyed = [frame.with_columns(pl.col(UNIT).cast(pl.Int64) + base) for base, frame in found[table]]
            frame = pl.concat(keyed, how="vertical")
            positioned = pl.col(UNIT).replace_strict(where, default=None, return_dtype=pl.Int64)
            frame = frame.with_columns(positioned).filter(pl.col(UNIT).is_not_null())
            frame = frame.sort(UNIT, maintain_order=True)
            positioned_frames[table] = frame.with_columns(pl.col(UNIT).cast(pl.UInt32))
            out[table] = frame.drop(UNIT)
        if compact:
            everything = [(unit, key) for unit, key in zip(units, keys, strict=True)]
            every_position = {key: position for position, key in enumerate(keys)}
            self._keep(positioned_frames, everything, stamps, every_position, settled_before=stat_time - RACY_NS)
        return out

    def usable(self, entry: Any, stamps: list[Stamp | None]) -> bool:
        """Whether a unit's entry holds its rows as they are now: its files' stamps, turns and
        findings if asked for, a pack the manifest names (an entry of another shape is not usable)."""
        try:
            return (
                entry["stamps"] == [list(stamp) for stamp in stamps if stamp is not None]
                and type(entry["index"]) is int
                and all(entry[table] is True for table in OPTIONAL if self.wanted[table])
                and entry["pack"] in self.manifest.packs
            )
        except (TypeError, KeyError):
            return False

    def _read_pack(self, pack: str, schemas: dict[str, pl.Schema]) -> dict[str, pl.DataFrame] | None:
        """A pack's tables, memory-mapped, or None when one cannot be read whole as the manifest describes it."""
        import polars as pl

        record = self.manifest.packs[pack]
        frames: dict[str, pl.DataFrame] = {}
        for table in TABLES:
            if not self.wanted.get(table, True):
                frames[table] = pl.DataFrame(schema=[*schemas[table].items(), (UNIT, pl.UInt32())])
                continue
            path = self.folder / "packs" / f"{pack}.{table}.arrow"
            try:
                frame = pl.read_ipc(path)
            except (OSError, pl.exceptions.PolarsError):
                return None
            expected = pl.Schema([*schemas[table].items(), (UNIT, pl.UInt32())])
            if frame.schema != expected or frame.height != record["rows"].get(table, -1):
                return None
            frames[table] = frame
        return frames

    def _keep(
        self,
        frames: dict[str, pl.DataFrame],
        units: list[tuple[list[TranscriptFile], str]],
        stamps: list[list[Stamp | None]],
        position_of: dict[str, int],
        *,
        settled_before: int,
    ) -> None:
        """Write the decoded sessions of a format as a new pack (the manifest names it at
        :meth:`commit`): those whose files were all stat'ed, and modified before ``settled_before``."""
        unit_stamps = [stamps[position_of[key]] for _unit, key in units]
        settled = [all(stamp is not None and stamp[1] < settled_before for stamp in found) for found in unit_stamps]
        if not any(settled) or not max_bytes():
            return
        pack = f"{time.time_ns():x}-{os.getpid()}-{len(self.new_packs)}"
        folder = self.folder / "packs"
        written: list[Path] = []
        try:
            folder.mkdir(parents=True, exist_ok=True)
            size = 0
            for table in TABLES:
                path = folder / f"{pack}.{table}.arrow"
                temporary = path.with_name(f".{path.name}.tmp")
                with open_pieces(temporary) as out:  # see atomic.PIECE_BYTES: 120-150 ms -> 20 for 22 MB
                    frames[table].write_ipc(out, compression="uncompressed")
                os.replace(temporary, path)
                written.append(path)
                size += path.stat().st_size
        except OSError:
            for path in written:
                with suppress(OSError):
                    path.unlink()
            return
        self.new_packs[pack] = {
            "units": len(units),
            "rows": {table: frames[table].height for table in TABLES},
            "bytes": size,
            **self.wanted,
            "time": time.time(),
        }
        for index, ((unit, key), found, kept) in enumerate(zip(units, unit_stamps, settled, strict=True)):
            if not kept:  # its rows stay in the pack, named by nobody
                continue
            self.new_units[key] = {
                "pack": pack,
                "index": index,
                "stamps": [list(stamp) for stamp in found if stamp is not None],
                "paths": [_text(f) for f in unit],
                **self.wanted,
            }

    def commit(self) -> None:
        """Name the new packs in the manifest (re-read under the lock), forget what is stale, and
        remove the packs nobody names; nothing at all when another run holds the lock."""
        if not self.new_packs and not self.dropped:
            return
        try:
            self.folder.mkdir(parents=True, exist_ok=True)
        except OSError:
            self._discard()
            return
        with _locked(self.folder) as held:
            if not held:
                self._discard()
                return
            manifest = Manifest.read(self.folder, checked=True)
            for key in self.dropped:
                manifest.units.pop(key, None)
            manifest.packs.update(self.new_packs)
            manifest.units.update(self.new_units)
            _forget_gone(manifest, self.seen)
            _bound(manifest, keep=set(self.new_packs))
            counts = manifest.live_units()
            for pack, live in counts.items():
                if not live:
                    del manifest.packs[pack]
            try:
                manifest.write(self.folder)
            except OSError:
                return
            _remove_unnamed(self.folder, set(manifest.packs))
            _remove_other_fingerprints(self.folder)

    def _discard(self) -> None:
        for pack in self.new_packs:
            for table in TABLES:
                with suppress(OSError):
                    (self.folder / "packs" / f"{pack}.{table}.arrow").unlink()


def _schemas() -> dict[str, pl.Schema]:
    from cc_analytics.frames import schema as S

    return {
        "sessions": S.SESSIONS_SCHEMA,
        "turns": S.TURNS_SCHEMA,
        "problems": S.PROBLEMS_SCHEMA,
        "requests": S.REQUESTS_SCHEMA,
        "findings": S.FINDINGS_SCHEMA,
    }


def _decode(
    name: str, files: list[TranscriptFile], *, turns: bool, findings: bool, workers: int | None, lean: bool = False
) -> Iterator[tuple[list[TranscriptFile], Tables]]:
    """(batch, its tables) of ``files``, by the batch engine (nothing is imported when nothing is
    to decode); the findings from the same decode when asked for and the format has them;
    ``lean``: the requests and problems alone (``requests_batch``), the other tables empty."""
    if not files:
        return
    from cc_analytics.frames.engine import run_batches
    from cc_analytics.frames.registry import get
    from cc_analytics.frames.sources import package
    from cc_analytics.lazy import Exported

    plugin, total = get(name), sum(file.size for file in files)
    # The format's decoders by name: the first batches go to the workers before this process
    # imports them (and Polars, which they import) to decode one itself.
    owner = package(name).__name__
    if lean:
        decode = partial(_decoded, partial(_requests_tables, Exported(owner, "requests_batch")))
        batch_bytes, threads = plugin.requests_batching(total)
    else:
        options = {"findings": True} if findings and plugin.has_findings else {}
        decode = partial(_decoded, partial(Exported(owner, "tables_batch"), turns=turns, **options))
        batch_bytes, threads = plugin.batching(total, turns=turns or bool(options))
    yield from run_batches(decode, files, workers=workers, batch_bytes=batch_bytes, threads=threads)


def _requests_tables(requests_batch: Any, batch: list[TranscriptFile]) -> Tables:
    """A batch's tables of its requests-only read: requests and problems, no sessions nor turns."""
    import polars as pl

    from cc_analytics.frames import schema as S
    from cc_analytics.frames.tables import Tables

    requests, problems = requests_batch(batch)
    return Tables(pl.DataFrame(schema=S.SESSIONS_SCHEMA), pl.DataFrame(schema=S.TURNS_SCHEMA), problems, requests)


def _decoded(decode: Any, batch: list[TranscriptFile]) -> tuple[list[TranscriptFile], Tables]:
    """A batch with its tables (what a worker process hands back)."""
    return batch, decode(batch)


def _with_units(tables: Any, units: list[list[TranscriptFile]]) -> tuple[dict[str, pl.DataFrame], bool]:
    """A decoded batch's tables, each row with the index of its session in ``units``; whether
    every row found its session (else the batch is not kept)."""
    import polars as pl

    by_session = {unit[0].session_id: index for index, unit in enumerate(units)}
    by_file = {f.source_file: index for index, unit in enumerate(units) for f in unit}
    out: dict[str, pl.DataFrame] = {}
    complete = True
    for table in TABLES:
        frame = getattr(tables, table, None)
        if frame is None:  # findings not asked for, or a format without them
            frame = pl.DataFrame(schema=_schemas()[table])
        mapping = by_session if KEYS[table] == "session_id" else by_file
        column = pl.col(KEYS[table]).replace_strict(mapping, default=None, return_dtype=pl.UInt32)
        frame = frame.with_columns(column.alias(UNIT))
        complete = complete and frame[UNIT].null_count() == 0
        out[table] = frame
    return out, complete


def _forget_gone(manifest: Manifest, seen: set[str]) -> None:
    """Units not read in this run whose files are all gone leave the manifest (the cache mirrors
    the sources: it is not an archive)."""
    for key, entry in list(manifest.units.items()):
        if key in seen:
            continue
        paths = entry.get("paths")
        if not paths or all(_stamp(path) is None for path in paths):
            del manifest.units[key]


def _bound(manifest: Manifest, *, keep: set[str]) -> None:
    """Forget the oldest packs (and their units) until the packs fit :func:`max_bytes`; the ones
    just written last."""
    limit = max_bytes()
    total = sum(record["bytes"] for record in manifest.packs.values())
    if total <= limit:
        return
    order = sorted(manifest.packs, key=lambda pack: (pack in keep, manifest.packs[pack]["time"]))
    gone: set[str] = set()
    for pack in order:
        if total <= limit:
            break
        total -= manifest.packs[pack]["bytes"]
        gone.add(pack)
    for key, entry in list(manifest.units.items()):
        if entry["pack"] in gone:
            del manifest.units[key]
    for pack in gone:
        del manifest.packs[pack]


def _remove_unnamed(folder: Path, named: set[str]) -> None:
    """Remove the packs no manifest names: forgotten ones, and those a killed run left (after
    :data:`ORPHAN_SECONDS`, so that another run's packs waiting for the lock are not taken)."""
    now = time.time()
    try:
        entries = list(os.scandir(folder / "packs"))
    except OSError:
        return
    for entry in entries:
        pack = entry.name.lstrip(".").split(".", 1)[0]
        if pack in named:
            continue
        try:
            # A pack of this very run's lifetime is named or forgotten; older debris goes after a while.
            fresh = now - entry.stat().st_mtime < ORPHAN_SECONDS
        except OSError:
            continue
        if fresh and pack.split("-")[1:2] != [str(os.getpid())]:  # another run's, maybe waiting for the lock
            continue
        with suppress(OSError):
            os.unlink(entry.path)


def _remove_other_fingerprints(folder: Path) -> None:
    """The folders of other fingerprints (another version wrote them) are removed."""
    import shutil

    try:
        siblings = [entry for entry in os.scandir(folder.parent) if entry.is_dir() and entry.name != folder.name]
    except OSError:
        return
    for entry in siblings:
        shutil.rmtree(entry.path, ignore_errors=True)


def info() -> dict[str, Any]:
    """What the cache holds: its folder, the sessions and packs of this version, their size on
    disk and the bound.

    Examples:
        >>> sorted(info())
        ['bytes', 'folder', 'max_bytes', 'other_versions_bytes', 'outputs', 'packs', 'plans', 'sessions']
    """
    folder = root()
    manifest = Manifest.read(folder)
    return {
        "folder": str(folder.parent.parent),
        "sessions": len(manifest.units),
        "packs": len(manifest.packs),
        "plans": len(_entries(folder / "plans")),
        "outputs": len(_entries(folder / OUTPUTS)),
        "bytes": _size(folder),
        "other_versions_bytes": sum(_size(Path(e.path)) for e in _entries(folder.parent) if e.name != folder.name),
        "max_bytes": max_bytes(),
    }


def clear() -> int:
    """Remove every table and plan kept (every version's); how many bytes that freed."""
    import shutil

    tables = root().parent
    freed = _size(tables)
    shutil.rmtree(tables, ignore_errors=True)
    return freed


def _entries(folder: Path) -> list[os.DirEntry[str]]:
    try:
        return list(os.scandir(folder))
    except OSError:
        return []


def _size(folder: Path) -> int:
    total = 0
    for dirpath, _folders, names in os.walk(folder):
        for name in names:
            with suppress(OSError):
                total += os.stat(os.path.join(dirpath, name)).st_size
    return total


# ------------------------------------------------------------------ plans


def plan(
    source: Source | Plan = None, *, format: str = "auto", surveyed: Survey | None = None
) -> dict[str, list[TranscriptFile]]:
    """:func:`cc_analytics.frames.sources.plan`, reused while the source's listing, every file's
    size, modification time and inode, and every folder's modification time are as they were
    (a new file, or one removed, changes its folder's); else planned again, the formats of the
    unchanged files remembered. ``surveyed``: the :func:`survey` of ``source`` this run made
    already (used when it is less than :data:`STAMPS_SECONDS` old)."""
    from collections.abc import Mapping

    from cc_analytics.frames import sources

    if isinstance(source, Mapping) or _has_transcript_files(source):
        return sources.plan(source, format=format)
    path = _plan_path(source, format)
    if surveyed is None or time.monotonic() - surveyed.started[0] >= STAMPS_SECONDS:
        surveyed = survey(source)
    started = surveyed.started
    state = _state(surveyed)
    _planned_stamps.clear()
    _planned_stamps.update((path, tuple(stamp) if stamp else None) for path, stamp in state["files"])
    _planned_at[:] = started
    record = _read_plan(path)
    try:  # a plan of another shape (a bug, a hand edit) is no plan
        if record is not None and record.get("state") == state and not _racy(record):
            return _files_of(record["plan"])
        grown = _grown(record, state) if record is not None else None
        if record is not None and grown is not None:
            rows_of = {name: [grown.get(row[0], row) for row in rows] for name, rows in record["plan"].items()}
            planned = _files_of(rows_of)
            _save_plan(path, state, rows_of, int(started[1]))
            return planned
        known = _known_formats(record, state) if record is not None else {}
    except (TypeError, ValueError, IndexError, KeyError, AttributeError):
        known = {}

    def sniff(file: Path) -> str:
        name = known.get(str(file))
        return name if name is not None else sources.sniff_format(file)

    planned = sources.plan(source, format=format, sniff=sniff)
    _save_plan(path, state, {name: [_row(f) for f in files] for name, files in planned.items()}, int(started[1]))
    return planned


def _save_plan(path: Path, state: dict[str, Any], rows: dict[str, list[list[Any]]], started: int) -> None:
    if not max_bytes():
        return
    document = {"state": state, "plan": rows, "time": started}
    with suppress(OSError):
        path.parent.mkdir(parents=True, exist_ok=True)
        _write_beside(path, _json_bytes(document))


def _read_json(path: Path) -> Any:
    """The JSON document at ``path`` (by orjson, or ``json`` for paths that are not UTF-8, which
    :func:`_json_bytes` escaped); None when it cannot be read or parsed."""
    import orjson

    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        return orjson.loads(data)
    except orjson.JSONDecodeError:
        try:
            return json.loads(data.decode("utf-8", "surrogateescape"))
        except ValueError:
            return None


def _json_bytes(document: object) -> bytes:
    """``document`` as JSON: by orjson (a tenth of the time for a plan of 4,000 files), or by
    ``json`` when a path is not UTF-8 (held with surrogate escapes, which orjson refuses).

    Examples:
        >>> _json_bytes({"a": ["é"]}), _json_bytes(["\\udcff"])
        (b'{"a":["\\xc3\\xa9"]}', b'["\\\\udcff"]')
    """
    import orjson

    try:
        return orjson.dumps(document)
    except TypeError:
        return json.dumps(document, separators=(",", ":")).encode("ascii")


def _changed_since(time: int | None, since: object) -> bool:
    """Whether a modification time may hide a change after ``since`` (a plan's time): it is not
    :data:`RACY_NS` older (a write within a timestamp's granularity keeps the time)."""
    return time is None or not isinstance(since, int) or time >= since - RACY_NS


def _racy(record: dict[str, Any]) -> bool:
    """Whether a file or folder of a kept plan was modified too close to its making to trust it."""
    since, state = record.get("time"), record["state"]
    return any(_changed_since(stamp[1] if stamp else None, since) for _path, stamp in state["files"]) or any(
        _changed_since(time, since) for _folder, time in state["folders"]
    )


def _known_formats(record: dict[str, Any], state: dict[str, Any]) -> dict[str, str]:
    """The formats of the files planned before whose stamps have not changed since (not sniffed again)."""
    before = {row[0]: row[1] for row in record.get("state", {}).get("files", [])}
    now = {row[0]: row[1] for row in state["files"]}
    return {
        row[0]: name
        for name, rows in record.get("plan", {}).items()
        for row in rows
        if before.get(row[0]) is not None
        and before.get(row[0]) == now.get(row[0])
        and not _changed_since(now[row[0]][1], record.get("time"))
    }


def _grown(record: dict[str, Any], state: dict[str, Any]) -> dict[str, list[Any]] | None:
    """The plan's rows of the files that changed since it was made (grown, mostly: live
    sessions), when nothing else did: the same files listed, the same folders (a file added or
    removed beside them, a tombstone, changes a folder's time), each changed file planned before
    and its first bytes told apart and classified as before (by its format's ``classify``: a
    plan depends on a file's path and first bytes only). None: plan again."""
    from cc_analytics.frames.registry import get
    from cc_analytics.frames.sources import SNIFF_BYTES, read_transcript, sniff_head

    before = record.get("state", {})
    if before.get("folders") != state["folders"] or len(before.get("files", [])) != len(state["files"]):
        return None
    since = record.get("time")
    if any(_changed_since(time, since) for _folder, time in state["folders"]):
        return None
    planned = {row[0]: (name, row) for name, rows in record["plan"].items() for row in rows}
    out: dict[str, list[Any]] = {}
    for (path, old), (now_path, new) in zip(before["files"], state["files"], strict=True):
        if path != now_path:
            return None
        if old == new and not _changed_since(new[1] if new else None, since):
            continue
        if new is None or path not in planned:
            return None
        name, row = planned[path]
        try:
            head = read_transcript(Path(path), SNIFF_BYTES)
        except OSError:
            return None
        if sniff_head(head) != name:
            return None
        file = get(name).classify(Path(path), size=new[0], head=head)
        if _row(file)[:5] != row[:5]:
            return None
        out[path] = _row(file)
    return out


def planned_before(source: Source | Plan) -> bool:
    """Whether a plan of ``source`` is kept (a run over it is likely warm: no worker is started
    ahead, the batch engine starts them if what changed is large).

    Examples:
        >>> planned_before(["/no/such/folder"])
        False
    """
    from collections.abc import Mapping

    if isinstance(source, Mapping) or _has_transcript_files(source):
        return False
    return _plan_path(source, "auto").is_file()


def _plan_path(source: Source, format: str) -> Path:
    key = hashlib.sha1(repr((format, _roots(source))).encode(), usedforsecurity=False).hexdigest()[:24]
    return root() / "plans" / f"{key}.json"


def _has_transcript_files(source: object) -> bool:
    return (
        isinstance(source, Sequence)
        and not isinstance(source, str)
        and any(isinstance(item, TranscriptFile) for item in source)
    )


def _roots(source: Source) -> list[str]:
    """The sources as absolute text (None: every format's default store, as they are now)."""
    from cc_analytics.frames.sources import default_stores, source_list

    if source is None:
        return ["<default>", *(os.path.abspath(os.fspath(store)) for store in default_stores())]
    return [os.path.abspath(os.path.expanduser(os.fspath(item))) for item in source_list(source)]  # type: ignore[arg-type]


def _listing(source: Source) -> list[str]:
    """Every path the source lists (folders walked, globs expanded), as text."""
    from cc_analytics.frames.sources import _listed, default_stores, expand, refuse_empty, source_list

    if source is None:
        return sorted(_listed(default_stores()))
    out: list[str] = []
    for item in source_list(source):
        text = os.path.expanduser(refuse_empty(os.fspath(item)))  # type: ignore[arg-type]
        if os.path.isdir(text):
            out.extend(sorted(_listed([Path(text)])))  # what expand walks, without a Path for each file
        else:
            out.extend(str(path) for path in expand(item))  # type: ignore[arg-type]
    return out


class Survey(NamedTuple):
    """A source as one run found it: every path it lists, each stat'ed (None: it could not be),
    the folders holding them, each stat'ed, and when the stats began (monotonic, then wall-clock ns)."""

    listing: list[str]
    files: list[os.stat_result | None]
    folders: list[tuple[str, os.stat_result | None]]
    started: list[float]


def survey(source: Source) -> Survey:
    """The listing of ``source`` (folders walked, globs expanded) with every file and folder
    stat'ed (what :func:`plan` compares with its kept plan; a command that looks at its kept
    output first, ``commands.memo``, hands its survey to the plan that follows).

    Examples:
        >>> import tempfile
        >>> folder = tempfile.mkdtemp()
        >>> _ = open(os.path.join(folder, "a.jsonl"), "w").write("{}\\n")
        >>> found = survey([folder])
        >>> [os.path.basename(path) for path in found.listing], found.files[0].st_size
        (['a.jsonl'], 3)
    """
    started = [time.monotonic(), time.time_ns()]
    listing = _listing(source)
    folders = sorted({path.rpartition(os.sep)[0] for path in listing})
    return Survey(listing, [_stat_result(path) for path in listing], [(f, _stat_result(f)) for f in folders], started)


def _stat_result(path: str) -> os.stat_result | None:
    try:
        return os.stat(path)
    except (OSError, ValueError):
        return None


def _state(found: Survey) -> dict[str, Any]:
    return {
        "files": [
            [path, None if stat is None else [stat.st_size, stat.st_mtime_ns, stat.st_ino]]
            for path, stat in zip(found.listing, found.files, strict=True)
        ],
        "folders": [[folder, None if stat is None else stat.st_mtime_ns] for folder, stat in found.folders],
    }


def _read_plan(path: Path) -> dict[str, Any] | None:
    document = _read_json(path)
    if not isinstance(document, dict) or not isinstance(document.get("plan"), dict):
        return None
    # Lists read back from JSON: the stamps compare as lists.
    return document


def _stamp_shaped(value: object) -> bool:
    return value is None or (isinstance(value, list) and len(value) == 3 and all(isinstance(v, int) for v in value))


def _row(file: TranscriptFile) -> list[Any]:
    return [_text(file), file.session_id, file.agent_id, file.layout, file.project_dir, file.size]


def _files_of(rows: dict[str, list[list[Any]]]) -> dict[str, list[TranscriptFile]]:
    """The plan's files from its rows; a row of another shape raises TypeError or ValueError."""
    out: dict[str, list[TranscriptFile]] = {}
    for name, found in rows.items():
        files: list[TranscriptFile] = []
        for path, session, agent, layout, project, size in found:
            if not (type(path) is str and type(session) is str and type(layout) is str and type(project) is str):
                raise TypeError(path)
            if not ((agent is None or type(agent) is str) and type(size) is int and type(name) is str):
                raise TypeError(path)
            files.append(_Planned(path, session, agent, layout, project, size))  # type: ignore[arg-type]
        out[name] = files
    return out


class _Planned(TranscriptFile):
    """A file of a kept plan, its path kept as text and made a ``Path`` when asked for: a warm
    run never asks (making 4,000 of them took a tenth of its time)."""

    __slots__ = ()

    @property
    def path(self) -> Path:
        return Path(tuple.__getitem__(self, 0))  # type: ignore[arg-type]


def _text(file: TranscriptFile) -> str:
    """A planned file's path as text, without making a ``Path``."""
    return os.fspath(tuple.__getitem__(file, 0))  # type: ignore[arg-type]
