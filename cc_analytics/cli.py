"""Command-line entry point: parse options, dispatch to ``cc_analytics.commands.<name>``.

Imports: argparse, ``errors``, ``format`` and the command modules (each imports its heavy
dependencies lazily). Every error a command raises on purpose is printed here, by one function.
"""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

from cc_analytics.commands import COMMANDS
from cc_analytics.errors import CCAnalyticsError, UsageError
from cc_analytics.format import colour_enabled, error_line


def build_parser() -> argparse.ArgumentParser:
    """The ``cc-analytics`` argument parser with every available sub-command."""
    parser = argparse.ArgumentParser(
        prog="cc-analytics",
        description="Analytics for Claude Code and ChainlessChain session transcripts.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS:
        try:
            module = importlib.import_module(f"cc_analytics.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"cc_analytics.commands.{name}":
                raise
            continue
        module.add_parser(sub)
        sub.choices[name].set_defaults(parser=sub.choices[name])
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run the CLI; returns the process exit code (0 ok, 1 domain error, 2 usage error)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    try:
        return int(args.run(args) or 0)
    except UsageError as exc:
        args.parser.error(str(exc))  # prints the usage and exits 2
        raise  # not reached
    except CCAnalyticsError as exc:
        sys.stderr.write(error_line(str(exc), colour=colour_enabled(sys.stderr)))
        return 1
    except BrokenPipeError:
        return 1
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
