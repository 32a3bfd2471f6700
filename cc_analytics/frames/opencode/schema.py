"""Column names and explicit schemas of the OpenCode frames: events, and the decoder's tables.

Imports: polars and ``frames.schema`` (the names and schemas every format shares, re-exported
here). The turns, sessions, requests and problems frames are the shared ones. The decoder
(``decode.py``) makes, per batch of sessions: **files** (one row per session read: its unit,
its own id, parent, directory, title, OpenCode version), **messages** (one row per message:
role, times, model, provider, usage as recorded, OpenCode's own cost) and **parts** (one row
per part: type, tool, status, the bucket and estimated tokens of what it adds to the context).
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
OPENCODE = "opencode"

FILE = "file"  # the batch-local index of a session read
OWN_ID = "own_id"  # the session's own id (a sub-task's: not its parent's)
PARENT_ID = "parent_id"
TITLE = "title"
VERSION = "version"
CREATED = "created"  # epoch milliseconds, as recorded
COMPLETED = "completed"
MESSAGE_ID = "message_id"
PART_ID = "part_id"
PART_TYPE = "part_type"
TOOL = "tool"
STATUS = "status"
SYNTHETIC = "synthetic"
BUCKET = "bucket"
TEXT = "text"
TEXT_TOKENS = "text_tokens"
CALL_TOKENS = "call_tokens"
START = "start"
AGENT = "agent"
SUMMARY = "summary"
FINISH = "finish"
ERROR = "error"
KIND = "kind"
TOKENS = "tokens"  # estimated tokens a part adds to the context
RECORDED_COST = "recorded_cost_usd"
"""What OpenCode itself recorded as a message's cost (its ``cost``), beside our own ``cost_usd``."""

# A message's usage as recorded (``tokens``): input is uncached, output leaves reasoning out.
TOKENS_INPUT = "tokens_input"
TOKENS_OUTPUT = "tokens_output"
TOKENS_REASONING = "tokens_reasoning"
TOKENS_CACHE_READ = "tokens_cache_read"
TOKENS_CACHE_WRITE = "tokens_cache_write"
USAGE_COLUMNS = (TOKENS_INPUT, TOKENS_OUTPUT, TOKENS_REASONING, TOKENS_CACHE_READ, TOKENS_CACHE_WRITE)
IS_REQUEST = "is_request"

FILES_SCHEMA = pl.Schema(
    {
        FILE: pl.Int64(),
        SOURCE_FILE: pl.String(),
        SESSION_ID: pl.String(),
        AGENT_ID: pl.String(),
        IS_SUBAGENT_FILE: pl.Boolean(),
        PROJECT_DIR: pl.String(),
        OWN_ID: pl.String(),
        PARENT_ID: pl.String(),
        PROJECT: pl.String(),
        TITLE: pl.String(),
        VERSION: pl.String(),
        CREATED: pl.Int64(),
    }
)

MESSAGES_SCHEMA = pl.Schema(
    {
        FILE: pl.Int64(),
        MESSAGE_ID: pl.String(),
        ROLE: pl.String(),
        CREATED: pl.Int64(),
        COMPLETED: pl.Int64(),
        MODEL: pl.String(),
        PROVIDER: pl.String(),
        **{name: pl.Int64() for name in USAGE_COLUMNS},
        RECORDED_COST: pl.Float64(),
        AGENT: pl.String(),
        SUMMARY: pl.Boolean(),
        FINISH: pl.String(),
        ERROR: pl.String(),
    }
)

PARTS_SCHEMA = pl.Schema(
    {
        FILE: pl.Int64(),
        MESSAGE_ID: pl.String(),
        PART_ID: pl.String(),
        PART_TYPE: pl.String(),
        TOOL: pl.String(),
        STATUS: pl.String(),
        SYNTHETIC: pl.Boolean(),
        BUCKET: pl.String(),
        TEXT_TOKENS: pl.Int64(),
        CALL_TOKENS: pl.Int64(),
        TEXT: pl.String(),
        START: pl.Int64(),
    }
)

# The events frame: one row per message and per part, in session and time order.
EVENTS_SCHEMA = pl.Schema(
    {
        SOURCE_FILE: pl.String(),
        SESSION_ID: pl.String(),
        AGENT_ID: pl.String(),
        KIND: pl.String(),  # "message" or "part"
        MESSAGE_ID: pl.String(),
        PART_ID: pl.String(),
        TIME: UTC_TIME,
        ROLE: pl.String(),
        PART_TYPE: pl.String(),
        TEXT: pl.String(),
        TOOL: pl.String(),
        STATUS: pl.String(),
        MODEL: pl.String(),
        PROVIDER: pl.String(),
        **{name: pl.Int64() for name in USAGE_COLUMNS},
        RECORDED_COST: pl.Float64(),
        TOKENS: pl.Int64(),
    }
)
