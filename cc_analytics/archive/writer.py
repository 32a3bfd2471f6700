"""An archive run: lock, recover, plan, run the per-batch work on an engine, commit.

Imports: the standard library, ``frames.engine`` and the other ``archive`` modules; Polars
only when parts must be rewritten. The commit is ordered so that a process killed at any
point leaves an archive that reads as before or after the run: raw copies and parts are
written under names the manifest does not name yet (parts in ``.staging/RUN``), staged parts
are renamed into place, the manifest is written (atomically: this is the commit), then what
it no longer names is deleted and the staging folder last. A run that finds a staging folder
knows the previous one was interrupted: it deletes every file the manifest does not name
before starting, so nothing but the manifest's state is ever seen by our readers.

Readers without our code (DuckDB, Spark) see the folders, not the manifest: between the first
rename of a commit and the deletion of the parts it replaced (or, after a crash there, until
the next run), a session decoded again may show twice; never a row lost. Durability is against
killed processes: only the manifest is flushed to disk before its rename.
"""

from __future__ import annotations

import os
import secrets
import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING, Any

from cc_analytics.archive import layout as L
from cc_analytics.archive.manifest import NAME, FileRecord, Manifest, PartRecord, Unit, unreadable_manifest
from cc_analytics.archive.plan import Context, Item, Sources, make_plan, source_items
from cc_analytics.archive.storage import (
    REMOTE_HINT,
    LocalStorage,
    Storage,
    filesystem,
    is_storage_failure,
    is_url,
    normalize,
    storage_failure_text,
)
from cc_analytics.errors import InputError
from cc_analytics.frames.engine import Progress
from cc_analytics.frames.plugin import Engine, check_engine

if TYPE_CHECKING:
    from cc_analytics.archive.work import BatchResult

BATCH_BYTES = 64 * 1024 * 1024
KEEP = {L.STAGING, ".lock", NAME}


@dataclass(frozen=True, slots=True)
class Summary:
    """What a run found and did (counts of files, sessions and parts)."""

    archive: str
    listed: int
    new: int
    appended: int
    rewritten: int
    touched: int
    unchanged: int
    kept: int
    sessions: int
    parts_written: int
    parts_removed: int
    bytes_read: int
    held: tuple[str, ...] = ()  # sessions left as archived before (a raw copy they need is damaged), with why
    unreadable: tuple[str, ...] = ()  # sources that could not be stat'ed or listed (``path: why``), not archived
    machine: str | None = None  # the machine the archive holds (its manifest's)
    upgraded: int = 0  # parts of an archive written before machines were named, rewritten with the column

    @property
    def changed(self) -> bool:
        return bool(self.new or self.appended or self.rewritten or self.touched)


def update(
    sources: Sources = None,
    to: str | os.PathLike[str] = "archive",
    *,
    engine: Engine = "local",
    workers: int | None = None,
    client: Any = None,
    scheduler: str | None = None,
    on_progress: Progress | None = None,
    machine: str | None = None,
    share: bool = False,
    keep_paths: bool = False,
    mask_secrets: bool = False,
) -> Summary:
    """Bring the archive at ``to`` up to date with ``sources`` (files, folders, globs, URLs; None:
    every format's default stores).

    ``machine`` names whose history the archive keeps (default: the name its manifest has, or,
    for a new archive, the host name); it is kept in the manifest and in a ``machine`` column
    of every part. An archive written before machines were named is upgraded by the run: its
    parts are rewritten with the column. An archive of another machine is refused.

    ``share`` writes what a team's bucket should hold (``archive.share``): the tables without
    prompt, response or tool text, project paths and source files as stable pseudonyms unless
    ``keep_paths``, and no raw copy. ``mask_secrets`` masks well-known secret shapes in the raw
    copies, and so in the tables decoded from them (``archive.masking``; the ``secrets``
    extra). Both are the archive's for good: its later runs share (or mask) too.

    New files are archived; a file whose size or modification time changed is read again
    and, if its bytes changed, its session's rows are replaced; files no longer listed are
    kept with all that was derived from them. ``engine="dask"`` runs the per-batch work as
    Dask tasks on ``client`` (or a cluster at ``scheduler``, or a new ``LocalCluster`` of
    ``workers`` processes). A second concurrent run is refused with
    :class:`~cc_analytics.archive.storage.ArchiveLockedError`.

    Examples:
        >>> import tempfile, pathlib
        >>> from cc_analytics.report import SAMPLES_DIR
        >>> to = pathlib.Path(tempfile.mkdtemp()) / "archive"
        >>> first = update(SAMPLES_DIR, to)
        >>> first.new == first.listed > 0, update(SAMPLES_DIR, to).changed
        (True, False)
    """
    check_engine(engine)
    if not os.fspath(to).strip():
        msg = f"an empty archive location ({os.fspath(to)!r})\nHint: give a folder or a URL, e.g. --to ~/cc-archive."
        raise InputError(msg)
    if sources is not None:
        from cc_analytics.frames.sources import refuse_empty

        for source in source_items(sources):
            refuse_empty(source)
    if machine is not None:
        try:
            machine = L.machine_name(machine)
        except ValueError as error:
            raise InputError(f"{error}\nHint: give a name such as --machine laptop-anna.") from None
    if mask_secrets:  # the patterns, or a clear error, before anything is read
        from cc_analytics.archive.masking import MaskingUnavailableError, patterns

        try:
            patterns()
        except MaskingUnavailableError as error:
            raise InputError(str(error)) from None
    root = normalize(to)
    try:
        modes = (share, keep_paths, mask_secrets)
        return _update(sources, root, engine, workers, client, scheduler, on_progress, machine, modes)
    except Exception as error:
        if not is_storage_failure(error):
            raise
        remote = is_url(root) or _any_url(sources)
        where, hint = (
            ("object storage", REMOTE_HINT) if remote else ("the file system", "fix the cause (space, permissions)")
        )
        msg = (
            f"the archive run on {root!r} stopped: {where} failed: {storage_failure_text(error)}\n"
            f"Hint: {hint}, and run again; the archive reads as before this run (or after it, when the "
            "failure came once it was committed), and the next run completes it."
        )
        raise InputError(msg) from error


def _any_url(sources: Sources) -> bool:
    if sources is None:
        return False
    return any(is_url(item) for item in source_items(sources))


def _update(
    sources: Sources,
    root: str,
    engine: Engine,
    workers: int | None,
    client: Any,
    scheduler: str | None,
    on_progress: Progress | None,
    machine: str | None = None,
    modes: tuple[bool, bool, bool] = (False, False, False),
) -> Summary:
    storage = filesystem(root)
    _refuse_stores(root)
    _load(storage, root)  # refuse a folder that is not an archive before leaving a lock file in it
    with storage.lock(root):
        manifest = _load(storage, root)
        if storage.exists(f"{root}/{L.STAGING}"):
            recover(storage, root, manifest)
        owner = _machine(root, manifest, machine)
        shared, keep_paths, masked = _modes(root, manifest, *modes)
        upgrade = sorted(manifest.parts) if manifest.machine is None else []  # written before machines
        if shared and not keep_paths:
            from cc_analytics.archive.share import file_key

            plan = make_plan(manifest, sources, key=file_key)
        else:
            plan = make_plan(manifest, sources)
        summary: dict[str, Any] = dict(
            listed=plan.listed, new=0, appended=0, rewritten=0, touched=0, unchanged=plan.same,
            kept=plan.kept, sessions=0, parts_written=0, parts_removed=0, bytes_read=0,
            unreadable=tuple(plan.unreadable), machine=manifest.machine or (owner if plan.items else None),
        )  # fmt: skip
        if not plan.items and not upgrade:
            return Summary(root, **summary)
        from cc_analytics.archive.work import archive_batch

        run = time.strftime("%Y%m%dT%H%M%S") + "-" + secrets.token_hex(3)
        context = Context(root, run, owner, shared, keep_paths, masked)
        work = partial(archive_batch, context=context)
        if not plan.items:
            results: Iterable[BatchResult] = []
        elif engine == "dask":
            from cc_analytics.archive.cluster import run_batches_dask

            results = run_batches_dask(
                work, plan.items, client=client, scheduler=scheduler, workers=workers,
                on_progress=on_progress, batch_bytes=BATCH_BYTES,
            )  # fmt: skip
        else:
            from cc_analytics.frames.engine import run_batches

            results = run_batches(work, plan.items, workers=workers, on_progress=on_progress, batch_bytes=BATCH_BYTES)
        records: list[FileRecord] = []
        decoded: set[Unit] = set()
        staged: list[PartRecord] = []
        held: list[str] = []
        for result in results:
            records.extend(result.records)
            decoded.update(result.units)
            staged.extend(result.parts)
            held.extend(result.held)
            for name, count in result.counts:
                summary[name] += count
        summary["sessions"] = len(decoded)
        summary["held"] = tuple(held)
        holding = manifest.units_of_parts()
        superseded = sorted({path for unit in decoded for path in holding.get(unit, [])} | set(upgrade))
        staged.extend(_without_units(storage, context, manifest, superseded, decoded, records, plan.items))
        gone = set(superseded)
        kept_parts = {p: r for p, r in manifest.parts.items() if p not in gone}
        after = Manifest(dict(manifest.files), kept_parts, owner, shared, keep_paths, masked)
        for record in records:
            if shared:  # no copy; named by pseudonym unless the paths are kept (archive.share)
                record = _shared_record(record, keep_paths)
            after.files[record.source] = record
        for part in staged:
            after.parts[part.path] = part
        replaced_raw = [
            old.copy
            for record in records
            if (old := manifest.files.get(record.source)) is not None and old.generation != record.generation
        ]
        commit(storage, context, after, staged, [*superseded, *replaced_raw])
        summary["parts_written"] = len(staged)
        summary["parts_removed"] = len(superseded)
        summary["machine"] = owner
        summary["upgraded"] = len(upgrade)
        return Summary(root, **summary)


def _modes(root: str, manifest: Manifest, share: bool, keep_paths: bool, mask: bool) -> tuple[bool, bool, bool]:
    """Shared, paths kept, masked: what was asked, checked against what the archive is (its
    manifest's say for good; an archive that holds raw copies or unmasked ones is not turned
    into a shared or masked one)."""
    if keep_paths and not share and not manifest.shared:
        raise InputError("--keep-paths applies to --share\nHint: add --share, or leave out --keep-paths.")
    if mask and (share or manifest.shared):
        raise InputError("--mask-secrets masks raw copies, which a shared archive does not keep\nHint: leave it out.")
    used = bool(manifest.files or manifest.parts)
    if share and used and not manifest.shared:
        msg = (
            f"the archive at {root!r} keeps raw copies and texts: it cannot become a shared one\n"
            "Hint: write the shared archive to a location of its own (e.g. --to s3://team-archive/NAME --share)."
        )
        raise InputError(msg)
    if manifest.shared and share and keep_paths != manifest.keep_paths:
        msg = (
            f"the shared archive at {root!r} was written {'with' if manifest.keep_paths else 'without'} --keep-paths\n"
            "Hint: give the same options as its first run, or write to a new location."
        )
        raise InputError(msg)
    if mask and used and not manifest.masked:
        msg = (
            f"the archive at {root!r} holds raw copies written without --mask-secrets\n"
            "Hint: archive to a new location with --mask-secrets (its copies are all masked then)."
        )
        raise InputError(msg)
    if manifest.shared:
        return True, manifest.keep_paths, False
    if share:
        return True, keep_paths, False
    return False, False, mask or manifest.masked


def _shared_record(record: FileRecord, keep_paths: bool) -> FileRecord:
    """A file's record as a shared archive's manifest keeps it (no copy; pseudonyms unless ``keep_paths``)."""
    from dataclasses import replace

    if keep_paths:
        return replace(record, raw="", sha1="")
    from cc_analytics.archive.share import file_key, pseudonym

    return replace(
        record, source=file_key(record.source), project_dir=pseudonym("project", record.project_dir), raw="", sha1=""
    )


def _machine(root: str, manifest: Manifest, given: str | None) -> str:
    """The machine of the run: the manifest's (another one given is refused), else the one
    given, else the host name."""
    if manifest.machine is None:
        return given or L.default_machine()
    if given is not None and given != manifest.machine:
        msg = (
            f"the archive at {root!r} holds the history of machine {manifest.machine!r}, not {given!r}\n"
            f"Hint: archive each machine to an archive of its own (e.g. --to …/{given}), and read them "
            f"together; or leave out --machine (or give --machine {manifest.machine!r}) to update this one."
        )
        raise InputError(msg)
    return manifest.machine


def commit(storage: Storage, context: Context, after: Manifest, staged: list[PartRecord], obsolete: list[str]) -> None:
    """Staged parts into place, the manifest (the commit point), then the obsolete files and the staging folder."""
    root = context.root
    storage.rename_many([(f"{context.staging}/{part.path}", f"{root}/{part.path}") for part in staged])
    write_manifest(storage, root, after)
    storage.remove_many([f"{root}/{path}" for path in obsolete])
    storage.remove_tree(f"{root}/{L.STAGING}")


def recover(storage: Storage, root: str, manifest: Manifest) -> int:
    """After an interrupted run: delete every file the manifest does not name (and the staging
    folder, and a manifest left half-written)."""
    storage.remove_tree(f"{root}/{L.STAGING}")
    named = {f"{root}/{path}" for path in manifest.referenced()}
    stray = [
        path
        for folder in [*L.TABLE_NAMES, L.RAW]
        for path in storage.files_under(f"{root}/{folder}")
        if path not in named
    ]
    # a manifest half-written beside its name when the run was killed (the writer holds the lock:
    # no other run is writing one)
    stray += [
        f"{root}/{name}" for name in storage.names(root) if name.startswith(f".{NAME}.") and name.endswith(".tmp")
    ]
    storage.remove_many(stray)
    return len(stray)


def read_manifest(storage: Storage, root: str) -> Manifest | None:
    """The manifest of the archive at ``root``, or None when there is none."""
    try:
        data = storage.read(f"{root}/{NAME}")
    except FileNotFoundError:
        return None
    return Manifest.from_json(data)


def write_manifest(storage: Storage, root: str, manifest: Manifest) -> None:
    data = manifest.to_json()
    if isinstance(storage, LocalStorage):
        storage.write_durably(f"{root}/{NAME}", data)
    else:
        storage.write(f"{root}/{NAME}", data)


def _load(storage: Storage, root: str) -> Manifest:
    """The archive's manifest (empty for a new or empty folder); an :class:`InputError` for
    anything else at ``root``."""
    try:
        manifest = read_manifest(storage, root)
        others = [] if manifest is not None else sorted(set(storage.names(root)) - KEEP)
    except ValueError as error:
        raise unreadable_manifest(root, error, "a new or empty folder") from None
    except NotADirectoryError:
        msg = f"{root!r} is not a folder (it, or a folder on its path, is a file)\nHint: give a new or empty folder, or an existing archive."
        raise InputError(msg) from None
    except OSError as error:
        msg = f"cannot read {root!r}: {error.strerror or error}\nHint: check the path and its permissions."
        raise InputError(msg) from None
    if manifest is not None:
        return manifest
    if others:
        msg = (
            f"{root!r} is not an archive and not empty (it holds {others[0]!r})\n"
            "Hint: give a new or empty folder, or an existing archive."
        )
        raise InputError(msg)
    return Manifest()


def _without_units(
    storage: Storage,
    context: Context,
    manifest: Manifest,
    superseded: list[str],
    decoded: set[Unit],
    records: list[FileRecord],
    items: list[Item],
) -> Iterator[PartRecord]:
    """The superseded parts written again without the rows of the units decoded anew."""
    if not superseded:
        return
    import polars as pl

    from cc_analytics.archive.read import read_part
    from cc_analytics.archive.work import parquet_bytes

    sources = {item.record.source for item in items if item.record.unit in decoded}
    sources.update(record.source for record in records)
    if context.shared and not context.keep_paths:  # its parts name files by pseudonym
        from cc_analytics.archive.share import file_key

        sources = {file_key(source) for source in sources}
    for path in superseded:
        part = manifest.parts[path]
        keep_units = tuple(unit for unit in part.units if unit not in decoded)
        if not keep_units:
            continue
        table = L.table(part.table)
        frame = read_part(storage, f"{context.root}/{path}")
        if L.MACHINE not in frame.columns:  # a part written before machines were named
            frame = frame.with_columns(pl.lit(context.machine, pl.String).alias(L.MACHINE))
        if table.key == "session_id":
            dropped = {session for format, session in decoded if format == part.units[0][0]}
            frame = frame.filter(~pl.col("session_id").is_in(list(dropped)))
        else:
            frame = frame.filter(~pl.col("source_file").is_in(list(sources)))
        folder, _, name = path.rpartition("/")
        tag = name.removeprefix("part-").removesuffix(".parquet")
        new_path = f"{folder}/part-{context.run}-r{_short(tag)}.parquet"
        storage.write(f"{context.staging}/{new_path}", parquet_bytes(frame))
        yield PartRecord(new_path, part.table, frame.height, keep_units)


def _short(text: str) -> str:
    import hashlib

    return hashlib.sha1(text.encode(), usedforsecurity=False).hexdigest()[:12]


def _refuse_stores(root: str) -> None:
    """Nothing is ever written inside an agent's own folders (every format's protected roots)."""
    if is_url(root):
        return
    from pathlib import Path

    from cc_analytics.frames.sources import protected_roots

    target = Path(root).resolve()
    for forbidden in protected_roots():
        folder = forbidden.expanduser().resolve()
        if target == folder or folder in target.parents:
            msg = f"refusing to write an archive inside {str(folder)!r}\nHint: archive to a folder of your own."
            raise InputError(msg)
