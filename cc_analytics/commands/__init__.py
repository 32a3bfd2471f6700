"""CLI sub-commands: one module per command, each with ``add_parser(subparsers)`` and ``run(args)``.

Imports: may import ``frames``/``core`` lazily inside ``run``; never ``views`` at module level.
"""

COMMANDS = ("context", "sessions", "usage", "window", "report", "statusline", "archive", "cache")
