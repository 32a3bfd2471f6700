"""Where GitHub Copilot CLI writes its session event logs, and which session each file holds.

Imports: the standard library, ``frames.sources`` and the store helpers of
``frames.chatlog.store`` (standard library only there: no Polars; the plugin uses this module
to plan files). Rules:

* the store is ``$COPILOT_HOME/session-state`` (``COPILOT_HOME`` replaces ``~/.copilot``);
  a session is the ``events.jsonl`` of a ``session-state/<session id>/`` folder (what Copilot
  CLI writes since 0.0.3xx and what ccusage reads); a flat ``session-state/<id>.jsonl`` of
  some versions is read too. The older ``history-session-state/`` (one JSON document per
  session, no token counts) is not read;
* a file's session id is its folder's name for an ``events.jsonl`` (as ccusage names it),
  else the ``sessionId`` of its ``session.start``, else the file's stem;
* ``project_dir`` is the last part of the working directory ``session.start`` records
  (``data.context.cwd``), else the session's folder;
* the OpenTelemetry file export (``frames.copilot.otel``): every ``*.jsonl`` under
  ``$COPILOT_HOME/otel`` and the file ``$COPILOT_OTEL_FILE_EXPORTER_PATH`` names, as ccusage
  finds them (whatever their first line); elsewhere, a file whose first line is a ``span``,
  ``log`` or ``metric`` record is one. Such a file holds many sessions (each call names its own): the files are one
  unit, :data:`OTEL_UNIT`, read together, and each row carries its call's session.

Examples:
    >>> classify(Path("/h/.copilot/session-state/abc/events.jsonl"), size=3, head=b"{}").session_id
    'abc'
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path

from cc_analytics.frames.chatlog.store import file_size, head_of, resolve_files
from cc_analytics.frames.sources import Source, TranscriptFile, shown, walk

HOME_ENV = "COPILOT_HOME"
FOLDER = ".copilot"
STORE = "session-state"
EVENTS = "events.jsonl"
MAIN = "main"
OTEL = "otel"
EXPORT_ENV = "COPILOT_OTEL_FILE_EXPORTER_PATH"
OTEL_UNIT = "(copilot-otel)"
"""The ``session_id`` of the export's files in a plan: they are read together, one unit (the
frames' rows name each call's own session)."""
_EXPORT = re.compile(rb'\A\s*\{\s*"type"\s*:\s*"(?:span|log|metric)"')
_SESSION = re.compile(rb'"sessionId"\s*:\s*"((?:[^"\\]|\\.){1,200})"')
_CWD = re.compile(rb'"cwd"\s*:\s*"((?:[^"\\]|\\.){1,4096})"')


def copilot_home() -> Path:
    """``$COPILOT_HOME`` when set and not blank, else ``~/.copilot``."""
    home = os.environ.get(HOME_ENV, "").strip()
    if home:
        return Path(home).expanduser()
    return Path(os.environ.get("HOME") or Path.home()) / FOLDER


def default_stores() -> list[Path]:
    """The folder Copilot CLI keeps its sessions' event logs in, existing or not.

    Examples:
        >>> import os
        >>> os.environ["COPILOT_HOME"] = "/tmp/c"
        >>> [str(p) for p in default_stores()]
        ['/tmp/c/session-state']
        >>> del os.environ["COPILOT_HOME"]
    """
    return [copilot_home() / STORE]


def store_paths(stores: list[Path]) -> list[Path]:
    """The event logs under existing stores: ``<id>/events.jsonl`` and flat ``<id>.jsonl``."""
    found: list[Path] = []
    for store in stores:
        if not store.is_dir():
            continue
        for path in walk([store]):
            if path.name == EVENTS and path.parent.parent == store:
                found.append(path)
            elif path.suffix == ".jsonl" and path.parent == store:
                found.append(path)
    return found


def otel_paths() -> list[Path]:
    """The export's files: ``*.jsonl`` under ``$COPILOT_HOME/otel`` (searched recursively) and
    the file ``$COPILOT_OTEL_FILE_EXPORTER_PATH`` names, when it is one."""
    folder = copilot_home() / OTEL
    found = [path for path in walk([folder]) if path.suffix == ".jsonl"] if folder.is_dir() else []
    named = _named_export()
    if named is not None and named.is_file() and named not in found:
        found.append(named)
    return found


def _named_export() -> Path | None:
    """The file ``$COPILOT_OTEL_FILE_EXPORTER_PATH`` names, if it names one."""
    named = os.environ.get(EXPORT_ENV, "").strip()
    return Path(named).expanduser() if named else None


def is_export(head: bytes) -> bool:
    """Whether a file's first bytes start with a record of the OpenTelemetry file export.

    Examples:
        >>> is_export(b'{"type":"span","attributes":{}}'), is_export(b'{"type":"session.start"}')
        (True, False)
    """
    return _EXPORT.match(head) is not None


def _exported_to(path: Path) -> bool:
    """Whether ``path`` is where Copilot CLI exports its telemetry (under ``$COPILOT_HOME/otel``,
    or the file ``$COPILOT_OTEL_FILE_EXPORTER_PATH`` names), whatever its first line.

    Examples:
        >>> import os
        >>> os.environ["COPILOT_HOME"] = "/tmp/c"
        >>> _exported_to(Path("/tmp/c/otel/a/b.jsonl")), _exported_to(Path("/tmp/c/otelx/b.jsonl"))
        (True, False)
        >>> del os.environ["COPILOT_HOME"]
    """
    text = os.fspath(path)
    folder, named = _export_places(os.environ.get(HOME_ENV), os.environ.get("HOME"), os.environ.get(EXPORT_ENV))
    return text == folder or text.startswith(folder + os.sep) or text == named


@functools.lru_cache(maxsize=4)
def _export_places(*environment: str | None) -> tuple[str, str | None]:
    """The export's folder and named file as text, for the environment's values (``environment``:
    the variables they are made of; a plan classifies thousands of files under the same)."""
    named = _named_export()
    return os.fspath(copilot_home() / OTEL), None if named is None else os.fspath(named)


def _string(match: re.Match[bytes] | None) -> str | None:
    if match is None:
        return None
    try:
        value = json.loads(b'"' + match.group(1) + b'"')
    except ValueError:
        return None
    return value if isinstance(value, str) and value.strip() else None


def session_id_of(path: Path, head: bytes) -> str:
    """The folder's name for ``events.jsonl``, else the first ``sessionId`` in the head, else the stem."""
    from cc_analytics.frames.plugin import is_safe_id

    if path.name == EVENTS and is_safe_id(path.parent.name):
        return path.parent.name
    end = head.find(b"\n")
    found = _string(_SESSION.search(head if end < 0 else head[:end]))
    if found is not None and is_safe_id(found):
        return found
    return path.stem


def project_dir_of(path: Path, head: bytes) -> str:
    """The last part of the recorded working directory, else the session's folder name."""
    end = head.find(b"\n")
    cwd = _string(_CWD.search(head if end < 0 else head[:end]))
    if cwd is not None:
        name = cwd.rstrip("/\\").replace("\\", "/").rsplit("/", 1)[-1]
        if name:
            return name
    return path.parent.name


def classify(path: Path, *, size: int, head: bytes) -> TranscriptFile:
    """An event log (or a file of the OpenTelemetry export) as the loaders see it, from its path, size and first bytes."""
    if is_export(head) or _exported_to(path):
        return TranscriptFile(path, OTEL_UNIT, None, MAIN, shown(path.parent.name), size)
    return TranscriptFile(path, shown(session_id_of(path, head)), None, MAIN, shown(project_dir_of(path, head)), size)


def transcript_file(path: Path) -> TranscriptFile:
    """:func:`classify` of a file on disk (of its first line only, as the plan read it when it did)."""
    from cc_analytics.frames.sources import first_line_read

    head = first_line_read(path)
    return classify(path, size=file_size(path), head=head_of(path) if head is None else head)


def resolve(source: Source = None, *, planned: bool = False) -> list[TranscriptFile]:
    """The event logs of a file, a folder (searched recursively), a glob, TranscriptFiles or a
    list of these, one session each; None: the default stores.

    Examples:
        >>> resolve([])
        []
    """
    return resolve_files(
        source,
        planned=planned,
        default_paths=lambda: store_paths(default_stores()) + otel_paths(),
        classify=transcript_file,
    )
