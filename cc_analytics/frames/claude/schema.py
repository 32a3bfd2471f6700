"""Column names and explicit schemas of the Claude Code frames, defined once.

Imports: polars only. Every other ``claude_*`` module takes its column names from here, so
a rename happens in one place and the frames keep one explicit schema each (no inference).
"""

from __future__ import annotations

import polars as pl

UTC_TIME = pl.Datetime("us", "UTC")
STRINGS = pl.List(pl.String)

# Event columns (one row per JSONL line that is a JSON object with a string ``type``).
SOURCE_FILE = "source_file"
LINE = "line"
FILE_SESSION_ID = "file_session_id"
IS_SUBAGENT_FILE = "is_subagent_file"
SESSION_ID = "session_id"
UUID = "uuid"
PARENT_UUID = "parent_uuid"
TYPE = "type"
SUBTYPE = "subtype"
TIMESTAMP = "timestamp"
HAS_ENVELOPE = "has_envelope"
IS_SIDECHAIN = "is_sidechain"
IS_META = "is_meta"
IS_COMPACT_SUMMARY = "is_compact_summary"
IS_API_ERROR = "is_api_error"
HAS_INTERRUPTED_ID = "has_interrupted_id"
AGENT_ID = "agent_id"
CWD = "cwd"
GIT_BRANCH = "git_branch"
VERSION = "version"
MODEL = "model"
MESSAGE_ID = "message_id"
REQUEST_ID = "request_id"
STOP_REASON = "stop_reason"
INPUT_TOKENS = "input_tokens"
CACHE_CREATION_TOKENS = "cache_creation_tokens"
CACHE_READ_TOKENS = "cache_read_tokens"
OUTPUT_TOKENS = "output_tokens"
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

# Content blocks: one row per piece of text the heuristic buckets measure.
ROW = "row"
KIND = "kind"
NAME = "name"
BLOCK_ID = "id"
TEXT = "text"
BLOCK_KINDS = ("prompt", "text", "thinking", "tool_use", "tool_result", "system")
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

# Problems: one row per line that could not be used whole.
REASON = "reason"
PROBLEMS_SCHEMA = pl.Schema({SOURCE_FILE: pl.String(), LINE: pl.Int64(), REASON: pl.String()})

# Heuristic buckets (the ChainlessChain ``cc context`` breakdown keys, snake_case).
TOKENS_SYSTEM = "tokens_system"
TOKENS_USER = "tokens_user"
TOKENS_ASSISTANT = "tokens_assistant"
TOKENS_TOOL = "tokens_tool"
TOKENS_TOOL_CALLS = "tokens_tool_calls"
BUCKETS = (TOKENS_SYSTEM, TOKENS_USER, TOKENS_ASSISTANT, TOKENS_TOOL, TOKENS_TOOL_CALLS)
ESTIMATED_TOKENS = "estimated_tokens"

# Window columns.
WINDOW = "window"
EFFECTIVE_WINDOW = "effective_window"
AUTOCOMPACT_THRESHOLD = "autocompact_threshold"
USED_FRACTION = "used_fraction"
HEADROOM = "headroom"
OCCUPANCY = "occupancy"

# Turn columns.
TURN_INDEX = "turn_index"
ROLE = "role"
EVENT_UUIDS = "event_uuids"
PROMPT = "prompt"
START_TIME = "start_time"
END_TIME = "end_time"
TOOL_CALLS = "tool_calls"
TOOL_NAMES = "tool_names"
TOOL_ERRORS = "tool_errors"
COMPACTED = "compacted"
ESTIMATED_CONTEXT = "estimated_context"
CALIBRATION = "calibration"

TURNS_SCHEMA = pl.Schema(
    {
        SOURCE_FILE: pl.String(),
        SESSION_ID: pl.String(),
        AGENT_ID: pl.String(),
        IS_SUBAGENT_FILE: pl.Boolean(),
        TURN_INDEX: pl.Int64(),
        ROLE: pl.String(),
        EVENT_UUIDS: STRINGS,
        PROMPT: pl.String(),
        START_TIME: UTC_TIME,
        END_TIME: UTC_TIME,
        TOOL_CALLS: pl.Int64(),
        TOOL_NAMES: STRINGS,
        TOOL_ERRORS: pl.Int64(),
        MODEL: pl.String(),
        OCCUPANCY: pl.Int64(),
        COMPACTED: pl.Boolean(),
        WINDOW: pl.Int64(),
        EFFECTIVE_WINDOW: pl.Int64(),
        AUTOCOMPACT_THRESHOLD: pl.Int64(),
        USED_FRACTION: pl.Float64(),
        HEADROOM: pl.Int64(),
        **{bucket: pl.Int64() for bucket in BUCKETS},
        ESTIMATED_TOKENS: pl.Int64(),
        ESTIMATED_CONTEXT: pl.Int64(),
        CALIBRATION: pl.Float64(),
    }
)

# Session columns.
PROJECT = "project"
PROJECT_DIR = "project_dir"
FIRST_TIME = "first_time"
LAST_TIME = "last_time"
MODELS = "models"
LAST_MODEL = "last_model"
TURNS = "turns"
LAST_OCCUPANCY = "last_occupancy"
PEAK_OCCUPANCY = "peak_occupancy"
COMPACTIONS = "compactions"
COMPACTION_PRE_TOKENS = "compaction_pre_tokens"
COMPACTION_TRIGGERS = "compaction_triggers"
COMPACTION_POST_TOKENS = "compaction_post_tokens"
CACHE_HIT_RATIO = "cache_hit_ratio"
FILES = "files"
SUBAGENT_FILES = "subagent_files"
EVENTS = "events"
REQUESTS = "requests"
CONTEXT_ESTIMATE = "context_estimate"

SESSIONS_SCHEMA = pl.Schema(
    {
        SESSION_ID: pl.String(),
        PROJECT: pl.String(),
        PROJECT_DIR: pl.String(),
        FIRST_TIME: UTC_TIME,
        LAST_TIME: UTC_TIME,
        MODELS: STRINGS,
        LAST_MODEL: pl.String(),
        TURNS: pl.Int64(),
        LAST_OCCUPANCY: pl.Int64(),
        PEAK_OCCUPANCY: pl.Int64(),
        WINDOW: pl.Int64(),
        EFFECTIVE_WINDOW: pl.Int64(),
        AUTOCOMPACT_THRESHOLD: pl.Int64(),
        USED_FRACTION: pl.Float64(),
        HEADROOM: pl.Int64(),
        INPUT_TOKENS: pl.Int64(),
        CACHE_CREATION_TOKENS: pl.Int64(),
        CACHE_READ_TOKENS: pl.Int64(),
        OUTPUT_TOKENS: pl.Int64(),
        CACHE_HIT_RATIO: pl.Float64(),
        REQUESTS: pl.Int64(),
        COMPACTIONS: pl.Int64(),
        COMPACTION_TRIGGERS: STRINGS,
        COMPACTION_PRE_TOKENS: pl.List(pl.Int64()),
        COMPACTION_POST_TOKENS: pl.List(pl.Int64()),
        **{bucket: pl.Int64() for bucket in BUCKETS},
        ESTIMATED_TOKENS: pl.Int64(),
        CONTEXT_ESTIMATE: pl.Int64(),
        CALIBRATION: pl.Float64(),
        FILES: pl.Int64(),
        SUBAGENT_FILES: pl.Int64(),
        EVENTS: pl.Int64(),
    }
)
