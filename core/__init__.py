"""Limbic Studio core: store, embedder, scorer, search pipeline, memory service and MCP server. No Qt here."""


def version() -> str:
    """The installed distribution's version (``limbic-studio``, e.g. ``0.1.0``); ``0`` when the code runs from a
    tree that was never installed."""
    from importlib import metadata  # here: the app's launcher imports this package before its window shows

    try:
        return metadata.version("limbic-studio")
    except metadata.PackageNotFoundError:
        return "0"
