"""``cc-analytics cache info|clear``: what the kept tables hold, and emptying them.

Imports: argparse, the standard library and ``format``; ``frames.tablecache`` inside ``run``.
The tables every reader keeps between runs (``frames.tablecache``) live in the cache folder
(``$CC_ANALYTICS_CACHE_DIR``, else ``$XDG_CACHE_HOME/cc-analytics``, else
``~/.cache/cc-analytics``); ``info`` says where, how many sessions, and how big against the
bound; ``clear`` removes them (the next run reads every transcript again).
"""

from __future__ import annotations

import argparse
import sys


def add_parser(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "cache",
        help="what the cache of decoded sessions holds (info), or empty it (clear)",
        description=(
            "Every reader keeps the tables of the sessions it decoded (sessions, turns, problems, priced "
            "requests) in the cache folder, so that the next run only stats the transcripts and decodes "
            "what changed. `info` says where the cache is, what it holds and its bound "
            "(CC_ANALYTICS_CACHE_MAX_MB); `clear` empties it. `--no-cache` on a command reads without it."
        ),
    )
    parser.add_argument("action", choices=("info", "clear"), help="info: what it holds; clear: remove it")
    parser.add_argument("--json", action="store_true", help="info as one JSON object")
    parser.set_defaults(run=run)


def run(args: argparse.Namespace) -> int:
    from cc_analytics.frames import tablecache

    if args.action == "clear":
        freed = tablecache.clear()
        print(f"removed {_megabytes(freed)} of cached tables from {tablecache.root().parent}", file=sys.stderr)
        return 0
    facts = tablecache.info()
    if args.json:
        import orjson

        sys.stdout.write(orjson.dumps(facts, option=orjson.OPT_INDENT_2).decode() + "\n")
        return 0
    lines = [
        f"folder       {facts['folder']}",
        f"sessions     {facts['sessions']:,} in {facts['packs']:,} pack{'s' * (facts['packs'] != 1)}"
        f" ({facts['plans']:,} source{'s' * (facts['plans'] != 1)} planned)",
        f"outputs      {facts['outputs']:,} command output{'s' * (facts['outputs'] != 1)} kept whole",
        f"size         {_megabytes(facts['bytes'])} of at most {_megabytes(facts['max_bytes'])}",
    ]
    if facts["other_versions_bytes"]:
        lines.append(
            f"stale        {_megabytes(facts['other_versions_bytes'])} kept by another version (removed next run)"
        )
    print("\n".join(lines))
    return 0


def _megabytes(count: int) -> str:
    """Bytes as megabytes, for people.

    Examples:
        >>> _megabytes(27_400_000), _megabytes(0)
        ('27.4 MB', '0.0 MB')
    """
    return f"{count / 1e6:,.1f} MB"
