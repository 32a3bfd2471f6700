"""ChainlessChain session stores as Polars frames (one package per format, same module names)."""
