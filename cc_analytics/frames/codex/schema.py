"""Column names and explicit schemas of the OpenAI Codex CLI frames: events, and the decoder's tables.

Imports: ``frames.schema`` (the names and schemas every format shares, re-exported here), and
polars on first use of a schema (the names are plain strings, so the lean scan, ``scan.py``,
never imports Polars). Every other module of ``frames.codex`` takes its column names from here;
the turns, sessions, requests and problems frames are the shared ``TURNS_SCHEMA``,
``SESSIONS_SCHEMA``, ``REQUESTS_SCHEMA`` and ``PROBLEMS_SCHEMA``.

The decoder (``decode.py``) makes, per batch of rollouts:

* **files**: one row per rollout (``FILES_SCHEMA``): its session, its own thread id, what its
  first ``session_meta`` says (fork parent, spawning thread, provider, working directory) and
  the lines its fork replayed from the parent (``replay_start``..``replay_end``);
* **lines**: one row per line that is a JSON object (``LINES_SCHEMA``): its type, payload type,
  timestamp text and the details of the types the profile reads (role, model, tool ...);
* **items**: one row per piece of context a line adds (``ITEMS_SCHEMA``): a message, a tool
  call or its output, the base instructions, each entry of a compaction's replacement
  history, with its heuristic bucket and estimated tokens;
* **usage**: one row per ``token_count`` event with an ``info`` object (``USAGE_SCHEMA``):
  the cumulative and the last usage as recorded, and the window;
* **settings**: one row per line that sets the model or the service tier (``SETTINGS_SCHEMA``);
* **limits**: one row per rate-limit window of a ``token_count`` event (``LIMITS_SCHEMA``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cc_analytics.frames import schema as _shared
from cc_analytics.frames.schema import *  # the shared names, so S.<NAME> reaches every column

if TYPE_CHECKING:
    import polars as pl

    from cc_analytics.frames.schema import (  # noqa: F401  (made on first use there, so not in the star import)
        PROBLEMS_SCHEMA,
        REQUESTS_SCHEMA,
        SESSIONS_SCHEMA,
        STRINGS,
        TURNS_SCHEMA,
        UTC_TIME,
    )

# The value of the ``format`` column for this format (its plugin's name).
CODEX = "codex"

# The batch-local index of a rollout: joins inside a batch use it instead of the path.
FILE = "file"

# Files.
THREAD_ID = "thread_id"  # the rollout's own id (session_meta payload.id, else the file name's uuid)
FORKED_FROM_ID = "forked_from_id"
PARENT_THREAD_ID = "parent_thread_id"  # the thread that spawned a subagent
SOURCE = "source"  # session_meta source: "cli", "vscode", "exec", or the subagent kind
CLI_VERSION = "cli_version"
REPLAY_START = "replay_start"  # first and last line a fork replayed from its parent (0, 0: none)
REPLAY_END = "replay_end"

# Lines.
TIMESTAMP = "timestamp"  # the line's timestamp as written (RFC 3339 text)
TIME = "time"
TYPE = "type"
PAYLOAD_TYPE = "payload_type"
REPLAYED = "replayed"  # a line a fork copied from its parent's history
TEXT = "text"  # message, prompt or summary text (events profile; prompts in every profile)
CWD = "cwd"
TURN_ID = "turn_id"
TOOL = "tool"
CALL_ID = "call_id"
IS_ERROR = "is_error"
TOKENS = "tokens"  # estimated tokens the line adds to the context (sum of its items)

# Items.
BUCKET = "bucket"
FROM_CHECKPOINT = "from_checkpoint"  # an entry of a compaction's replacement history
BUCKET_NAMES = ("system", "user", "assistant", "tool", "tool_calls")

# Usage: cumulative (total_*) and last-request (last_*) usage of a token_count event.
USAGE_FIELDS = ("input", "cached", "cache_write", "output", "reasoning", "total")
TOTAL_FIELDS = tuple(f"total_{name}" for name in USAGE_FIELDS)
LAST_FIELDS = tuple(f"last_{name}" for name in USAGE_FIELDS)
HAS_TOTAL = "has_total"
HAS_LAST = "has_last"
USAGE_MODEL = "usage_model"
# Derived per usage row (frames.codex.requests).
IS_REQUEST = "is_request"  # counts as a request once repeats and replays are left out

# Settings: a line that names the model, or the service tier (``sets_tier``: the line has the key).
SETS_TIER = "sets_tier"

# Limits.
LIMIT_WINDOW = "limit_window"  # "primary" or "secondary"
USED_PERCENT = "used_percent"
WINDOW_MINUTES = "window_minutes"
RESETS_AT = "resets_at"
RESETS_AT_EPOCH = "resets_at_epoch"
RESETS_IN_SECONDS = "resets_in_seconds"
PLAN_TYPE = "plan_type"
LIMIT_ID = "limit_id"

CORE_COLUMNS = (FILE, LINE, TIMESTAMP, TYPE, PAYLOAD_TYPE)
# The lines schema's other columns, after the file and line (``LINES_SCHEMA``'s order).
DETAIL_COLUMNS = (FILE, LINE, ROLE, TEXT, MODEL, CWD, TURN_ID, TOOL, CALL_ID, IS_ERROR)

# The schemas, made on first use (PEP 562 ``__getattr__`` below), as ``frames.schema`` makes its own.
_TYPED = frozenset(
    (
        "FILES_SCHEMA",
        "LINES_SCHEMA",
        "ITEMS_SCHEMA",
        "USAGE_SCHEMA",
        "SETTINGS_SCHEMA",
        "LIMITS_SCHEMA",
        "EVENTS_SCHEMA",
        "RATE_LIMITS_SCHEMA",
    )
)
# The shared dtypes and schemas this module re-exports (made on first use there).
_SHARED = frozenset(("PROBLEMS_SCHEMA", "REQUESTS_SCHEMA", "SESSIONS_SCHEMA", "STRINGS", "TURNS_SCHEMA", "UTC_TIME"))
# A schema of the shared module that the star import brought (made there before this module was
# imported) is not this module's: LIMITS_SCHEMA names this format's own limits table.
for _name in _TYPED:
    globals().pop(_name, None)
del _name

if TYPE_CHECKING:
    FILES_SCHEMA: pl.Schema
    LINES_SCHEMA: pl.Schema
    ITEMS_SCHEMA: pl.Schema
    USAGE_SCHEMA: pl.Schema
    SETTINGS_SCHEMA: pl.Schema
    LIMITS_SCHEMA: pl.Schema  # type: ignore[no-redef]  # this format's, not the shared one
    EVENTS_SCHEMA: pl.Schema
    RATE_LIMITS_SCHEMA: pl.Schema


def _types() -> dict[str, Any]:
    import polars as pl

    UTC_TIME = _shared.UTC_TIME
    FILES_SCHEMA = pl.Schema(
        {
            FILE: pl.UInt32(),
            SOURCE_FILE: pl.String(),
            SESSION_ID: pl.String(),
            AGENT_ID: pl.String(),
            IS_SUBAGENT_FILE: pl.Boolean(),
            PROJECT_DIR: pl.String(),
            THREAD_ID: pl.String(),
            FORKED_FROM_ID: pl.String(),
            PARENT_THREAD_ID: pl.String(),
            SOURCE: pl.String(),
            PROVIDER: pl.String(),
            PROJECT: pl.String(),
            CLI_VERSION: pl.String(),
            REPLAY_START: pl.Int64(),
            REPLAY_END: pl.Int64(),
        }
    )

    LINES_SCHEMA = pl.Schema(
        {
            FILE: pl.UInt32(),
            LINE: pl.Int64(),
            TIMESTAMP: pl.String(),
            TYPE: pl.String(),
            PAYLOAD_TYPE: pl.String(),
            ROLE: pl.String(),
            TEXT: pl.String(),
            MODEL: pl.String(),
            CWD: pl.String(),
            TURN_ID: pl.String(),
            TOOL: pl.String(),
            CALL_ID: pl.String(),
            IS_ERROR: pl.Boolean(),
        }
    )

    ITEMS_SCHEMA = pl.Schema(
        {
            FILE: pl.UInt32(),
            LINE: pl.Int64(),
            BUCKET: pl.String(),
            TOKENS: pl.Int64(),
            TEXT: pl.String(),  # only the texts the decoder's fast path could not measure
            FROM_CHECKPOINT: pl.Boolean(),
        }
    )

    USAGE_SCHEMA = pl.Schema(
        {
            FILE: pl.UInt32(),
            LINE: pl.Int64(),
            TIMESTAMP: pl.String(),
            HAS_TOTAL: pl.Boolean(),
            **{name: pl.Int64() for name in TOTAL_FIELDS},
            HAS_LAST: pl.Boolean(),
            **{name: pl.Int64() for name in LAST_FIELDS},
            WINDOW: pl.Int64(),
            USAGE_MODEL: pl.String(),
        }
    )

    SETTINGS_SCHEMA = pl.Schema(
        {FILE: pl.UInt32(), LINE: pl.Int64(), MODEL: pl.String(), SERVICE_TIER: pl.String(), SETS_TIER: pl.Boolean()}
    )

    LIMITS_SCHEMA = pl.Schema(
        {
            FILE: pl.UInt32(),
            LINE: pl.Int64(),
            TIMESTAMP: pl.String(),
            LIMIT_WINDOW: pl.String(),
            USED_PERCENT: pl.Float64(),
            WINDOW_MINUTES: pl.Int64(),
            RESETS_AT_EPOCH: pl.Int64(),
            RESETS_IN_SECONDS: pl.Int64(),
            PLAN_TYPE: pl.String(),
            LIMIT_ID: pl.String(),
        }
    )

    # The events frame: one row per line that is a JSON object, with its session and details.
    EVENTS_SCHEMA = pl.Schema(
        {
            SOURCE_FILE: pl.String(),
            SESSION_ID: pl.String(),
            AGENT_ID: pl.String(),
            LINE: pl.Int64(),
            TIME: UTC_TIME,
            TYPE: pl.String(),
            PAYLOAD_TYPE: pl.String(),
            REPLAYED: pl.Boolean(),
            ROLE: pl.String(),
            TEXT: pl.String(),
            MODEL: pl.String(),
            CWD: pl.String(),
            TURN_ID: pl.String(),
            TOOL: pl.String(),
            CALL_ID: pl.String(),
            IS_ERROR: pl.Boolean(),
            TOKENS: pl.Int64(),
            **{name: pl.Int64() for name in LAST_FIELDS},
            **{name: pl.Int64() for name in TOTAL_FIELDS},
            WINDOW: pl.Int64(),
            IS_REQUEST: pl.Boolean(),
        }
    )

    # The rate-limits frame: one row per window of each token_count event that records limits.
    RATE_LIMITS_SCHEMA = pl.Schema(
        {
            SESSION_ID: pl.String(),
            AGENT_ID: pl.String(),
            SOURCE_FILE: pl.String(),
            LINE: pl.Int64(),
            TIME: UTC_TIME,
            LIMIT_WINDOW: pl.String(),
            USED_PERCENT: pl.Float64(),
            WINDOW_MINUTES: pl.Int64(),
            RESETS_AT: UTC_TIME,
            PLAN_TYPE: pl.String(),
            LIMIT_ID: pl.String(),
        }
    )
    return {name: value for name, value in locals().items() if name in _TYPED}


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        if name in _SHARED:
            return getattr(_shared, name)
        if name not in _TYPED:
            msg = f"module {__name__!r} has no attribute {name!r}"
            raise AttributeError(msg)
        globals().update(_types())
        return globals()[name]
