"""Prices of one request, without Polars: the price book, genai-prices' answers, the scalar cost.

Imports: the standard library and ``frames.schema`` (plain column names);
``genai_prices`` only when a key is not in the :class:`PriceBook`. ``frames.prices`` prices
whole frames with these lookups (vectorised); :func:`request_cost` is its scalar twin for one
request (what ``cc-analytics statusline`` sums, where Polars would cost more than the work),
tested equal to :func:`~cc_analytics.frames.prices.price_requests` on generated requests: the
same price periods, long-context tiers, picodollar arithmetic and rounding. The rules (which
requests are free, unknown or of an unknown mode) are described in ``frames.prices``.
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Callable
from datetime import UTC, date, datetime, time
from decimal import ROUND_HALF_EVEN, Decimal
from functools import cache
from operator import mul
from pathlib import Path
from typing import Any, NamedTuple

from cc_analytics.frames.schema import (
    CACHE_CREATION_1H_TOKENS,
    CACHE_CREATION_5M_TOKENS,
    CACHE_READ_TOKENS,
    INPUT_TOKENS,
    OUTPUT_TOKENS,
    SERVICE_TIER,
    SPEED,
    TOKEN_KINDS,
    WEB_SEARCH_REQUESTS,
)

SYNTHETIC = "<synthetic>"
LOCAL_PROVIDERS = frozenset({"ollama", "lmstudio", "llamacpp", "llama.cpp", "vllm", "localai", "local"})
# ChainlessChain provider names that genai-prices spells otherwise.
PROVIDER_ALIASES = {"kimi": "moonshotai", "moonshot": "moonshotai", "claude": "anthropic"}
PRICED, FREE, UNKNOWN, UNKNOWN_MODE = "priced", "free", "unknown", "unknown mode"
# The speed and service tier a price list's base prices are for; any other value must have
# its own prices (a variant), else the request has no price.
STANDARD = "standard"
# What each priced quantity is called in the price table, and how many units one price buys.
PRICE_COLUMNS = {
    INPUT_TOKENS: ("input_mtok", 1_000_000),
    CACHE_CREATION_5M_TOKENS: ("cache_write_5m_mtok", 1_000_000),
    CACHE_CREATION_1H_TOKENS: ("cache_write_1h_mtok", 1_000_000),
    CACHE_READ_TOKENS: ("cache_read_mtok", 1_000_000),
    OUTPUT_TOKENS: ("output_mtok", 1_000_000),
    WEB_SEARCH_REQUESTS: ("web_search_k", 1_000),
}
# The tokens that make up the prompt of a request (what long-context tiers are decided on).
PROMPT_KINDS = TOKEN_KINDS[:-1]
_PROMPT_SIZE = len(PROMPT_KINDS)
SCALE = 12  # prices are held as integers of 1e-12 USD per unit (picodollars)
EPOCH = date(1970, 1, 1)


class Band(NamedTuple):
    """Prices of one long-context tier: they apply when the prompt exceeds ``above`` tokens."""

    above: int | None
    per_unit: tuple[int, ...]  # picodollars per token (per search), in PRICE_COLUMNS order
    request: int  # picodollars per request


class Resolved(NamedTuple):
    """A model as genai-prices knows it, and the instants at which its prices change."""

    provider_id: str | None
    model_id: str
    change_dates: tuple[date, ...]
    change_times: tuple[time, ...]


Priced = tuple[str, str | None, str | None, tuple[Band, ...] | None]


# ------------------------------------------------------------------ one request


def request_cost(
    *,
    model: str | None,
    time: datetime | None,
    provider: str | None = None,
    speed: str | None = None,
    service_tier: str | None = None,
    input_tokens: int | None = 0,
    cache_creation_5m_tokens: int | None = 0,
    cache_creation_1h_tokens: int | None = 0,
    cache_read_tokens: int | None = 0,
    output_tokens: int | None = 0,
    web_search_requests: int | None = 0,
) -> float | None:
    """What :func:`~cc_analytics.frames.prices.price_requests` sets as ``cost_usd`` for one
    request with these columns (None for an unknown model or mode; a null count is 0).

    Examples:
        >>> from datetime import UTC, datetime
        >>> at = datetime(2026, 1, 5, 10, tzinfo=UTC)
        >>> request_cost(model="claude-opus-4-5", time=at, input_tokens=1_000_000, output_tokens=40_000)
        6.0
        >>> request_cost(model="<synthetic>", time=at, output_tokens=10), request_cost(model="mystery-1", time=at)
        (0.0, None)
    """
    cost = request_picodollars(
        model=model,
        time=time,
        provider=provider,
        speed=speed,
        service_tier=service_tier,
        counts=(
            input_tokens,
            cache_creation_5m_tokens,
            cache_creation_1h_tokens,
            cache_read_tokens,
            output_tokens,
            web_search_requests,
        ),
    )
    return None if cost is None else to_usd(cost)


def request_picodollars(
    *,
    model: str | None,
    time: datetime | None,
    provider: str | None,
    speed: str | None,
    service_tier: str | None,
    counts: tuple[int | None, ...],
) -> int | None:
    """:func:`request_cost` in whole picodollars, ``counts`` in ``PRICE_COLUMNS`` order (exact to sum).

    Examples:
        >>> request_picodollars(
        ...     model="claude-haiku-4-5", time=None, provider=None, speed=None, service_tier=None,
        ...     counts=(1000, 0, 0, 0, 0, 0),
        ... )
        1000000000
    """
    start = price_period(resolve(provider, model), time)
    tiers = bands(provider, model, speed, service_tier, start)[3]
    if tiers is None:
        return None
    quantities = [count or 0 for count in counts]
    band = tiers[0]
    if len(tiers) > 1:
        prompt = sum(quantities[:_PROMPT_SIZE])
        # Every tier whose threshold the prompt is over counts (a prompt over a tier's threshold
        # pays that tier's rate for every token), as the vectorised pricing counts them.
        band = tiers[sum(1 for tier in tiers[1:] if tier.above is not None and prompt > tier.above)]
    # (The status line prices every request of a session this way: map, not a generator.)
    return band.request + sum(map(mul, quantities, band.per_unit))  # both in PRICE_COLUMNS order


def to_usd(picodollars: int) -> float:
    """Picodollars as the ``Float64`` dollars of ``cost_usd`` (one rounding, as the frames do it).

    Examples:
        >>> to_usd(1_234_500_000_000)
        1.2345
    """
    return float(picodollars) / 10.0**SCALE


def price_period(resolved: Resolved | None, moment: datetime | None) -> datetime:
    """The start of the model's own price period holding ``moment`` (None: the latest period).

    Examples:
        >>> model = Resolved("anthropic", "m", (date(2026, 3, 13),), ())
        >>> price_period(model, datetime(2026, 3, 12, 23, tzinfo=UTC)).isoformat()
        '1970-01-01T00:00:00+00:00'
        >>> price_period(model, None).isoformat()
        '2026-03-13T00:00:00+00:00'
    """
    if resolved is None:
        return datetime.combine(EPOCH, time(0), UTC)
    if moment is None:
        return _period_start(resolved, None, None)
    moment = moment.astimezone(UTC)
    # Most models change prices by day only: their requests of one day share an answer.
    return _period_start(resolved, moment.date(), moment.time() if resolved.change_times else None)


@cache
def _period_start(resolved: Resolved, day: date | None, clock: time | None) -> datetime:
    """:func:`price_period` of a UTC day and time of day (None: the latest period)."""
    if day is None:
        start = max(resolved.change_dates, default=EPOCH)
    else:
        start = max((d for d in resolved.change_dates if d <= day), default=EPOCH)
    if clock is None:
        tod = max(resolved.change_times, default=time(0)) if day is None else time(0)
    else:
        tod = max((t for t in resolved.change_times if t <= clock), default=time(0))
    return datetime.combine(start, tod, UTC)


def save_book() -> None:
    """Write what genai-prices answered in this process to the price book (see :class:`PriceBook`)."""
    BOOK.save()


# ------------------------------------------------------------------ the price book


class PriceBook:
    """What genai-prices answered (models resolved, prices per key), kept on disk.

    Loading genai-prices costs about 0.3 CPU seconds per process, more than pricing a
    gigabyte of transcripts once it is loaded; its answers for the few dozen keys a corpus
    holds fit in a small JSON file. The file is named after the library's price data (its
    size and modification time), so a new genai-prices is asked afresh; it lives in
    :func:`cc_analytics.cache.cache_dir`. A file that cannot be read or written is no book: every
    answer is then asked for again, never guessed.
    """

    FORMAT = 2  # bump when what is stored (or how it is probed) changes

    def __init__(self) -> None:
        self._entries: dict[str, Any] | None = None
        self._dirty = False
        self._path: Path | None = None

    def path(self) -> Path | None:
        """Where the book of the installed genai-prices lives (None without genai-prices)."""
        spec = importlib.util.find_spec("genai_prices")
        if spec is None or not spec.submodule_search_locations:
            return None
        try:
            data = os.stat(Path(next(iter(spec.submodule_search_locations))) / "data.py")
        except OSError:
            return None
        from cc_analytics.cache import cache_dir

        return cache_dir() / f"prices-{self.FORMAT}-{data.st_size}-{data.st_mtime_ns}.json"

    def recall(self, kind: str, key: tuple[Any, ...], ask: Callable[..., Any]) -> Any:
        """The stored answer to ``ask(*key)``, asking (and storing) it the first time."""
        entries = self._load()
        name = kind + json.dumps(key, separators=(",", ":"), ensure_ascii=False, default=datetime.isoformat)
        if name in entries:
            return _DECODE[kind](entries[name])
        value = ask(*key)
        entries[name] = _ENCODE[kind](value)
        self._dirty = True
        return value

    def save(self) -> None:
        """Write the new answers (the whole book, replaced atomically)."""
        if not self._dirty or self._path is None:
            return
        self._dirty = False
        temporary = self._path.with_name(f".{self._path.name}.{os.getpid()}.tmp")
        try:
            self._path.parent.mkdir(parents=True, exist_ok=True)
            # ASCII with escapes: a name that is not valid Unicode (lone surrogates) is kept too.
            temporary.write_bytes(json.dumps(self._entries, separators=(",", ":")).encode("ascii"))
            os.replace(temporary, self._path)
        except OSError:
            temporary.unlink(missing_ok=True)

    def _load(self) -> dict[str, Any]:
        if self._entries is None:
            self._entries = {}
            self._path = self.path()
            if self._path is not None:
                try:
                    stored = json.loads(self._path.read_bytes())
                except (OSError, ValueError):  # ValueError: not JSON, or not UTF-8
                    stored = None
                if isinstance(stored, dict):
                    self._entries = stored
        return self._entries


def _encode_resolved(value: Resolved | None) -> Any:
    if value is None:
        return None
    dates = [d.isoformat() for d in value.change_dates]
    return [value.provider_id, value.model_id, dates, [t.isoformat() for t in value.change_times]]


def _decode_resolved(value: Any) -> Resolved | None:
    if value is None:
        return None
    provider_id, model_id, dates, times = value
    return Resolved(provider_id, model_id, tuple(map(date.fromisoformat, dates)), tuple(map(time.fromisoformat, times)))


def _encode_priced(value: Priced) -> Any:
    status, provider, model, bands = value
    stored = None if bands is None else [[band.above, list(band.per_unit), band.request] for band in bands]
    return [status, provider, model, stored]


def _decode_priced(value: Any) -> Priced:
    status, provider, model, stored = value
    bands = None if stored is None else tuple(Band(above, tuple(units), request) for above, units, request in stored)
    return status, provider, model, bands


_ENCODE: dict[str, Callable[[Any], Any]] = {"resolved": _encode_resolved, "bands": _encode_priced}
_DECODE: dict[str, Callable[[Any], Any]] = {"resolved": _decode_resolved, "bands": _decode_priced}
BOOK = PriceBook()


# ------------------------------------------------------------------ asking genai-prices


@cache
def resolve(provider: str | None, model: str | None) -> Resolved | None:
    """Find the model in genai-prices, first under the recorded provider, then by name alone.

    None for no model, ``<synthetic>``, a local provider or a model genai-prices does not know.

    Examples:
        >>> resolve("kimi", "kimi-k2").provider_id, resolve(None, "claude-opus-4-5-20251101").model_id
        ('moonshotai', 'claude-opus-4-5')
        >>> resolve(None, "mystery-1") is None
        True
    """
    if model is None or model == SYNTHETIC or (provider or "").lower() in LOCAL_PROVIDERS:
        return None
    return BOOK.recall("resolved", (provider, model), _ask_resolve)


def _ask_resolve(provider: str | None, model: str) -> Resolved | None:
    from genai_prices import Usage, calc_price
    from genai_prices.types import ConditionalPrice, StartDateConstraint, TimeOfDateConstraint

    provider_id = PROVIDER_ALIASES.get((provider or "").lower(), provider)
    for candidate in dict.fromkeys((provider_id, None)):
        try:
            found = calc_price(
                Usage(), model, provider_id=candidate, genai_request_timestamp=datetime(2000, 1, 1, tzinfo=UTC)
            )
        except LookupError:
            continue
        constraints = (
            [price.constraint for price in found.model.prices if isinstance(price, ConditionalPrice)]
            if isinstance(found.model.prices, list)
            else []
        )
        constraints += [variant.constraint for variant in found.model.price_variants or ()]
        dates = {c.start_date for c in constraints if isinstance(c, StartDateConstraint)}
        times = {
            _utc_time(t) for c in constraints if isinstance(c, TimeOfDateConstraint) for t in (c.start_time, c.end_time)
        }
        return Resolved(candidate, found.model.id, tuple(sorted(dates)), tuple(sorted(times)))
    return None


def _utc_time(moment: time) -> time:
    if moment.tzinfo is None:
        return moment
    return datetime.combine(EPOCH, moment).astimezone(UTC).time()


@cache
def bands(
    provider: str | None, model: str | None, speed: str | None, service_tier: str | None, start: datetime
) -> Priced:
    """Status, genai-prices' provider and model ids, and the prices of each tier at ``start``.

    Examples:
        >>> status, _, model, tiers = bands(None, "claude-sonnet-4-5", None, None, datetime(2026, 1, 5, tzinfo=UTC))
        >>> status, model, [tier.above for tier in tiers], tiers[0].per_unit[0]
        ('priced', 'claude-sonnet-4-5', [None, 200000], 3000000)
    """
    if model == SYNTHETIC or (provider or "").lower() in LOCAL_PROVIDERS:
        return FREE, None, None, (Band(None, (0,) * len(PRICE_COLUMNS), 0),)
    resolved = resolve(provider, model)
    if resolved is None:
        return UNKNOWN, None, None, None
    assert model is not None  # resolved implies a model name
    # Asked at the start of the model's own period: the same answer for any start inside it,
    # so frames (whose periods are cut over all their models) and single requests share keys.
    start = price_period(resolved, start)
    return BOOK.recall("bands", (resolved.provider_id, model, speed, service_tier, start), _ask_bands)


def _ask_bands(
    provider_id: str | None, model: str, speed: str | None, service_tier: str | None, start: datetime
) -> Priced:
    from genai_prices import Usage, calc_price
    from genai_prices.types import TieredPrices

    context = {name: value for name, value in ((SPEED, speed), (SERVICE_TIER, service_tier)) if value}

    def total(**usage: int) -> Decimal:
        calculation = calc_price(
            Usage(**usage),
            model,
            provider_id=provider_id,
            genai_request_timestamp=start,
            price_context=context or None,
        )
        return calculation.total_price

    found = calc_price(
        Usage(), model, provider_id=provider_id, genai_request_timestamp=start, price_context=context or None
    )
    variants = [v for v in found.model.price_variants or () if v.constraint is None or v.constraint.active(start)]
    for key, value in context.items():
        if value != STANDARD and not any(variant.when.get(key) == value for variant in variants):
            return UNKNOWN_MODE, found.provider.id, found.model.id, None
    thresholds = sorted(
        {
            tier.start
            for value in vars(found.model_price).values()
            if isinstance(value, TieredPrices)
            for tier in value.tiers
        }
    )
    fixed = total()
    tiers = []
    for above in (None, *thresholds):
        n = 1 if above is None else above + 1  # a prompt size inside this tier
        base = total(input_tokens=n)
        probes = (
            base - fixed,
            total(input_tokens=n, cache_write_tokens=n, cache_write_5m_tokens=n) - fixed,
            total(input_tokens=n, cache_write_tokens=n, cache_write_1h_tokens=n) - fixed,
            total(input_tokens=n, cache_read_tokens=n) - fixed,
            total(input_tokens=n, output_tokens=n) - base,
            total(input_tokens=n, web_searches=n) - base,
        )
        tiers.append(Band(above, tuple(picodollars(probe / n) for probe in probes), picodollars(fixed)))
    return PRICED, found.provider.id, found.model.id, tuple(tiers)


def picodollars(usd: Decimal) -> int:
    """Whole picodollars (1e-12 USD) of a price: exact for any price published with at most six
    decimals per million.

    Examples:
        >>> picodollars(Decimal("3") / 1_000_000), picodollars(Decimal("0.3") / 1_000_000)
        (3000000, 300000)
    """
    return int(usd.scaleb(SCALE).to_integral_value(ROUND_HALF_EVEN))
