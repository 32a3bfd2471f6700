"""The verbs of the Gemini CLI format: events, turns, sessions, problems and requests frames.

Imports: polars (through ``frames.gemini_family``), the standard library and the other modules
of ``frames.gemini``. Every frame is made by the code Gemini CLI shares with Qwen Code
(``frames.gemini_family``: the rules are in its docstring); this module names the format, its
parser (``frames.gemini.chats``), its files (``frames.gemini.store``) and its provider
(``google``). Occupancy is recorded (a request's prompt, cached input included, plus the
tool-use prompt); the window is inferred from the model's name.

Examples:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "chats"
    >>> folder.mkdir()
    >>> _ = (folder / "session-a.jsonl").write_text(
    ...     '{"sessionId":"a","projectHash":"h","startTime":"2026-04-29T21:39:22Z"}\\n'
    ...     '{"id":"u","timestamp":"2026-04-29T21:39:33Z","type":"user","content":[{"text":"hi"}]}\\n'
    ...     '{"id":"m","timestamp":"2026-04-29T21:39:35Z","type":"gemini","model":"gemini-2.5-pro",'
    ...     '"tokens":{"input":1000,"output":100,"cached":200,"thoughts":50,"tool":7,"total":1157}}\\n')
    >>> read_requests(folder).select("input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens").row(0)
    (807, 200, 150, 50)
    >>> read_sessions(folder).select("session_id", "turns", "last_occupancy", "window").row(0)
    ('a', 1, 1007, 1048576)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cc_analytics.frames import gemini_family as family
from cc_analytics.frames.gemini.chats import parse, window_of
from cc_analytics.frames.gemini.plugin import PLUGIN
from cc_analytics.frames.gemini.store import resolve
from cc_analytics.frames.sources import TranscriptFile

PROVIDER = "google"
SPEC = family.Spec(PLUGIN.name, parse=parse, resolve=resolve, provider=PROVIDER)

_VERBS = family.verbs(SPEC, PLUGIN.label)
scan_events = _VERBS["scan_events"]
read_events = _VERBS["read_events"]
scan_turns = _VERBS["scan_turns"]
read_turns = _VERBS["read_turns"]
scan_sessions = _VERBS["scan_sessions"]
read_sessions = _VERBS["read_sessions"]
scan_problems = _VERBS["scan_problems"]
read_problems = _VERBS["read_problems"]
scan_requests = _VERBS["scan_requests"]
read_requests = _VERBS["read_requests"]
iter_requests = _VERBS["iter_requests"]
iter_tables = _VERBS["iter_tables"]
tables_batch = _VERBS["tables_batch"]


def context_report(
    session_id: str,
    files: Sequence[TranscriptFile],
    *,
    contents: Sequence[bytes] | None = None,
    model: str | None = None,
    provider: str | None = None,
) -> dict[str, Any] | None:
    """What ``cc-analytics context`` prints for a Gemini CLI session (``frames.gemini_family.context_report``)."""
    return family.context_report(
        SPEC, session_id, files, contents=contents, model=model, provider=provider, window_of=window_of
    )
