"""Where OpenCode keeps its sessions, which unit of work each is, and reading their records.

Imports: the standard library, ``errors`` and ``frames.sources`` (no Polars: the plugin uses
this module to sniff and plan). OpenCode keeps its data in ``$XDG_DATA_HOME/opencode``
(default ``~/.local/share/opencode``), in one of two layouts:

* the SQLite database ``opencode.db`` of recent versions: tables ``session`` (one row per
  session, ``parent_id`` set for a sub-task's), ``message`` (``data``: the message as JSON)
  and ``part`` (``data``: one part of a message as JSON);
* the older JSON file storage under ``storage/``: ``session/<project>/<id>.json``,
  ``message/<session>/<id>.json`` and ``part/<message>/<id>.json``.

A unit of work is one session: a :class:`TranscriptFile` whose ``path`` is the database (every
session of it shares that path) or the session's own JSON file. A sub-task session (a parent
id) is an agent file of its parent's session, as a Claude Code subagent transcript is: its
requests count once, as the sub-task's (``agent_id`` = its own id). A session found both in
the database and in the JSON storage (OpenCode copies the storage into the database when it
migrates, and leaves the files) is read from the database only.

The database is opened with SQLite's URI read-only mode (``mode=ro``): nothing is written and
no lock is held beyond the read transaction that takes a batch's rows at once (in WAL mode,
which OpenCode uses, readers never block its writes). A WAL database without its ``-wal``
file (OpenCode is not running) is opened ``immutable``, so that no ``-shm``/``-wal`` file is
left beside it. A database without the tables and
columns read here (an older schema) is refused: one problem row that names its version.
"""

from __future__ import annotations

import json
import os
import re
import sqlite3
from collections.abc import Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, NamedTuple
from urllib.parse import quote

from cc_analytics.frames.sources import (
    SNIFF_BYTES,
    Source,
    TranscriptFile,
    expand,
    read_transcript,
    shown,
    source_list,
)

DATA_ENV = "XDG_DATA_HOME"
DB_NAME = "opencode.db"
STORAGE = "storage"
MAGIC = b"SQLite format 3\x00"
BUNDLE_HEADER = b'{"opencode_bundle":1}\n'
MAIN = "main"
AGENT_FILE = "agent-file"
WHOLE_STORE = "*"
"""The ``session_id`` of a unit that stands for every session of a database (the archive
keeps and decodes a database whole)."""
REQUIRED: dict[str, tuple[str, ...]] = {
    "session": ("id", "parent_id", "project_id", "directory", "time_created"),
    "message": ("id", "session_id", "time_created", "data"),
    "part": ("id", "message_id", "session_id", "data"),
}
_TABLE = re.compile(rb'CREATE TABLE\s+(?:IF NOT EXISTS\s+)?[`"\[]?(session|message|part)[`"\]]?\s*\(', re.IGNORECASE)
SESSION_KEYS = ("id", "projectID", "time")
IN_CHUNK = 500  # ids per ``IN (...)`` list (SQLite allows 999 parameters by default)


class Record(NamedTuple):
    """One stored record: a session, a message or a part, as OpenCode wrote it.

    ``source`` is where it came from (the database, or its JSON file), ``session``/``message``
    the ids it belongs to (``message`` None for sessions and messages), ``text`` its JSON."""

    kind: str
    source: str
    id: str
    session: str
    message: str | None
    time: int | None
    text: str


class Refused(Exception):
    """A database this version does not read (an older schema); the message names its version."""


def data_dir() -> Path:
    """``$XDG_DATA_HOME/opencode`` when the variable is set and not blank, else ``~/.local/share/opencode``.

    Examples:
        >>> import os
        >>> os.environ["XDG_DATA_HOME"] = "/tmp/xdg"
        >>> str(data_dir())
        '/tmp/xdg/opencode'
        >>> del os.environ["XDG_DATA_HOME"]
    """
    base = os.environ.get(DATA_ENV, "").strip()
    if base:
        return Path(base).expanduser() / "opencode"
    return Path(os.environ.get("HOME") or Path.home()) / ".local" / "share" / "opencode"


def default_stores() -> list[Path]:
    """OpenCode's data folder (its database and its JSON storage), existing or not."""
    return [data_dir()]


# -- telling files apart ---------------------------------------------------------------------


def is_database_head(head: bytes) -> bool:
    """Whether ``head`` is the start of a SQLite database whose schema (on its first pages)
    creates OpenCode's ``session`` and ``message`` tables (``part`` too, in the schema read
    here; a database without it is OpenCode's still, of an older schema, refused when read).

    Examples:
        >>> is_database_head(b"SQLite format 3\\x00" + b"CREATE TABLE `session` (CREATE TABLE `message` (CREATE TABLE `part` (")
        True
        >>> is_database_head(b"SQLite format 3\\x00CREATE TABLE `session` (")
        False
    """
    if not head.startswith(MAGIC):
        return False
    return {match.group(1).lower() for match in _TABLE.finditer(head)} >= {b"session", b"message"}


def is_session_object(value: Any) -> bool:
    """Whether a JSON value is a session as OpenCode's JSON storage writes it.

    Examples:
        >>> is_session_object({"id": "ses_1", "projectID": "p", "directory": "/w", "time": {"created": 1}})
        True
        >>> is_session_object({"id": "x", "type": "user"})
        False
    """
    return (
        isinstance(value, Mapping)
        and isinstance(value.get("id"), str)
        and isinstance(value.get("projectID"), str)
        and isinstance(value.get("time"), dict)
        and "type" not in value
    )


def session_of_head(head: bytes) -> dict[str, Any] | None:
    """The session object a JSON storage file's first bytes hold (whole), else None."""
    if not head.lstrip()[:1] == b"{":
        return None
    try:
        value = json.loads(head)
    except ValueError:
        first = head.split(b"\n", 1)[0]
        try:
            value = json.loads(first)
        except ValueError:
            return None
    return value if is_session_object(value) else None


# -- units -----------------------------------------------------------------------------------


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def _safe(identifier: str | None) -> bool:
    from cc_analytics.frames.plugin import is_safe_id

    return identifier is not None and is_safe_id(identifier)


def unit(path: Path, own: str, parent: str | None, project: str, size: int) -> TranscriptFile:
    """A session's unit: the main file of its own session, or an agent file of its parent's."""
    if parent and _safe(parent) and parent != own:
        return TranscriptFile(path, shown(parent), shown(own), AGENT_FILE, shown(project), size)
    return TranscriptFile(path, shown(own), None, MAIN, shown(project), size)


def classify(path: Path, *, size: int, head: bytes) -> TranscriptFile:
    """One file's unit, from its path, size and first bytes: a database stands for all its
    sessions (``session_id`` :data:`WHOLE_STORE`: the archive keeps it whole), a JSON storage
    session file for its session.

    Examples:
        >>> classify(Path("s/proj/ses_b.json"), size=9, head=b'{"id":"ses_b","projectID":"proj","parentID":"ses_a","time":{}}')
        TranscriptFile(path=PosixPath('s/proj/ses_b.json'), session_id='ses_a', agent_id='ses_b', layout='agent-file', project_dir='proj', size=9)
    """
    if head.startswith(MAGIC):
        return TranscriptFile(path, WHOLE_STORE, None, MAIN, shown(path.parent.name), size)
    session = session_of_head(head) or {}
    own = _text(session.get("id"))
    own = own if own is not None and _safe(own) else path.stem
    project = _text(session.get("projectID")) or path.parent.name
    return unit(path, own, _text(session.get("parentID")), project, size)


def connect(path: Path) -> sqlite3.Connection:
    """The database at ``path`` opened read-only (SQLite URI ``mode=ro``): no write, and locks
    only while a read transaction runs."""
    uri = f"file:{quote(os.path.abspath(path))}?mode=ro"
    if _wal_format(path) and not os.path.exists(f"{path}-wal"):
        # No writer has it open (OpenCode removes its WAL when it closes): read it as it is,
        # without making the -shm and -wal files a read-only WAL reader would otherwise leave.
        uri += "&immutable=1"
    connection = sqlite3.connect(uri, uri=True, timeout=5.0, check_same_thread=False)
    connection.execute("PRAGMA query_only = ON")
    return connection


def _wal_format(path: Path) -> bool:
    try:
        with open(path, "rb") as handle:
            header = handle.read(20)
    except OSError:
        return False
    return len(header) == 20 and header[18] == 2


def from_bytes(data: bytes) -> sqlite3.Connection:
    """A database held in memory from its bytes (an archived snapshot)."""
    connection = sqlite3.connect(":memory:", check_same_thread=False)
    connection.deserialize(data)
    connection.execute("PRAGMA query_only = ON")
    return connection


def schema_version(connection: sqlite3.Connection) -> str:
    """The version a database's schema is at, as its own records tell: the OpenCode version
    of its newest session, the migrations applied and SQLite's ``user_version``."""
    said: list[str] = []
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "session" in tables:
        try:
            row = connection.execute("SELECT version FROM session ORDER BY time_created DESC LIMIT 1").fetchone()
            if row and row[0]:
                said.append(f"OpenCode {row[0]}")
        except sqlite3.Error:
            pass
    if "__drizzle_migrations" in tables:
        count = connection.execute("SELECT count(*) FROM __drizzle_migrations").fetchone()[0]
        said.append(f"{count} migrations applied")
    said.append(f"user_version {connection.execute('PRAGMA user_version').fetchone()[0]}")
    return ", ".join(said)


def check_schema(connection: sqlite3.Connection, where: str) -> None:
    """Raise :class:`Refused` (naming the database's version) unless it has the tables and
    columns read here."""
    missing: list[str] = []
    for table, columns in REQUIRED.items():
        present = {row[1] for row in connection.execute(f"PRAGMA table_info({table})")}
        if not present:
            missing.append(f"table {table!r}")
        else:
            missing.extend(f"{table}.{column}" for column in columns if column not in present)
    if missing:
        msg = (
            f"OpenCode database of an older schema ({schema_version(connection)}): no {', '.join(missing)}; "
            "not read. Hint: open it once with a current OpenCode, which migrates it"
        )
        raise Refused(msg)


def database_units(path: Path) -> list[TranscriptFile]:
    """One unit per session of the database at ``path`` (a refused or unreadable one: a single
    unit that stands for the whole store, whose decode reports why)."""
    try:
        connection = connect(path)
    except sqlite3.Error:
        return [TranscriptFile(path, WHOLE_STORE, None, MAIN, shown(path.parent.name), 0)]
    try:
        check_schema(connection, str(path))
        rows = connection.execute(
            "SELECT s.id, s.parent_id, s.project_id, coalesce(m.bytes, 0) FROM session AS s "
            "LEFT JOIN (SELECT session_id, sum(length(data)) AS bytes FROM message GROUP BY session_id) AS m "
            "ON m.session_id = s.id ORDER BY s.id"
        ).fetchall()
    except (sqlite3.Error, Refused):
        return [TranscriptFile(path, WHOLE_STORE, None, MAIN, shown(path.parent.name), 0)]
    finally:
        connection.close()
    # A message row is about a fifth of what a session holds (its parts are the rest).
    return [unit(path, own, parent, project or "", int(size) * 5) for own, parent, project, size in rows if _safe(own)]


def storage_units(root: Path) -> list[TranscriptFile]:
    """The sessions of a JSON storage folder (``storage/``: its ``session/<project>/*.json``)."""
    folder = root / "session"
    out: list[TranscriptFile] = []
    try:
        projects = sorted(
            (entry for entry in os.scandir(folder) if entry.is_dir(follow_symlinks=False)), key=lambda entry: entry.name
        )
    except OSError:
        return out
    for project in projects:
        try:
            names = sorted(entry.name for entry in os.scandir(project.path) if entry.name.endswith(".json"))
        except OSError:
            continue
        out.extend(session_file(Path(project.path) / name) for name in names)
    return out


def session_file(path: Path) -> TranscriptFile:
    """The unit of one JSON storage session file (weighed with its messages' folder)."""
    try:
        head = read_transcript(path, SNIFF_BYTES)
    except OSError:
        head = b""
    file = classify(path, size=0, head=head)
    return file._replace(size=_storage_size(path, file.agent_id or file.session_id))


def _storage_size(path: Path, own: str) -> int:
    messages = storage_root(path) / "message" / own
    try:
        return sum(entry.stat().st_size for entry in os.scandir(messages)) * 5
    except OSError:
        return 1


def storage_root(session_path: Path) -> Path:
    """The ``storage/`` folder of a session file (``storage/session/<project>/<id>.json``)."""
    return session_path.parent.parent.parent


def home_units(home: Path) -> list[TranscriptFile]:
    """The sessions of an OpenCode data folder: its database's, then its JSON storage's."""
    units: list[TranscriptFile] = []
    database = home / DB_NAME
    if database.is_file():
        units.extend(database_units(database))
    if (home / STORAGE / "session").is_dir():
        units.extend(storage_units(home / STORAGE))
    elif (home / "session").is_dir() and (home / "message").is_dir():
        units.extend(storage_units(home))
    return units


def is_home(folder: Path) -> bool:
    """Whether a folder is an OpenCode data folder or a JSON storage folder."""
    return (
        (folder / DB_NAME).is_file()
        or (folder / STORAGE / "session").is_dir()
        or ((folder / "session").is_dir() and (folder / "message").is_dir())
    )


def _head(path: Path) -> bytes:
    try:
        return read_transcript(path, SNIFF_BYTES)
    except OSError:
        return b""


def path_units(path: Path) -> list[TranscriptFile]:
    """The units of one file told apart as OpenCode's: a database's sessions, or a session file's."""
    head = _head(path)
    if head.startswith(MAGIC):
        return database_units(path)
    return [session_file(path)]


def ordered(files: Iterable[TranscriptFile]) -> list[TranscriptFile]:
    """Units grouped by session (the batch engine never splits a run of one), the main one
    first; a session both in a database and in JSON storage kept from the database only."""
    seen: set[str] = set()
    out: list[TranscriptFile] = []
    ranked = sorted(files, key=lambda f: (not str(f.path).endswith(".db"), str(f.path)))
    for file in ranked:
        key = f"{file.path.parent if file.path.suffix == '.json' else file.path}\0{file.agent_id or file.session_id}"
        own = file.agent_id or file.session_id
        if own in seen and file.session_id != WHOLE_STORE and file.path.suffix == ".json":
            continue
        if key in seen:
            continue
        seen.update((key, own))
        out.append(file)
    return sorted(out, key=lambda f: (f.session_id, f.is_subagent, str(f.path), f.agent_id or ""))


def resolve(source: Source = None, *, planned: bool = False) -> list[TranscriptFile]:
    """The sessions of a database, a session file, a folder (an OpenCode data folder, its
    ``storage``, or any folder searched for both), TranscriptFiles, or a list of these; None:
    the default store.

    ``planned``: ``source`` is a list of paths already expanded and told apart.

    Examples:
        >>> resolve([])
        []
    """
    if source is None:
        return ordered(unit for home in default_stores() for unit in home_units(home))
    if planned:
        return ordered(unit for path in source for unit in path_units(Path(path)))  # type: ignore[union-attr, arg-type]
    files: list[TranscriptFile] = []
    for item in source_list(source):
        if isinstance(item, TranscriptFile):
            files.append(item)
            continue
        text = os.path.expanduser(os.fspath(item))
        if os.path.isdir(text) and is_home(Path(text)):
            files.extend(home_units(Path(text)))
            continue
        for path in expand(item):
            head = _head(path)
            if is_database_head(head) or session_of_head(head) is not None:
                files.extend(path_units(path))
    return ordered(files)


def find_session(session_id: str, stores: Sequence[Path] | None = None) -> list[TranscriptFile]:
    """The units of session ``session_id`` in the data folders ``stores`` that exist (None:
    the default store): its own and its sub-tasks'.

    Examples:
        >>> find_session("ses_1", [Path("/no/such/folder")])
        []
    """
    homes = [home for home in stores or default_stores() if home.is_dir()]
    return [f for f in ordered(unit for home in homes for unit in home_units(home)) if f.session_id == session_id]


def latest_session(stores: Sequence[Path] | None = None) -> tuple[float, str] | None:
    """(time of its last update, id) of the main session updated last, if any."""
    newest: tuple[float, str] | None = None
    for home in stores or default_stores():
        database = home / DB_NAME
        if database.is_file():
            try:
                connection = connect(database)
                try:
                    row = connection.execute(
                        "SELECT time_updated, id FROM session WHERE parent_id IS NULL OR parent_id = '' "
                        "ORDER BY time_updated DESC LIMIT 1"
                    ).fetchone()
                finally:
                    connection.close()
            except sqlite3.Error:
                row = None
            if row is not None:
                stamp = (row[0] / 1000.0, row[1])
                newest = stamp if newest is None or stamp > newest else newest
        for file in storage_units(home / STORAGE) if (home / STORAGE).is_dir() else []:
            if file.is_subagent:
                continue
            try:
                stamp = (file.path.stat().st_mtime, file.session_id)
            except OSError:
                continue
            newest = stamp if newest is None or stamp > newest else newest
    return newest


# -- records ---------------------------------------------------------------------------------


def database_records(
    connection: sqlite3.Connection, source: str, sessions: Sequence[str] | None, *, parts: bool = True
) -> list[Record]:
    """Every record of ``sessions`` (None: of every session) in one read transaction; without
    ``parts``, the sessions and messages only (what requests need)."""
    out: list[Record] = []
    connection.execute("BEGIN")
    try:
        chunks: Iterator[Sequence[str] | None] = (
            iter([None])
            if sessions is None
            else (sessions[i : i + IN_CHUNK] for i in range(0, len(sessions), IN_CHUNK))
        )
        for chunk in chunks:
            where = "" if chunk is None else f" WHERE {{}} IN ({','.join('?' * len(chunk))})"
            args = () if chunk is None else tuple(chunk)
            for row in connection.execute(_session_query() + where.format("id") + " ORDER BY id", args):
                out.append(Record("session", source, row[0], row[0], None, row[1], row[2]))
            for row in connection.execute(
                "SELECT id, session_id, time_created, data FROM message" + where.format("session_id") + " ORDER BY id",
                args,
            ):
                out.append(Record("message", source, row[0], row[1], None, row[2], row[3]))
            if not parts:
                continue
            for row in connection.execute(
                "SELECT id, session_id, message_id, data FROM part" + where.format("session_id") + " ORDER BY id", args
            ):
                out.append(Record("part", source, row[0], row[1], row[2], None, row[3]))
    finally:
        connection.execute("COMMIT")
    return out


def _session_query() -> str:
    # The session row as the JSON object the JSON storage writes (the keys the decoder reads).
    return (
        "SELECT id, time_created, json_object('id', id, 'projectID', project_id, 'parentID', parent_id, "
        "'directory', directory, 'title', title, 'version', version, "
        "'time', json_object('created', time_created, 'updated', time_updated)) FROM session"
    )


def storage_records(session_path: Path, own: str, data: bytes | None = None, *, parts: bool = True) -> list[Record]:
    """The records of one JSON storage session: its file (``data``: its bytes, when read), its
    messages' and (``parts``) their parts' files (a file that cannot be read is a record with
    empty text)."""
    root = storage_root(session_path)
    if data is None:
        data = _read(session_path)
    out = [Record("session", str(session_path), own, own, None, None, data.decode("utf-8", "replace"))]
    for message_path in _json_files(root / "message" / own):
        text = _read(message_path).decode("utf-8", "replace")
        message_id = _id_of(text) or message_path.stem
        out.append(Record("message", str(message_path), message_id, own, None, None, text))
        if not parts:
            continue
        for part_path in _json_files(root / "part" / message_id):
            part_text = _read(part_path).decode("utf-8", "replace")
            out.append(Record("part", str(part_path), part_path.stem, own, message_id, None, part_text))
    if parts and not any(record.kind == "part" for record in out):  # the oldest layout: parts in one folder
        out.extend(_loose_parts(root, {record.id for record in out if record.kind == "message"}, own))
    return out


def watched(path: str) -> list[str]:
    """What is read for the planned file ``path`` (``FormatPlugin.watched``): a database and its
    write-ahead log (where OpenCode's writes wait while it runs); a JSON storage session file,
    its messages' folder and files, and each message's parts' folder and files (by the message
    file's name, which is its id), or the shared parts folder where no message has one.

    Examples:
        >>> watched("/h/opencode/opencode.db")
        ['/h/opencode/opencode.db', '/h/opencode/opencode.db-wal']
    """
    if path.endswith(".db"):
        return [path, f"{path}-wal"]
    root = storage_root(Path(path))
    messages = root / "message" / Path(path).stem
    out = [path, str(messages)]
    parted = False
    for message in _json_files(messages):
        parts = root / "part" / message.stem
        found = _json_files(parts)
        parted = parted or bool(found)
        out.extend([str(message), str(parts), *map(str, found)])
    if not parted:
        out.append(str(root / "part"))
    return out


def _loose_parts(root: Path, messages: set[str], own: str) -> list[Record]:
    out: list[Record] = []
    for part_path in _json_files(root / "part"):
        text = _read(part_path).decode("utf-8", "replace")
        try:
            value = json.loads(text)
        except ValueError:
            continue
        message = value.get("messageID") if isinstance(value, dict) else None
        if message in messages:
            out.append(Record("part", str(part_path), part_path.stem, own, message, None, text))
    return out


def _id_of(text: str) -> str | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return _text(value.get("id")) if isinstance(value, dict) else None


def _json_files(folder: Path) -> list[Path]:
    try:
        return sorted(Path(entry.path) for entry in os.scandir(folder) if entry.name.endswith(".json"))
    except OSError:
        return []


def _read(path: Path) -> bytes:
    try:
        return read_transcript(path)
    except OSError:
        return b""


def bundle(records: Sequence[Record], root: str) -> bytes:
    """Records as one self-contained JSONL copy (what the archive keeps of a JSON storage
    session): a header line, then one line per record, paths relative to ``root``."""
    lines = [BUNDLE_HEADER]
    for record in records:
        source = os.path.relpath(record.source, root) if record.source.startswith(root) else record.source
        row = [record.kind, source, record.id, record.session, record.message, record.time, record.text]
        lines.append(json.dumps(row, ensure_ascii=False).encode() + b"\n")
    return b"".join(lines)


def unbundle(data: bytes, root: str) -> list[Record]:
    """The records of a :func:`bundle` (sources made absolute again under ``root``)."""
    out: list[Record] = []
    for line in data.split(b"\n")[1:]:
        if not line:
            continue
        kind, source, ident, session, message, time, text = json.loads(line)
        out.append(Record(kind, os.path.join(root, source), ident, session, message, time, text))
    return out


def snapshot(path: Path) -> bytes:
    """A consistent copy of the database at ``path`` (SQLite's backup, from a read-only
    connection: what the WAL holds is included), as bytes."""
    source = connect(path)
    try:
        copy = sqlite3.connect(":memory:")
        try:
            source.backup(copy)
            return copy.serialize()
        finally:
            copy.close()
    finally:
        source.close()
