"""Limbic Studio core: store, embedder, scorer, search pipeline, memory service and MCP server. No Qt here."""
