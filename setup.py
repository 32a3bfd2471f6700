"""Build the optional C extensions of the formats (the Claude Code walker's line skimmer, the
Codex lean scan's loop, the Copilot CLI event walk); the package works without them.

Everything else about the build is in ``pyproject.toml``. Without a C compiler an extension
is skipped (``optional=True``) and its format reads every line in Python.
"""

from setuptools import Extension, setup

setup(
    ext_modules=[
        Extension(
            "cc_analytics.frames.claude._skim",
            sources=["cc_analytics/frames/claude/_skim.c"],
            depends=["cc_analytics/frames/_jsonscan.h", "cc_analytics/frames/_jsonscan_parse.h"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension(
            "cc_analytics.frames.codex._scan",
            sources=["cc_analytics/frames/codex/_scan.c"],
            depends=["cc_analytics/frames/_jsonscan.h", "cc_analytics/frames/_jsonscan_parse.h"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
        Extension(
            "cc_analytics.frames.copilot._events",
            sources=["cc_analytics/frames/copilot/_events.c"],
            depends=["cc_analytics/frames/_jsonscan.h", "cc_analytics/frames/_jsonscan_parse.h"],
            extra_compile_args=["-O2"],
            optional=True,
        ),
    ]
)
