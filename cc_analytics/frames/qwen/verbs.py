"""The verbs of the Qwen Code format: events, turns, sessions, problems and requests frames.

Imports: polars (through ``frames.chatlog``), the standard library and the other modules
of ``frames.qwen``. Every frame is made by the code Qwen Code shares with Gemini CLI
(``frames.chatlog``: the rules are in its docstring); this module names the format, its
parser (``frames.qwen.chats``) and its files (``frames.qwen.store``). The provider is not
recorded (Qwen Code talks to DashScope, OpenAI-compatible servers or Gemini): null, so prices
are found by the model's name. Occupancy is recorded (a request's prompt, cached input
included); the window is recorded (``contextWindowSize``) or inferred from the model's name.

Examples:
    >>> import tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp()) / "chats"
    >>> folder.mkdir()
    >>> _ = (folder / "s1.jsonl").write_text(
    ...     '{"uuid":"u","parentUuid":null,"sessionId":"s1","timestamp":"2026-08-17T12:00:00Z","type":"user",'
    ...     '"message":{"role":"user","parts":[{"text":"hi"}]}}\\n'
    ...     '{"uuid":"a","parentUuid":"u","sessionId":"s1","timestamp":"2026-08-17T12:00:01Z","type":"assistant",'
    ...     '"model":"gemini-2.5-pro","contextWindowSize":1048576,"message":{"role":"model","parts":[{"text":"ok"}]},'
    ...     '"usageMetadata":{"promptTokenCount":1000,"cachedContentTokenCount":200,"candidatesTokenCount":100,'
    ...     '"thoughtsTokenCount":50}}\\n')
    >>> read_requests(folder).select("input_tokens", "cache_read_tokens", "output_tokens", "reasoning_tokens").row(0)
    (800, 200, 150, 50)
    >>> read_sessions(folder).select("session_id", "turns", "last_occupancy", "window").row(0)
    ('s1', 1, 1000, 1048576)
"""

from __future__ import annotations

from cc_analytics.frames.chatlog.messages import Spec
from cc_analytics.frames.chatlog.verbs import verbs
from cc_analytics.frames.qwen.chats import parse, window_of
from cc_analytics.frames.qwen.plugin import PLUGIN
from cc_analytics.frames.qwen.store import resolve

DEFAULT_WINDOW = 131_072
"""The window ``context`` assumes for a model whose window is neither recorded nor known (128K)."""
SPEC = Spec(
    PLUGIN.name,
    PLUGIN.label,
    parse=parse,
    resolve=resolve,
    provider=None,
    window_of=window_of,
    default_window=DEFAULT_WINDOW,
)

# scan_/read_ events, turns, sessions, problems and requests, iter_requests, iter_tables,
# tables_batch and context_report: the family's verbs, made for this format.
globals().update(verbs(SPEC))
