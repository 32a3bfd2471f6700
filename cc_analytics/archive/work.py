"""The per-batch work of an archive run: read, hash, keep a compressed copy, decode, write parts.

Imports: polars, pyarrow (zstd), the standard library, ``frames`` (each format package's
``tables_batch``, the one pure decode the loaders run too: bytes and path metadata in,
tables out) and the other ``archive`` modules. :func:`archive_batch` runs in a worker process
of the local engine or as a Dask task; it writes its raw copies under names no manifest
names yet and its parts under the run's staging folder, and returns only what the
manifest needs, so the driver never holds transcript bytes or rows.
"""

from __future__ import annotations

import hashlib
import io
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

from cc_analytics.archive import layout as L
from cc_analytics.archive.manifest import FileRecord, PartRecord, Unit
from cc_analytics.archive.plan import GONE, MODIFIED, NEW, Context, Item
from cc_analytics.archive.storage import Storage, filesystem, is_url
from cc_analytics.frames.memory import release_memory
from cc_analytics.frames.sources import TranscriptFile

ZSTD_LEVEL = 1  # about 340 MB/s a core on transcripts, to a quarter of their size


@dataclass(frozen=True, slots=True)
class BatchResult:
    """What a batch changed: refreshed file records, the units decoded again, the parts staged."""

    records: tuple[FileRecord, ...]
    units: tuple[Unit, ...]
    parts: tuple[PartRecord, ...]
    counts: tuple[tuple[str, int], ...]  # bytes_read, and files new, appended, rewritten, touched
    held: tuple[str, ...] = ()  # sessions left as archived before, each with why


def archive_batch(items: list[Item], *, context: Context) -> BatchResult:
    """Bring the units of ``items`` up to date: a unit one of whose files changed in content is
    decoded again whole (every file of it, read from the source or, when gone, the raw copy).

    Examples:
        >>> import tempfile, pathlib
        >>> from cc_analytics.archive.manifest import FileRecord
        >>> from cc_analytics.frames.sources import sniff_format
        >>> root = tempfile.mkdtemp()
        >>> path = pathlib.Path(root) / "s.jsonl"
        >>> _ = path.write_text('{"type":"session_start","timestamp":1767225600000,"data":{}}\\n')
        >>> format = sniff_format(path)
        >>> record = FileRecord(str(path), format, "s", None, "main", "p", path.stat().st_size,
        ...     0, "", f"raw/{format}/p/s.jsonl")
        >>> item = Item(record, NEW, record.size, 0)
        >>> result = archive_batch([item], context=Context(root + "/archive", "r1"))
        >>> result.units == ((format, "s"),), sorted(part.table for part in result.parts)
        (True, ['sessions', 'turns'])
    """
    try:
        return _archive_batch(items, context)
    finally:
        release_memory()  # the batch's bytes and frames are garbage now


def _archive_batch(items: list[Item], context: Context) -> BatchResult:
    storage = filesystem(context.root)
    records: list[FileRecord] = []
    decoded: dict[Unit, list[tuple[FileRecord, bytes]]] = {}
    counts = {"bytes_read": 0, "new": 0, "appended": 0, "rewritten": 0, "touched": 0}
    copies: dict[str, Future[tuple[str, bytes]]] = {}
    sources = _read_sources(items)
    if context.masked:  # the copies, and the tables decoded from them, have the secrets masked
        from cc_analytics.archive.masking import mask_secrets

        sources = {source: mask_secrets(data) for source, data in sources.items()}
    held: list[str] = []
    for unit, members in _by_unit(items).items():
        if context.shared and any(i.state != NEW and i.record.source not in sources for i in members):
            held.append(f"{unit[1]} ({unit[0]}): a file of it is gone, and a shared archive keeps no copy of it")
            continue
        try:  # the files gone (or unreadable now) are decoded as last archived: their copies first
            kept = {
                item.record.source: read_raw(storage, context.root, item.record)
                for item in members
                if item.state != NEW and item.record.source not in sources
            }
        except OSError as error:  # the session stays as archived before; nothing of it changes
            held.append(f"{unit[1]} ({unit[0]}): {error}")
            continue
        contents: list[tuple[FileRecord, bytes]] = []
        changed = False
        for item in members:
            record, data = item.record, kept.get(item.record.source)
            if data is None and (data := sources.get(record.source)) is None:
                continue  # new, and vanished since it was listed: the next run will tell
            if record.source not in kept and item.state in (NEW, MODIFIED):
                record, how = _refresh(storage, context, item, data, copies)
                records.append(record)
                counts[how] += 1
                changed |= how != "touched"
            counts["bytes_read"] += len(data)
            contents.append((record, data))
        if changed:
            decoded[unit] = contents
    parts = _write_tables(storage, context, decoded)  # meanwhile the copies are compressed
    done = {path: future.result() for path, future in copies.items()}
    records = [replace(r, sha1=done[path][0]) if (path := _copy_path(context, r)) in done else r for r in records]
    storage.write_many({path: copy for path, (_sha1, copy) in done.items()})
    return BatchResult(tuple(records), tuple(decoded), tuple(parts), tuple(counts.items()), tuple(held))


def _copy_path(context: Context, record: FileRecord) -> str:
    return f"{context.root}/{record.copy}"


def _by_unit(items: list[Item]) -> dict[Unit, list[Item]]:
    out: dict[Unit, list[Item]] = {}
    for item in items:
        out.setdefault(item.record.unit, []).append(item)
    return out


def _read_sources(items: list[Item]) -> dict[str, bytes]:
    """The bytes of the batch's listed files (not those gone), read together (one round of
    concurrent requests on object storage); a file that cannot be read is left out."""
    by_storage: dict[int, tuple[Storage, list[str]]] = {}
    out: dict[str, bytes] = {}
    for item in items:
        if item.state != GONE:
            try:
                own = _unit_bytes(item.record)
            except OSError:  # left out, as a file that cannot be read
                continue
            if own is not None:
                out[item.record.source] = own
                continue
            storage = filesystem(item.record.source)
            by_storage.setdefault(id(storage), (storage, []))[1].append(item.record.source)
    for storage, paths in by_storage.values():
        out.update(storage.read_many(paths))
    return out


def _unit_bytes(record: FileRecord) -> bytes | None:
    """What the format keeps of a local source when not its bytes as they are
    (``FormatPlugin.unit_bytes``: a session spread over files, a database's snapshot); None
    otherwise. Raises :class:`OSError` when it cannot be read."""
    if is_url(record.source):
        return None
    from cc_analytics.frames.registry import get

    return get(record.format).unit_bytes(Path(record.source))


def read_raw(storage: Storage, root: str, record: FileRecord) -> bytes:
    """The bytes of a source file as the archive last read them (its raw copy, decompressed).

    A copy that is missing or damaged raises :class:`OSError` naming the copy.
    """
    path = f"{root}/{record.copy}"
    try:
        compressed = storage.read(path)
    except FileNotFoundError:
        msg = f"the raw copy {path!r} is missing"
        raise OSError(msg) from None
    try:
        data = decompress(compressed, record.size)
    except (OSError, ValueError) as error:  # pyarrow's zstd raises OSError on corrupt frames
        msg = f"the raw copy {path!r} is damaged ({error})"
        raise OSError(msg) from None
    if len(data) != record.size:
        msg = f"the raw copy {path!r} holds {len(data):,} bytes, not the {record.size:,} archived"
        raise OSError(msg)
    return data


def _refresh(
    storage: Storage, context: Context, item: Item, data: bytes, copies: dict[str, Future[tuple[str, bytes]]]
) -> tuple[FileRecord, str]:
    """The new record of a file read again, its raw copy (and the copy's hash) being made in
    ``copies``; how it changed: ``new``, ``touched`` (same bytes), ``appended`` (the old bytes
    are a prefix) or ``rewritten``.

    A changed file is compared with its raw copy, byte for byte: it costs a decompression of
    the copy, on the rare files whose size or time changed, where hashing every byte of every
    new file would cost a third of the compression itself.
    """
    if context.shared:  # no copy: a changed file's session is decoded again from the sources
        how = "new" if item.state != MODIFIED else "rewritten"
        return replace(item.record, size=len(data), mtime_ns=item.mtime_ns, tag=item.tag, sha1="", generation=0), how
    view = memoryview(data)
    if item.state != MODIFIED:  # nothing to compare: compressing (and hashing) goes beside the decode
        record = replace(item.record, size=len(data), mtime_ns=item.mtime_ns, tag=item.tag, generation=0)
        copies[_copy_path(context, record)] = _pool().submit(_copy, view, b"")
        return record, "new"
    old = item.record
    previous, before = _previous(storage, context, old)
    if before is not None and len(data) >= old.size and data.startswith(before):
        if len(data) == old.size:
            return old.touched(item.mtime_ns, item.tag), "touched"
        copy, how = _pool().submit(_copy, view[old.size :], previous), "appended"
    else:
        copy, how = _pool().submit(_copy, view, b""), "rewritten"
    record = replace(item.record, size=len(data), mtime_ns=item.mtime_ns, tag=item.tag, generation=old.generation + 1)
    copies[_copy_path(context, record)] = copy
    return record, how


def _previous(storage: Storage, context: Context, old: FileRecord) -> tuple[bytes, bytes | None]:
    """The raw copy of ``old`` as stored and decompressed; ``(b"", None)`` when it cannot be
    read or is damaged (the file is then taken as rewritten: copied and decoded whole)."""
    try:
        previous = storage.read(f"{context.root}/{old.copy}")
        return previous, decompress(previous, old.size)
    except (OSError, ValueError):  # pyarrow's zstd raises OSError on corrupt data
        return b"", None


@cache
def _pool() -> ThreadPoolExecutor:
    # zstd and SHA-1 release the GIL: the copies are made while this thread walks the lines.
    return ThreadPoolExecutor(1, thread_name_prefix="cc-archive-copy")


def _copy(data: memoryview, previous: bytes) -> tuple[str, bytes]:
    """The raw copy (``previous`` and a frame of ``data``) and its SHA-1."""
    copy = previous + compress(data)
    return hashlib.sha1(copy, usedforsecurity=False).hexdigest(), copy


@cache
def _codec() -> Any:
    import pyarrow as pa

    return pa.Codec("zstd", compression_level=ZSTD_LEVEL)


def compress(data: bytes | memoryview) -> bytes:
    """One zstd frame (frames concatenate: a copy grows by appending the new bytes' frame)."""
    if not len(data):
        return b""
    return bytes(_codec().compress(data, asbytes=True))


def decompress(data: bytes, size: int) -> bytes:
    """The ``size`` bytes of concatenated zstd frames."""
    if size == 0:
        return b""
    return bytes(_codec().decompress(data, decompressed_size=size, asbytes=True))


# ------------------------------------------------------------------ tables


def transcript_file(record: FileRecord) -> TranscriptFile:
    """The loaders' view of an archived file (``source_file`` is mapped back to ``record.source``)."""
    return TranscriptFile(
        Path(record.source), record.session_id, record.agent_id, record.layout, record.project_dir, record.size
    )


def decode_units(decoded: dict[Unit, list[tuple[FileRecord, bytes]]]) -> dict[str, dict[str, pl.DataFrame]]:
    """Each format's tables of the units, from its package's ``tables_batch`` (bytes in)."""
    from cc_analytics.frames.api import package

    by_format: dict[str, list[tuple[FileRecord, bytes]]] = {}
    for (format, _session), contents in decoded.items():
        by_format.setdefault(format, []).extend(contents)
    out: dict[str, dict[str, pl.DataFrame]] = {}
    for format, contents in by_format.items():
        files = [transcript_file(record) for record, _ in contents]
        tables = package(format).tables_batch(files, turns=True, contents=[data for _, data in contents])
        sources = {file.source_file: record.source for file, (record, _) in zip(files, contents, strict=True)}
        out[format] = {
            table.name: _sources_back(getattr(tables, table.name), sources).cast(table.schema) for table in L.TABLES
        }
    return out


def _sources_back(frame: pl.DataFrame, sources: dict[str, str]) -> pl.DataFrame:
    if "source_file" not in frame.columns or all(key == value for key, value in sources.items()):
        return frame
    return frame.with_columns(pl.col("source_file").replace(sources))


def _write_tables(
    storage: Storage, context: Context, decoded: dict[Unit, list[tuple[FileRecord, bytes]]]
) -> list[PartRecord]:
    if not decoded:
        return []
    tag = hashlib.sha1(repr(next(iter(decoded))).encode(), usedforsecurity=False).hexdigest()[:12]
    parts: list[PartRecord] = []
    written: dict[str, bytes] = {}
    for format, tables in decode_units(decoded).items():
        session_of = {
            record.source: record.session_id
            for (f, _), contents in decoded.items()
            if f == format
            for record, _ in contents
        }
        month = _months(tables["sessions"])
        for table in L.TABLES:
            frame = tables[table.name]
            if not frame.height:
                continue
            keyed = frame.with_columns(_unit_column(table, session_of))
            keyed = keyed.with_columns(pl.col("_unit").replace_strict(month, default=None).alias("_month"))
            for (month_value,), rows in keyed.group_by("_month", maintain_order=True):
                units = tuple((format, s) for s in rows["_unit"].unique(maintain_order=True).to_list())
                data = rows.drop("_unit", "_month", *([L.FORMAT] if L.FORMAT in rows.columns else []))
                data = data.with_columns(pl.lit(context.machine, pl.String).alias(L.MACHINE))
                if context.shared:
                    from cc_analytics.archive.share import redact

                    data = redact(data, keep_paths=context.keep_paths)
                path = L.part_path(table.name, format, month_value, context.run, tag)
                written[f"{context.staging}/{path}"] = parquet_bytes(data)
                parts.append(PartRecord(path, table.name, data.height, units))
    storage.write_many(written)
    return parts


def _unit_column(table: L.Table, session_of: dict[str, str]) -> pl.Expr:
    if table.key == "session_id":
        return pl.col("session_id").alias("_unit")
    return pl.col("source_file").replace_strict(session_of, default=None, return_dtype=pl.String).alias("_unit")


def _months(sessions: pl.DataFrame) -> dict[str, str | None]:
    """The month each session started (UTC, ``YYYY-MM``), by session id."""
    months = sessions.group_by("session_id").agg(pl.col("first_time").min().dt.strftime("%Y-%m").alias("month"))
    return dict(months.iter_rows())


def parquet_bytes(frame: pl.DataFrame) -> bytes:
    buffer = io.BytesIO()
    frame.write_parquet(buffer, compression="zstd", statistics=True)
    return buffer.getvalue()
