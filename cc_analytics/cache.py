"""The one folder where cc_analytics keeps what it can make again (standard library only).

``$CC_ANALYTICS_CACHE_DIR``, else ``$XDG_CACHE_HOME/cc-analytics``, else ``~/.cache/cc-analytics``.
It holds the price book of the installed genai-prices (``frames.prices``) and the Vega bundle
of the installed vl-convert (``report``). Deleting it only costs the time to make them again.
"""

from __future__ import annotations

import os
from pathlib import Path


def cache_dir() -> Path:
    """The cache folder (not created here).

    Examples:
        >>> import os
        >>> os.environ["CC_ANALYTICS_CACHE_DIR"] = "/tmp/cc-cache"
        >>> str(cache_dir())
        '/tmp/cc-cache'
        >>> del os.environ["CC_ANALYTICS_CACHE_DIR"]
    """
    folder = os.environ.get("CC_ANALYTICS_CACHE_DIR")
    if folder:
        return Path(folder)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "cc-analytics"
