"""Column names and explicit schemas of the ChainlessChain frames: events, messages, files.

Imports: polars and ``frames.schema`` (the names and schemas every format shares, re-exported
here). Every other module of ``frames.chainless`` takes its column names from here; the
turns, sessions and problems frames are the shared ``TURNS_SCHEMA``, ``SESSIONS_SCHEMA`` and
``PROBLEMS_SCHEMA``.

Three frames come out of the decoder (``decode.py``):

* **events**: one row per line that parsed as JSON (``EVENTS_SCHEMA``); the detail columns
  are filled for the types they belong to and null elsewhere;
* **messages**: the messages replay admits (``MESSAGES_SCHEMA``), one row each: those of
  message events and completed ``ws_turn`` settlements, and each checkpoint's snapshot;
  ``in_context`` marks the ones ``cc context`` replays (the last checkpoint's snapshot and
  what follows it);
* **files**: one row per transcript (``FILES_SCHEMA``) with the values ``cc context`` takes
  from the whole file: the header, the last main ``token_usage`` record, the activity times.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames.schema import *  # the shared names, so S.<NAME> reaches every column
from cc_analytics.frames.schema import (  # noqa: F401  (made on first use there, so not in the star import)
    PROBLEMS_SCHEMA,
    REQUESTS_SCHEMA,
    SESSIONS_SCHEMA,
    STRINGS,
    TURNS_SCHEMA,
    UTC_TIME,
)

# The value of the ``format`` column for this format (its plugin's name).
CHAINLESS = "chainlesschain"

# The batch-local index of a transcript: joins inside a batch use it instead of the path.
FILE = "file"

# Events: one row per parsed line.
TYPE = "type"
TIMESTAMP = "timestamp"  # milliseconds since the epoch, when the line has a finite numeric one
IS_OBJECT = "is_object"
IS_NULL = "is_null"
CONTENT = "content"  # string content of a message event
CONTENT_JSON = "content_json"  # JSON.stringify of non-string content
TOOL_CALLS_JSON = "tool_calls_json"  # JSON.stringify of a message's tool_calls, whatever it is
IS_CHECKPOINT = "is_checkpoint"  # a compact / checkpoint_timeline_commit with a messages array
RAW_WINDOW = "raw_window"  # token_usage contextWindow, any finite number
RECORDED_WINDOW = "recorded_window"  # ... when it passes the 0.166.49 checks (safe integer, 1024..16 Mi)
IS_MAIN_USAGE = "is_main_usage"  # token_usage of the main model: no attribution, source model/empty
ATTRIBUTION = "attribution"
USAGE_SOURCE = "usage_source"
TOOL = "tool"  # tool_call: the tool's name
IS_ERROR = "is_error"  # tool_call: the compact form's is_error
TRIGGER = "trigger"  # compact: auto / manual
PRE_TOKENS = "pre_tokens"  # compact: originalTokens
POST_TOKENS = "post_tokens"  # compact: compressedTokens

EVENTS_SCHEMA = pl.Schema(
    {
        SOURCE_FILE: pl.String(),
        SESSION_ID: pl.String(),
        LINE: pl.Int64(),
        TYPE: pl.String(),
        TIMESTAMP: pl.Float64(),
        IS_OBJECT: pl.Boolean(),
        IS_NULL: pl.Boolean(),
        ROLE: pl.String(),
        CONTENT: pl.String(),
        CONTENT_JSON: pl.String(),
        TOOL_CALLS_JSON: pl.String(),
        MODEL: pl.String(),
        PROVIDER: pl.String(),
        IS_CHECKPOINT: pl.Boolean(),
        INPUT_TOKENS: pl.Int64(),
        OUTPUT_TOKENS: pl.Int64(),
        CACHE_READ_TOKENS: pl.Int64(),
        CACHE_CREATION_TOKENS: pl.Int64(),
        RAW_WINDOW: pl.Float64(),
        RECORDED_WINDOW: pl.Int64(),
        IS_MAIN_USAGE: pl.Boolean(),
        ATTRIBUTION: pl.String(),
        USAGE_SOURCE: pl.String(),
        TOOL: pl.String(),
        IS_ERROR: pl.Boolean(),
        TRIGGER: pl.String(),
        PRE_TOKENS: pl.Int64(),
        POST_TOKENS: pl.Int64(),
    }
)
# Every parsed line fills these; the others only on the lines of the types they describe.
CORE_COLUMNS = (FILE, LINE, TYPE, TIMESTAMP, IS_OBJECT, IS_NULL)
DETAIL_COLUMNS = (FILE, LINE, *(name for name in EVENTS_SCHEMA if name not in (*CORE_COLUMNS, SOURCE_FILE, SESSION_ID)))

# Messages admitted by replay.
POSITION = "position"  # order within its line (a snapshot's entries, a ws_turn's two messages)
FROM_CHECKPOINT = "from_checkpoint"
SEGMENT = "segment"  # checkpoints seen before (or at) the message's line in its file
IN_CONTEXT = "in_context"  # replayed by cc context: in the file's last segment
TEXT = "text"  # what the content is measured by (spec §7.1)
TOOL_CALLS_TEXT = "tool_calls_text"  # JSON.stringify of a non-empty tool_calls array, else null
# Tokens of TEXT and TOOL_CALLS_TEXT when the decoder measured them with the scalar fast path
# of the estimate (the lean profile does; its text is then null); null where the expression measures.
TEXT_TOKENS = "text_tokens"
CALL_TOKENS = "call_tokens"

MESSAGES_SCHEMA = pl.Schema(
    {
        FILE: pl.UInt32(),
        LINE: pl.Int64(),
        POSITION: pl.Int64(),
        FROM_CHECKPOINT: pl.Boolean(),
        SEGMENT: pl.Int64(),
        IN_CONTEXT: pl.Boolean(),
        ROLE: pl.String(),
        TEXT: pl.String(),
        TEXT_TOKENS: pl.Int64(),
        TOOL_CALLS_TEXT: pl.String(),
        CALL_TOKENS: pl.Int64(),
    }
)
# What the lean context profile keeps of a message (every message it keeps is in context).
CONTEXT_MESSAGE_COLUMNS = (FILE, ROLE, TEXT, TEXT_TOKENS, TOOL_CALLS_TEXT, CALL_TOKENS)

# Files: one row per transcript, in the order they were decoded.
RECORDED_MODEL = "recorded_model"  # header (first session_start): model, "" when none
RECORDED_PROVIDER = "recorded_provider"
RECORD_WINDOW = "record_window"  # last main token_usage record: its recorded window
RECORD_MODEL = "record_model"
RECORD_PROVIDER = "record_provider"
FIRST_ACTIVITY = "first_activity"  # smallest and largest finite numeric timestamp (ms)
LAST_ACTIVITY = "last_activity"

FILES_SCHEMA = pl.Schema(
    {
        FILE: pl.UInt32(),
        SOURCE_FILE: pl.String(),
        SESSION_ID: pl.String(),
        PROJECT_DIR: pl.String(),
        RECORDED_MODEL: pl.String(),
        RECORDED_PROVIDER: pl.String(),
        RECORD_WINDOW: pl.Int64(),
        RECORD_MODEL: pl.String(),
        RECORD_PROVIDER: pl.String(),
        FIRST_ACTIVITY: pl.Float64(),
        LAST_ACTIVITY: pl.Float64(),
    }
)

# The context report: one row per session, what ``cc context`` prints.
MESSAGES_SYSTEM = "messages_system"
MESSAGES_USER = "messages_user"
MESSAGES_ASSISTANT = "messages_assistant"
MESSAGES_TOOL = "messages_tool"
MESSAGE_COUNTS = (MESSAGES_SYSTEM, MESSAGES_USER, MESSAGES_ASSISTANT, MESSAGES_TOOL)
OVERFLOWS = "overflows"

CONTEXT_SCHEMA = pl.Schema(
    {
        SESSION_ID: pl.String(),
        MODEL: pl.String(),
        PROVIDER: pl.String(),
        WINDOW: pl.Int64(),
        CONTEXT_ESTIMATE: pl.Int64(),
        USED_FRACTION: pl.Float64(),
        HEADROOM: pl.Int64(),
        MESSAGES: pl.Int64(),
        **{bucket: pl.Int64() for bucket in BUCKETS},
        **{count: pl.Int64() for count in MESSAGE_COUNTS},
        OVERFLOWS: pl.Boolean(),
        LAST_ACTIVITY: pl.Float64(),
    }
)
