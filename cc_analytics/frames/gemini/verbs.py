"""The verbs of the Gemini CLI format: events, turns, sessions, problems and requests frames.

Imports: polars (through ``frames.chatlog``), the standard library and the other modules
of ``frames.gemini``. Every frame is made by the code Gemini CLI shares with Qwen Code
(``frames.chatlog``: the rules are in its docstring); this module names the format, its
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

from cc_analytics.frames.chatlog.messages import Spec
from cc_analytics.frames.chatlog.verbs import verbs
from cc_analytics.frames.gemini.chats import parse, window_of
from cc_analytics.frames.gemini.plugin import PLUGIN
from cc_analytics.frames.gemini.store import resolve

PROVIDER = "google"
SPEC = Spec(PLUGIN.name, PLUGIN.label, parse=parse, resolve=resolve, provider=PROVIDER, window_of=window_of)

# scan_/read_ events, turns, sessions, problems and requests, iter_requests, iter_tables,
# tables_batch and context_report: the family's verbs, made for this format.
globals().update(verbs(SPEC))
