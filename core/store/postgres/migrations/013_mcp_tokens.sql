-- Schema version 13 (as SQLite's 013_mcp_tokens.sql): named bearer tokens of the MCP HTTP transport
-- (docs/mcp.md "Teams"), only their SHA-256 hex digest; a revoked token keeps its row.
CREATE TABLE mcp_tokens (
    name       text COLLATE "C" PRIMARY KEY,
    token_hash text COLLATE "C" NOT NULL UNIQUE,
    created_at double precision NOT NULL,
    revoked_at double precision
);
