"""The token window of a ChainlessChain session: the model and provider tables and the resolution rule.

Imports: polars and ``frames.chainless.schema``. Rules (``cc-context.md`` §5–6):

* shown model = ``--model`` or the recorded (header) model, else none; shown provider =
  ``--provider`` or the recorded provider, else ``ollama``;
* the window is the last main ``token_usage`` record's ``contextWindow`` when it passed the
  decoder's checks and no flag conflicts with the record (a flag that differs from the
  record's model or provider, or is given while the record lacks that field);
* else the table: the model's entry, else the provider's default, else 32,768.
"""

from __future__ import annotations

import polars as pl

from cc_analytics.frames.chainless import schema as S

DEFAULT_WINDOW = 32768
DEFAULT_PROVIDER = "ollama"
MODEL_WINDOWS: dict[str, int] = {
    "qwen2.5:7b": 32768,
    "qwen2.5:14b": 32768,
    "qwen2.5-coder:14b": 32768,
    "qwen2:7b": 32768,
    "llama3:8b": 8192,
    "mistral:7b": 32768,
    "codellama:7b": 16384,
    "gpt-4o": 128000,
    "gpt-4o-mini": 128000,
    "gpt-4-turbo": 128000,
    "gpt-3.5-turbo": 16385,
    "o1": 200000,
    "claude-opus-4-6": 200000,
    "claude-sonnet-4-6": 200000,
    "doubao-seed-1-6-251015": 32768,
    "claude-haiku-4-5-20251001": 200000,
    "deepseek-chat": 64000,
    "deepseek-coder": 64000,
    "deepseek-reasoner": 64000,
    "qwen-turbo": 131072,
    "qwen-plus": 131072,
    "qwen-max": 32768,
    "gemini-2.0-flash": 1048576,
    "gemini-2.0-pro": 1048576,
    "gemini-1.5-flash": 1048576,
    "moonshot-v1-auto": 131072,
    "moonshot-v1-8k": 8192,
    "moonshot-v1-32k": 32768,
    "moonshot-v1-128k": 131072,
    "doubao-seed-2-1-pro-260628": 32768,
}
PROVIDER_WINDOWS: dict[str, int] = {
    "ollama": 32768,
    "openai": 128000,
    "anthropic": 200000,
    "deepseek": 64000,
    "dashscope": 131072,
    "gemini": 1048576,
    "kimi": 131072,
    "volcengine": 32768,
    "minimax": 32768,
    "mistral": 32768,
}


def table_window(model: pl.Expr | str, provider: pl.Expr | str) -> pl.Expr:
    """Window from the tables: exact model entry, else provider default, else 32768.

    Examples:
        >>> frame = pl.DataFrame({"m": ["gpt-4o", "unknown", None], "p": ["ollama", "deepseek", "acme"]})
        >>> frame.select(table_window("m", "p")).to_series().to_list()
        [128000, 64000, 32768]
    """
    model = pl.col(model) if isinstance(model, str) else model
    provider = pl.col(provider) if isinstance(provider, str) else provider
    by_model = model.replace_strict(MODEL_WINDOWS, default=None, return_dtype=pl.Int64)
    by_provider = provider.replace_strict(PROVIDER_WINDOWS, default=None, return_dtype=pl.Int64)
    return pl.coalesce(by_model, by_provider, pl.lit(DEFAULT_WINDOW, dtype=pl.Int64))


def shown_model(flag: str | None = None) -> pl.Expr:
    """The model a session is reported with: ``flag``, else the recorded one, else null."""
    if flag:
        return pl.lit(flag, dtype=pl.String)
    return pl.col(S.RECORDED_MODEL).replace("", None)


def shown_provider(flag: str | None = None) -> pl.Expr:
    """The provider a session is reported with: ``flag``, else the recorded one, else ``ollama``."""
    if flag:
        return pl.lit(flag, dtype=pl.String)
    return pl.col(S.RECORDED_PROVIDER).replace("", None).fill_null(DEFAULT_PROVIDER)


def resolved_window(model: str | None = None, provider: str | None = None) -> pl.Expr:
    """The window of each row of a files frame, sized with the ``--model``/``--provider`` flags.

    Needs the ``FILES_SCHEMA`` header and record columns; an empty flag is no flag.
    """
    conflict = pl.lit(False)
    if model:
        conflict = conflict | pl.col(S.RECORD_MODEL).ne_missing(pl.lit(model))
    if provider:
        conflict = conflict | pl.col(S.RECORD_PROVIDER).ne_missing(pl.lit(provider))
    recorded_ok = pl.col(S.RECORD_WINDOW).is_not_null() & ~conflict
    return (
        pl.when(recorded_ok)
        .then(pl.col(S.RECORD_WINDOW))
        .otherwise(table_window(shown_model(model), shown_provider(provider)))
    )
