"""The archive's manifest: what each source file was when last read, and which Parquet parts hold which sessions.

Imports: orjson and the standard library. The manifest is one JSON document,
``manifest.json`` at the archive's root, written last by a run (atomically): it *is* the
archive's state. A part or raw copy it does not name is left over from an interrupted run
and is removed by the next one.

A *unit* is what is decoded together and replaced together: the files of one session of
one format (a Claude Code session's main file and its subagent files), keyed
``(format, session_id)``.
"""

from __future__ import annotations

import gc
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import orjson

from cc_analytics.archive.layout import raw_path
from cc_analytics.errors import InputError

NAME = "manifest.json"
KIND = "cc-analytics-archive"
VERSION = 2  # 2: the machine the archive holds (a ``machine`` column in every part); 1 read and upgraded
READABLE = (1, 2)

Unit = tuple[str, str]


@dataclass(frozen=True, slots=True)
class FileRecord:
    """A source file as the archive last read it.

    ``source``: its path (absolute) or URL, as ``source_file`` columns spell it; the
    classification the loaders gave it (``format``, ``session_id``, ``agent_id``,
    ``layout``, ``project_dir``); ``size`` and ``mtime_ns`` of the bytes read; ``raw``: its
    compressed copy, relative to the archive root, before the generation and ``.zst``;
    ``sha1``: the SHA-1 of that copy as stored (a rerun compares a changed file with the
    copy itself, byte for byte, so no hash of the source is needed; archives written before
    hold the source's hash here, which nothing reads); ``generation``: how many times the
    raw copy was replaced (each version has its own name, so a replacement never overwrites
    what the manifest still names); ``tag``: the object's version tag on object storage
    (ETag), compared with size and mtime.
    """

    source: str
    format: str
    session_id: str
    agent_id: str | None
    layout: str
    project_dir: str
    size: int
    mtime_ns: int
    sha1: str
    raw: str
    generation: int = 0
    tag: str = ""

    @property
    def unit(self) -> Unit:
        return (self.format, self.session_id)

    @property
    def copy(self) -> str:
        """The raw copy's path relative to the root (``layout.raw_path`` of this generation)."""
        return raw_path(self.raw, self.generation)

    def touched(self, mtime_ns: int, tag: str) -> FileRecord:
        return replace(self, mtime_ns=mtime_ns, tag=tag)


@dataclass(frozen=True, slots=True)
class PartRecord:
    """A Parquet file of one table: its path relative to the root, row count and units."""

    path: str
    table: str
    rows: int
    units: tuple[Unit, ...]


@dataclass(slots=True)
class Manifest:
    """Files by source, parts by path, and the machine whose history the archive holds (None:
    written before machines were named; the next run names it and upgrades the parts)."""

    files: dict[str, FileRecord] = field(default_factory=dict)
    parts: dict[str, PartRecord] = field(default_factory=dict)
    machine: str | None = None
    shared: bool = False  # written with --share: no text, no raw copy; files named by pseudonym (archive.share)
    keep_paths: bool = False  # shared with --keep-paths: files and projects by their paths
    masked: bool = False  # raw copies written with --mask-secrets (archive.masking), every one of them

    def units_of_parts(self) -> dict[Unit, list[str]]:
        """Which parts hold rows of each unit."""
        out: dict[Unit, list[str]] = {}
        for part in self.parts.values():
            for unit in part.units:
                out.setdefault(unit, []).append(part.path)
        return out

    def files_of(self, units: Iterable[Unit]) -> dict[Unit, list[FileRecord]]:
        wanted = set(units)
        out: dict[Unit, list[FileRecord]] = {unit: [] for unit in wanted}
        for record in self.files.values():
            if record.unit in wanted:
                out[record.unit].append(record)
        return out

    def referenced(self) -> set[str]:
        """Every path (relative to the root) the manifest names."""
        return {p.path for p in self.parts.values()} | {f.copy for f in self.files.values()}

    def to_json(self) -> bytes:
        # orjson writes (slotted) dataclasses itself, much faster than dataclasses.asdict.
        document = {
            "kind": KIND,
            "version": VERSION,
            "machine": self.machine,
            "shared": self.shared,
            "keep_paths": self.keep_paths,
            "masked": self.masked,
            "files": sorted(self.files.values(), key=lambda r: r.source),
            "parts": sorted(self.parts.values(), key=lambda p: p.path),
        }
        return orjson.dumps(document)

    @classmethod
    def from_json(cls, data: bytes) -> Manifest:
        # A manifest is some ten objects per source file, none in a cycle: the garbage collector's
        # passes while they are made find nothing, and cost as much as the parsing once a reader
        # holds other archives' manifests (a team's bucket), so it waits until they are made.
        paused = gc.isenabled()
        gc.disable()
        try:
            return cls._from_json(data)
        finally:
            if paused:
                gc.enable()

    @classmethod
    def _from_json(cls, data: bytes) -> Manifest:
        document = orjson.loads(data)
        if isinstance(document, dict) and document.get("kind") == KIND:
            _refuse_newer(document.get("version"))
        if not is_manifest(document):
            msg = f"its kind or version is not {KIND!r} {VERSION}"
            raise ValueError(msg)
        try:
            files = {item["source"]: FileRecord(**item) for item in document["files"]}
            parts = {
                item["path"]: PartRecord(
                    item["path"], item["table"], item["rows"], tuple((u[0], u[1]) for u in item["units"])
                )
                for item in document["parts"]
            }
            machine = document.get("machine")
            if machine is not None and not isinstance(machine, str):
                raise TypeError(f"machine is {machine!r}")
        except (KeyError, TypeError, IndexError) as error:
            msg = f"a record is damaged: {type(error).__name__}: {error}"
            raise ValueError(msg) from None
        flags = [bool(document.get(name, False)) for name in ("shared", "keep_paths", "masked")]
        return cls(files, parts, machine, *flags)


def unreadable_manifest(root: str, error: Exception, otherwise: str) -> InputError:
    """The error for a folder whose manifest cannot be read; ``otherwise`` says what to give instead
    (an :class:`InputError` already, one of a newer version, is that error)."""
    if isinstance(error, InputError):
        return error
    return InputError(
        f"{root!r} holds a {NAME} that is not a readable archive manifest ({error})\n"
        f"Hint: if this is an archive, restore its manifest from a backup; otherwise give {otherwise}."
    )


def is_manifest(document: object) -> bool:
    return isinstance(document, dict) and document.get("kind") == KIND and document.get("version") in READABLE


def _refuse_newer(version: object) -> None:
    """An archive written by a later cc-analytics: an :class:`InputError` that says to upgrade."""
    if isinstance(version, int) and version > VERSION:
        msg = (
            f"the archive was written by a newer cc-analytics (archive version {version}; this one reads "
            f"up to {VERSION})\nHint: upgrade cc-analytics (pip install -U cc-analytics) to read or update it."
        )
        raise InputError(msg)
