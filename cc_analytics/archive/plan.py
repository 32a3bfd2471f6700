"""What an archive run has to do: list the sources, compare them with the manifest, and pick
the units to decode again.

Imports: the standard library, ``frames.sources`` and the format registry (each plugin's
``classify`` and ``deleted``; no Polars: a run with nothing to do only lists and stats). A
listed file whose size and modification time equal the manifest's is not read; a new file's
first bytes tell its format and, where its name does not say so, its session.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path

from cc_analytics.archive import layout as L
from cc_analytics.archive.manifest import FileRecord, Manifest, Unit
from cc_analytics.archive.storage import Listed, Storage, filesystem, is_url
from cc_analytics.frames.sources import name_filter, read_transcript, sniff_head

Sources = str | os.PathLike[str] | Sequence[str | os.PathLike[str]] | None

NEW = "new"  # not in the manifest
MODIFIED = "modified"  # listed with another size or mtime than the manifest's
SAME = "same"  # listed with the manifest's size and mtime: read only if its session is re-decoded
GONE = "gone"  # in the manifest, not listed (or unreadable): read from the raw copy
# New files are classified from their first bytes this many at a time (a batch of requests on
# object storage; 64 kB each, so the heads of a large first run are never all in memory).
HEADS_AT_ONCE = 256


@dataclass(frozen=True, slots=True)
class Item:
    """One file of a batch: the manifest's record (provisional for a new file: no hash, and
    ``raw`` is the base name planned for its copy), its state in this run, and its size and
    modification time as listed (the record's when it is gone)."""

    record: FileRecord
    state: str
    size: int
    mtime_ns: int
    tag: str = ""

    @property
    def session_id(self) -> str:
        """The batch engine's grouping key: files of one unit are never split."""
        return f"{self.record.format}\x1f{self.record.session_id}"


@dataclass(frozen=True, slots=True)
class Context:
    """What every task of a run shares: the archive root, the run id, its staging folder, and the
    machine named in every part written."""

    root: str
    run: str
    machine: str | None = None
    shared: bool = False  # no raw copies, tables redacted (``archive.share``)
    keep_paths: bool = False
    masked: bool = False  # raw copies (and so the tables) with secrets masked (``archive.masking``)

    @property
    def staging(self) -> str:
        return f"{self.root}/{L.STAGING}/{self.run}"


@dataclass(slots=True)
class Plan:
    """The files of the units to decode again, in the engine's order, and what the listing found."""

    items: list[Item] = field(default_factory=list)
    listed: int = 0
    new: int = 0
    modified: int = 0
    same: int = 0
    kept: int = 0
    skipped: int = 0
    unreadable: list[str] = field(default_factory=list)  # "path: why" of what could not be stat'ed


def default_sources() -> list[str]:
    """Both formats' default stores that exist: the Claude Code projects folders and the
    ChainlessChain session store."""
    from cc_analytics.frames.sources import default_stores

    return [str(path) for path in default_stores() if path.is_dir()]


def source_items(sources: str | os.PathLike[str] | Sequence[str | os.PathLike[str]]) -> list[str]:
    """The sources given as one path or URL, or as several, as a list of strings."""
    if isinstance(sources, str | os.PathLike):
        return [os.fspath(sources)]
    return [os.fspath(source) for source in sources]


def listing(sources: Sources, unreadable: list[str] | None = None) -> list[tuple[Storage, Listed]]:
    """Every transcript file of the sources (files, folders, globs, URLs; the names
    ``frames.sources.name_filter`` takes), once each; what cannot be stat'ed or listed goes to
    ``unreadable`` (``path: why``)."""
    items = default_sources() if sources is None else source_items(sources)
    seen: set[str] = set()
    out: list[tuple[Storage, Listed]] = []
    wanted = name_filter()
    for source in items:
        storage = filesystem(source)
        for listed in storage.find(source if is_url(source) else os.path.expanduser(source), wanted, unreadable):
            if listed.path not in seen:
                seen.add(listed.path)
                out.append((storage, listed))
    return out


def make_plan(manifest: Manifest, sources: Sources, key: Callable[[str], str] | None = None) -> Plan:
    """Compare the listing with the manifest: the units with a new or modified file are decoded
    again, with all their files (a file no longer listed is read from its raw copy).

    ``key`` names a listed file as the manifest does (a shared archive's manifest names files by
    pseudonym, ``archive.share.file_key``); the plan's records carry the listed path."""
    plan = Plan()
    found = listing(sources, plan.unreadable)
    plan.listed = len(found)
    states: dict[str, Item] = {}
    new: list[tuple[Storage, Listed]] = []
    name = key or str
    for storage, listed in found:
        record = manifest.files.get(name(listed.path))
        if record is None:
            new.append((storage, listed))
            continue
        if record.source != listed.path:
            record = replace(record, source=listed.path)
        if (record.size, record.mtime_ns, record.tag) == (listed.size, listed.mtime_ns, listed.tag):
            states[name(listed.path)] = Item(record, SAME, listed.size, listed.mtime_ns, listed.tag)
            plan.same += 1
        else:
            states[name(listed.path)] = Item(record, MODIFIED, listed.size, listed.mtime_ns, listed.tag)
            plan.modified += 1
    taken = {record.raw for record in manifest.files.values()}
    for record, listed in _classify(new):
        if record is None:
            plan.skipped += 1
            continue
        record = _unique_raw(record, taken)
        states[name(listed.path)] = Item(record, NEW, listed.size, listed.mtime_ns, listed.tag)
        plan.new += 1
    plan.kept = len(manifest.files) - plan.same - plan.modified
    wanted: set[Unit] = {item.record.unit for item in states.values() if item.state in (NEW, MODIFIED)}
    items = [item for item in states.values() if item.record.unit in wanted]
    for records in manifest.files_of(wanted).values():
        items.extend(Item(r, GONE, r.size, r.mtime_ns, r.tag) for r in records if r.source not in states)
    items.sort(key=lambda i: (i.record.format, i.record.session_id, i.record.layout != "main", i.record.source))
    plan.items = items
    return plan


def _classify(found: list[tuple[Storage, Listed]]) -> list[tuple[FileRecord | None, Listed]]:
    """Format and session of new files from their first bytes (None: a transcript its agent
    marked deleted, or a file no format recognises, which no loader reads), :data:`HEADS_AT_ONCE`
    files at a time."""
    by_storage: dict[int, tuple[Storage, list[Listed]]] = {}
    for storage, listed in found:
        by_storage.setdefault(id(storage), (storage, []))[1].append(listed)
    out: list[tuple[FileRecord | None, Listed]] = []
    for storage, everything in by_storage.values():
        for start in range(0, len(everything), HEADS_AT_ONCE):
            out.extend(_classify_group(storage, everything[start : start + HEADS_AT_ONCE]))
    return out


def _classify_group(storage: Storage, group: list[Listed]) -> list[tuple[FileRecord | None, Listed]]:
    from cc_analytics.frames.registry import UNRECOGNIZED, get

    out: list[tuple[FileRecord | None, Listed]] = []
    heads = storage.heads([listed.path for listed in group])
    for listed, head in zip(group, heads, strict=True):
        path = _loader_path(listed.path)
        format = sniff_head(head)
        plugin = get(format)
        read = storage.read if is_url(listed.path) else _read_local
        if format == UNRECOGNIZED or plugin.deleted(listed.path, storage.exists, read):
            out.append((None, listed))
            continue
        file = plugin.classify(path, size=listed.size, head=head)
        base = L.raw_base(format, file.project_dir, file.layout, listed.path)
        record = FileRecord(
            listed.path, format, file.session_id, file.agent_id, file.layout, file.project_dir,
            listed.size, listed.mtime_ns, "", base, 0, listed.tag,
        )  # fmt: skip
        out.append((record, listed))
    return out


def _read_local(path: str) -> bytes:
    # Opened as the loaders open transcripts: a FIFO named like a meta file never blocks the run.
    return read_transcript(Path(path))


def _loader_path(source: str) -> Path:
    # The loaders classify by path components; a URL's are those after the scheme.
    return Path(source.partition("://")[2] if is_url(source) else source)


def _unique_raw(record: FileRecord, taken: set[str]) -> FileRecord:
    """Two sources whose raw copies would share a name (same project and file name in two
    roots): the later one's name gets a digest of its source."""
    base = record.raw
    if base in taken:
        stem, _, suffix = base.rpartition(".")
        digest = hashlib.sha1(record.source.encode(), usedforsecurity=False).hexdigest()[:10]
        base = f"{stem}~{digest}.{suffix}"
    taken.add(base)
    if base == record.raw:
        return record
    return replace(record, raw=base)
