-- Schema version 12: curation (docs/curation.md).
-- What a person looked at in the review queue and chose to keep as it is ("keep both", "keep"), so that it
-- is not proposed again. The key names the decision's subjects by id: "observations:<a>:<b>" (two
-- observations, a < b, that are not duplicates), "entities:<a>:<b>" (two entities that are not the same
-- thing), "split:<entity id>", "orphan:<entity id>", "placeholder:<entity id>". No foreign keys, so that
-- undoing a deletion (which restores the old ids) finds them again; keys of rows deleted for good are
-- never matched.
CREATE TABLE curation_kept (
    key TEXT PRIMARY KEY,
    at  REAL NOT NULL
) WITHOUT ROWID;
