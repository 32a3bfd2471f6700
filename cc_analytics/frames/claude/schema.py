"""Column names and explicit schemas of the Claude Code events and content blocks.

Imports: ``frames.schema`` (the names and schemas every format shares, re-exported here) and
polars, on first use of a dtype or schema. Every other module of ``frames.claude`` takes its
column names from here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cc_analytics.frames import schema as shared
from cc_analytics.frames.schema import *  # the shared names, so S.<NAME> reaches every column

# The value of the ``format`` column for this format (its plugin's name).
CLAUDE = "claude-code"

# Event columns (one row per JSONL line that is a JSON object with a string ``type``).
FILE_SESSION_ID = "file_session_id"
UUID = "uuid"
PARENT_UUID = "parent_uuid"
TYPE = "type"
SUBTYPE = "subtype"
TIMESTAMP = "timestamp"
HAS_ENVELOPE = "has_envelope"
IS_META = "is_meta"
IS_COMPACT_SUMMARY = "is_compact_summary"
IS_API_ERROR = "is_api_error"
HAS_INTERRUPTED_ID = "has_interrupted_id"
CWD = "cwd"
GIT_BRANCH = "git_branch"
VERSION = "version"
STOP_REASON = "stop_reason"
PROMPT_TEXT = "prompt_text"
ASSISTANT_TEXT = "assistant_text"
THINKING_CHARS = "thinking_chars"
TOOL_USE_NAMES = "tool_use_names"
TOOL_USE_IDS = "tool_use_ids"
TOOL_USE_INPUTS = "tool_use_inputs"
TOOL_RESULT_IDS = "tool_result_ids"
TOOL_RESULT_ERRORS = "tool_result_errors"
IS_ERROR = "is_error"
TOOL_RESULT_TEXT = "tool_result_text"
SYSTEM_TEXT = "system_text"
ATTACHMENT_TYPE = "attachment_type"
COMPACT_TRIGGER = "compact_trigger"
COMPACT_PRE_TOKENS = "compact_pre_tokens"

# Content blocks: one row per piece of text the heuristic buckets measure.
ROW = "row"
KIND = "kind"
NAME = "name"
BLOCK_ID = "id"
TEXT = "text"
# What the findings read of a block instead of its text (decode's ``Profile.marks``).
NAMES_MEMORY = "names_memory"
TOOL_INPUT = "tool_input"
BLOCK_KINDS = ("prompt", "text", "thinking", "tool_use", "tool_result", "system")

# The dtypes and schemas, made on first use (as in ``frames.schema``, whose own are reached
# here too): the column names above are plain strings, read by the line walker without Polars.
_TYPED = frozenset(("EVENT_SCALARS", "EVENT_FROM_BLOCKS", "EVENTS_SCHEMA", "BLOCK_KIND", "BLOCKS_SCHEMA"))

if TYPE_CHECKING:
    import polars as pl

    from cc_analytics.frames.schema import (  # noqa: F401  (re-exported, as above)
        PROBLEMS_SCHEMA,
        SESSIONS_SCHEMA,
        STRINGS,
        TURNS_SCHEMA,
        UTC_TIME,
    )

    EVENT_SCALARS: dict[str, pl.DataType]
    EVENT_FROM_BLOCKS: dict[str, pl.DataType]
    EVENTS_SCHEMA: pl.Schema
    BLOCK_KIND: pl.Enum
    BLOCKS_SCHEMA: pl.Schema


def _types() -> dict[str, Any]:
    import polars as pl

    UTC_TIME = shared.UTC_TIME
    STRINGS = shared.STRINGS

    # Scalar event columns, as the line decoder fills them.
    EVENT_SCALARS: dict[str, pl.DataType] = {
        SOURCE_FILE: pl.String(),
        LINE: pl.Int64(),
        FILE_SESSION_ID: pl.String(),
        IS_SUBAGENT_FILE: pl.Boolean(),
        SESSION_ID: pl.String(),
        UUID: pl.String(),
        PARENT_UUID: pl.String(),
        TYPE: pl.String(),
        SUBTYPE: pl.String(),
        TIMESTAMP: UTC_TIME,
        HAS_ENVELOPE: pl.Boolean(),
        IS_SIDECHAIN: pl.Boolean(),
        IS_META: pl.Boolean(),
        IS_COMPACT_SUMMARY: pl.Boolean(),
        IS_API_ERROR: pl.Boolean(),
        HAS_INTERRUPTED_ID: pl.Boolean(),
        AGENT_ID: pl.String(),
        CWD: pl.String(),
        GIT_BRANCH: pl.String(),
        VERSION: pl.String(),
        MODEL: pl.String(),
        MESSAGE_ID: pl.String(),
        REQUEST_ID: pl.String(),
        STOP_REASON: pl.String(),
        INPUT_TOKENS: pl.Int64(),
        CACHE_CREATION_TOKENS: pl.Int64(),
        CACHE_READ_TOKENS: pl.Int64(),
        OUTPUT_TOKENS: pl.Int64(),
        # What pricing needs beyond the four totals, as recorded (null when the line has none):
        # the cache-write breakdown by lifetime, server-side web searches, tier and speed.
        CACHE_CREATION_5M_TOKENS: pl.Int64(),
        CACHE_CREATION_1H_TOKENS: pl.Int64(),
        WEB_SEARCH_REQUESTS: pl.Int64(),
        SERVICE_TIER: pl.String(),
        SPEED: pl.String(),
        PROMPT_TEXT: pl.String(),
        ASSISTANT_TEXT: pl.String(),
        THINKING_CHARS: pl.Int64(),
        SYSTEM_TEXT: pl.String(),
        ATTACHMENT_TYPE: pl.String(),
        COMPACT_TRIGGER: pl.String(),
        COMPACT_PRE_TOKENS: pl.Int64(),
    }

    # Event columns aggregated from the content blocks of each line.
    EVENT_FROM_BLOCKS: dict[str, pl.DataType] = {
        TOOL_USE_NAMES: STRINGS,
        TOOL_USE_IDS: STRINGS,
        TOOL_USE_INPUTS: STRINGS,
        TOOL_RESULT_IDS: STRINGS,
        TOOL_RESULT_ERRORS: pl.List(pl.Boolean()),
        IS_ERROR: pl.Boolean(),
        TOOL_RESULT_TEXT: pl.String(),
    }

    EVENTS_SCHEMA = pl.Schema({**EVENT_SCALARS, **EVENT_FROM_BLOCKS})
    BLOCK_KIND = pl.Enum(BLOCK_KINDS)
    BLOCKS_SCHEMA = pl.Schema(
        {
            ROW: pl.Int64(),
            KIND: BLOCK_KIND,
            NAME: pl.String(),
            BLOCK_ID: pl.String(),
            TEXT: pl.String(),
            IS_ERROR: pl.Boolean(),
        }
    )
    return {name: value for name, value in locals().items() if name in _TYPED}


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        if name in shared._TYPED:
            return getattr(shared, name)
        if name not in _TYPED:
            msg = f"module {__name__!r} has no attribute {name!r}"
            raise AttributeError(msg)
        globals().update(_types())
        return globals()[name]
