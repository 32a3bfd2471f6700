"""Build the optional C skimmer of the Claude Code walker; the package works without it.

Everything else about the build is in ``pyproject.toml``. Without a C compiler the extension
is skipped (``optional=True``) and the walker reads every line in Python.
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
        )
    ]
)
