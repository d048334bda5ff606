-- Schema version 16: keyword search in Chinese, Japanese and Korean (docs/scoring.md "Chinese, Japanese and
-- Korean"). FTS5's unicode61 keeps a run of Han, kana or Hangul characters as one token, so a word inside it is
-- never found. entity_cjk_fts holds the columns of entity_fts for the entities whose text holds such characters,
-- each character spaced into a token of its own by the store (core/store/text_search.py), so that a query's
-- CJK piece, a phrase of its characters, matches wherever they stand together; same tokenizer, so both engines
-- rank it with FTS5's BM25. Written by the store beside entity_fts; contentless, rows deleted by rowid. The
-- rows of the entities already stored are written by the store right after this step, in its transaction.
CREATE VIRTUAL TABLE entity_cjk_fts USING fts5(
    name, entity_type, obs_text,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
);
