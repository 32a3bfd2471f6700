"""Claude Code transcripts as Polars frames (one package per format, same module names)."""
