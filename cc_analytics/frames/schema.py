"""Column names and the schemas every format shares: sessions, turns, requests and problems.

Imports: polars only, on first use of a dtype or schema (the names are plain strings). Every
format package (``frames.registry`` lists them) builds its sessions, turns, requests and
problems frames in these schemas, so the front (``frames.read_sessions(..., format="auto")``)
concatenates them as they are; a rename happens here and nowhere else. Format-specific
columns (the events frames) and each format's ``format`` value live in its package's
``schema`` module.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl

# The format of a row (a registered format's name: ``frames.registry``).
FORMAT = "format"

# Columns several frames share.
SOURCE_FILE = "source_file"
LINE = "line"
SESSION_ID = "session_id"
AGENT_ID = "agent_id"
IS_SUBAGENT_FILE = "is_subagent_file"
MODEL = "model"
PROVIDER = "provider"
INPUT_TOKENS = "input_tokens"
CACHE_CREATION_TOKENS = "cache_creation_tokens"
CACHE_READ_TOKENS = "cache_read_tokens"
OUTPUT_TOKENS = "output_tokens"
COST_USD = "cost_usd"
UNPRICED_REQUESTS = "unpriced_requests"

# Problems: one row per line (or file: ``line`` null) that could not be used whole.
REASON = "reason"

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
MESSAGES = "messages"
OCCUPANCY_SOURCE = "occupancy_source"
CONTEXT_ESTIMATE = "context_estimate"

# Requests: one row per API request (Claude Code: deduplicated by message id + request id,
# last line wins, main chain and subagents alike; ChainlessChain: one ``token_usage`` record
# each). Token columns follow Anthropic's convention: ``input_tokens`` is the *uncached*
# input, and the prompt of a request is input + both cache writes + cache read.
IS_SIDECHAIN = "is_sidechain"
REQUEST_ID = "request_id"
MESSAGE_ID = "message_id"
TIME = "time"
CACHE_CREATION_5M_TOKENS = "cache_creation_5m_tokens"
CACHE_CREATION_1H_TOKENS = "cache_creation_1h_tokens"
WEB_SEARCH_REQUESTS = "web_search_requests"
SERVICE_TIER = "service_tier"
SPEED = "speed"
TOTAL_TOKENS = "total_tokens"
# Output tokens spent on reasoning, already counted in ``output_tokens`` (null where a format
# does not record them: Claude Code, ChainlessChain).
REASONING_TOKENS = "reasoning_tokens"
# The limits frame (``LIMITS_SCHEMA``): a plan's rate-limit windows as an agent reported them.
LIMIT_WINDOW = "limit_window"
WINDOW_MINUTES = "window_minutes"
USED_PERCENT = "used_percent"
RESETS_AT = "resets_at"
PLAN_TYPE = "plan_type"
LIMITS_ORIGIN = "origin"
# The windows by their length, as the limits frame names them whatever the agent called them.
LIMIT_NAMES = {300: "five_hour", 10_080: "seven_day"}
# The composition frame (``COMPOSITION_SCHEMA``): what filled a window at each turn, part by part.
CATEGORY = "category"
ITEM = "item"
ENTERED_TOKENS = "entered_tokens"
DROPPED_TOKENS = "dropped_tokens"
TOKENS = "tokens"
BASELINE = "baseline"
UNCALIBRATED_ERROR = "uncalibrated_error"
# The parts, in the order the frame lists them (``baseline``: what the agent sends without
# writing it down, the system prompt, tool definitions and memory files).
CATEGORIES = ("baseline", "memory", "system", "summary", "user", "assistant", "thinking", "tool_call", "tool_result")
# The findings frame (``FINDINGS_SCHEMA``): what is worth a look in a window, one row per finding.
UUID = "uuid"
FINDING_KIND = "kind"
RANK = "rank"
TARGET = "target"
PART_TOKENS = "part_tokens"
COUNT = "count"
SECONDS = "seconds"
RATIO = "ratio"
# The kinds of finding, in the order the frame lists them.
FINDING_KINDS = (
    "largest_item",
    "repeated_read",
    "window_jump",
    "peak_window",
    "tool_definitions",
    "mcp_server",
    "cache_rebuild",
    "cache_hit",
)
# The five priced token kinds, in the order of the schema.
TOKEN_KINDS = (INPUT_TOKENS, CACHE_CREATION_5M_TOKENS, CACHE_CREATION_1H_TOKENS, CACHE_READ_TOKENS, OUTPUT_TOKENS)

# The dtypes and schemas, made on first use (PEP 562 ``__getattr__`` below): the column names
# above are plain strings, so a worker process that only walks lines never imports Polars.
_TYPED = frozenset(
    (
        "UTC_TIME",
        "STRINGS",
        "PROBLEMS_SCHEMA",
        "TURNS_SCHEMA",
        "SESSIONS_SCHEMA",
        "REQUESTS_SCHEMA",
        "LIMITS_SCHEMA",
        "CATEGORY_ENUM",
        "COMPOSITION_SCHEMA",
        "FINDING_KIND_ENUM",
        "FINDINGS_SCHEMA",
    )
)

if TYPE_CHECKING:
    UTC_TIME: pl.Datetime
    STRINGS: pl.List
    PROBLEMS_SCHEMA: pl.Schema
    TURNS_SCHEMA: pl.Schema
    SESSIONS_SCHEMA: pl.Schema
    REQUESTS_SCHEMA: pl.Schema
    LIMITS_SCHEMA: pl.Schema
    CATEGORY_ENUM: pl.Enum
    COMPOSITION_SCHEMA: pl.Schema
    FINDING_KIND_ENUM: pl.Enum
    FINDINGS_SCHEMA: pl.Schema


def _types() -> dict[str, Any]:
    import polars as pl

    UTC_TIME = pl.Datetime("us", "UTC")
    STRINGS = pl.List(pl.String)
    PROBLEMS_SCHEMA = pl.Schema({SOURCE_FILE: pl.String(), LINE: pl.Int64(), REASON: pl.String()})

    TURNS_SCHEMA = pl.Schema(
        {
            FORMAT: pl.String(),
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
            COST_USD: pl.Float64(),
            UNPRICED_REQUESTS: pl.Int64(),
        }
    )

    SESSIONS_SCHEMA = pl.Schema(
        {
            FORMAT: pl.String(),
            SESSION_ID: pl.String(),
            PROJECT: pl.String(),
            PROJECT_DIR: pl.String(),
            FIRST_TIME: UTC_TIME,
            LAST_TIME: UTC_TIME,
            MODELS: STRINGS,
            LAST_MODEL: pl.String(),
            PROVIDER: pl.String(),
            TURNS: pl.Int64(),
            LAST_OCCUPANCY: pl.Int64(),
            PEAK_OCCUPANCY: pl.Int64(),
            OCCUPANCY_SOURCE: pl.String(),
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
            COST_USD: pl.Float64(),
            UNPRICED_REQUESTS: pl.Int64(),
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
            MESSAGES: pl.Int64(),
        }
    )

    REQUESTS_SCHEMA = pl.Schema(
        {
            FORMAT: pl.String(),
            SESSION_ID: pl.String(),
            PROJECT: pl.String(),
            AGENT_ID: pl.String(),
            IS_SIDECHAIN: pl.Boolean(),
            REQUEST_ID: pl.String(),
            MESSAGE_ID: pl.String(),
            TIME: UTC_TIME,
            MODEL: pl.String(),
            PROVIDER: pl.String(),
            INPUT_TOKENS: pl.Int64(),
            CACHE_CREATION_5M_TOKENS: pl.Int64(),
            CACHE_CREATION_1H_TOKENS: pl.Int64(),
            CACHE_READ_TOKENS: pl.Int64(),
            OUTPUT_TOKENS: pl.Int64(),
            REASONING_TOKENS: pl.Int64(),
            WEB_SEARCH_REQUESTS: pl.Int64(),
            SERVICE_TIER: pl.String(),
            SPEED: pl.String(),
            COST_USD: pl.Float64(),
        }
    )
    LIMITS_SCHEMA = pl.Schema(
        {
            FORMAT: pl.String(),
            SESSION_ID: pl.String(),
            TIME: UTC_TIME,
            LIMIT_WINDOW: pl.String(),
            WINDOW_MINUTES: pl.Int64(),
            USED_PERCENT: pl.Float64(),
            RESETS_AT: UTC_TIME,
            PLAN_TYPE: pl.String(),
            LIMITS_ORIGIN: pl.String(),
            SOURCE_FILE: pl.String(),
            LINE: pl.Int64(),
        }
    )
    CATEGORY_ENUM = pl.Enum(CATEGORIES)
    COMPOSITION_SCHEMA = pl.Schema(
        {
            FORMAT: pl.String(),
            SESSION_ID: pl.String(),
            SOURCE_FILE: pl.String(),
            TURN_INDEX: pl.Int64(),
            COMPACTIONS: pl.Int64(),
            CATEGORY: CATEGORY_ENUM,
            ITEM: pl.String(),
            ESTIMATED_TOKENS: pl.Int64(),
            ENTERED_TOKENS: pl.Int64(),
            DROPPED_TOKENS: pl.Int64(),
            TOKENS: pl.Int64(),
            OCCUPANCY: pl.Int64(),
            BASELINE: pl.Int64(),
            CALIBRATION: pl.Float64(),
            UNCALIBRATED_ERROR: pl.Int64(),
            COMPACTED: pl.Boolean(),
        }
    )
    FINDING_KIND_ENUM = pl.Enum(FINDING_KINDS)
    FINDINGS_SCHEMA = pl.Schema(
        {
            FORMAT: pl.String(),
            SESSION_ID: pl.String(),
            PROJECT: pl.String(),
            SOURCE_FILE: pl.String(),
            TURN_INDEX: pl.Int64(),
            LINE: pl.Int64(),
            UUID: pl.String(),
            TIME: UTC_TIME,
            FINDING_KIND: FINDING_KIND_ENUM,
            RANK: pl.Int64(),
            CATEGORY: CATEGORY_ENUM,
            ITEM: pl.String(),
            TARGET: pl.String(),
            TOKENS: pl.Int64(),
            PART_TOKENS: pl.Int64(),
            COST_USD: pl.Float64(),
            COUNT: pl.Int64(),
            SECONDS: pl.Float64(),
            RATIO: pl.Float64(),
        }
    )
    return {name: value for name, value in locals().items() if name in _TYPED}


if not TYPE_CHECKING:

    def __getattr__(name: str) -> Any:
        if name not in _TYPED:
            msg = f"module {__name__!r} has no attribute {name!r}"
            raise AttributeError(msg)
        globals().update(_types())
        return globals()[name]
