-- Schema version 13: named bearer tokens of the MCP HTTP transport (docs/mcp.md "Teams").
-- Every `limbic mcp --http` server on this memory accepts them. Only the SHA-256 hex digest of a token is
-- stored, never the token. A revoked token keeps its row (and its name) with the time it was revoked.
CREATE TABLE mcp_tokens (name TEXT PRIMARY KEY, token_hash TEXT NOT NULL UNIQUE, created_at REAL NOT NULL, revoked_at REAL);
