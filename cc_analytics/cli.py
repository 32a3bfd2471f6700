"""Command-line entry point: parse options, dispatch to ``cc_analytics.commands.<name>``.

Imports: ``errors``, ``format``, ``interrupts`` and the command modules (each
imports its heavy dependencies lazily); argparse once a parser is built (``statusline`` alone
needs none). Every error a command raises on purpose is printed here, by one function.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Sequence
from typing import TYPE_CHECKING

from cc_analytics import __version__
from cc_analytics.commands import COMMANDS
from cc_analytics.errors import CCAnalyticsError, UsageError
from cc_analytics.format import colour_enabled, error_line
from cc_analytics.interrupts import clean_up, exit_code, exit_promptly, hold_signals, leave

if TYPE_CHECKING:
    import argparse

# Commands that never say they run without the C extension: the status line prints its one line
# and nothing else (Claude Code runs it after every message), and ``window`` reads with the core
# library, which has no C path.
QUIET_WITHOUT_EXTENSION = frozenset({"statusline", "window"})


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The ``cc-analytics`` argument parser with every available sub-command (or ``only`` that
    one: a command named on the command line imports no other command's module, which keeps
    ``statusline`` quick)."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="cc-analytics",
        description="Analytics for AI coding-agent session transcripts (Claude Code, Codex and more: see `sessions --help`).",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for name in COMMANDS if only is None else (only,):
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
    """Run the CLI; returns the process exit code (0 ok, 1 domain error, 2 usage error,
    130 Ctrl-C, 143 SIGTERM: see ``cc_analytics.interrupts``).

    Without ``argv`` the process is the command (console script, ``python -m``): once the
    command is done (or interrupted and cleaned up) it exits at once, without the interpreter's
    own teardown (a fifth of a second once Polars is loaded, and some milliseconds of the status
    line's budget); SIGINT and SIGTERM have their default action meanwhile.
    """
    with exit_promptly(restore=argv is not None):
        try:
            code = _run(argv)
        except KeyboardInterrupt as interrupt:  # Ctrl-C (ours or Polars'), or SIGTERM as Terminated
            hold_signals()
            clean_up()  # worker pools of generators the interrupt left suspended
            code = exit_code(interrupt)
            if argv is None:
                leave(code)
            return code
    if argv is None and sys.getprofile() is None and sys.gettrace() is None:
        # Every command closes what it writes and ends its workers before it returns. (Under a
        # profiler or a tracer, coverage for one, the interpreter ends as usual: they write
        # what they gathered as it does.)
        leave(code)
    return code


def _run(argv: Sequence[str] | None) -> int:
    words = list(sys.argv[1:] if argv is None else argv)
    if words == ["statusline"]:
        # Claude Code runs it after every message: no parser is built (argparse, its help
        # formatter and gettext cost about 10 ms of a 100 ms budget), and it has no options.
        from cc_analytics.commands.statusline import print_status_line

        return print_status_line()
    if argv is None:
        # The process is the command: Polars (imported later, and by the worker processes, which
        # inherit the environment) runs every query on its in-memory engine unless the user chose
        # one. Our frames are batches of megabytes, on which the default engine spends more
        # setting a query up than running it (``frames.engine.BATCH_ENGINE``).
        from cc_analytics.frames.engine import BATCH_ENGINE, POLARS_ENGINE_ENV

        os.environ.setdefault(POLARS_ENGINE_ENV, BATCH_ENGINE)
    parser = build_parser(words[0] if words and words[0] in COMMANDS else None)
    args = parser.parse_args(words)
    if args.command is None:
        parser.print_help(sys.stderr)
        return 2
    if args.command not in QUIET_WITHOUT_EXTENSION and not getattr(args, "quiet", False):
        note_without_extension()
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


def note_without_extension() -> None:
    """Say on stderr that transcripts are read without the C extension, when it could not be
    imported; not when pure Python was asked for (``CC_ANALYTICS_PURE_PYTHON``: the user knows).
    Called once per run, before any worker process starts (they never say it)."""
    from cc_analytics.frames import extension

    why = extension.missing()
    if why is None:
        return
    sys.stderr.write(
        f"note: reading transcripts without the C extension, several times slower ({why})\n"
        "Hint: reinstall cc_analytics where a C compiler and Python's headers are (Debian: apt-get install gcc "
        f"python3-dev), or set {extension.PURE_PYTHON_ENV}=1 to read in pure Python without this note\n"
    )


if __name__ == "__main__":
    sys.exit(main())
