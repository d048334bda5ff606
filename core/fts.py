"""Turn any user text into a safe FTS5 ``MATCH`` expression (user text is never FTS syntax).

The text is split on white space; each piece becomes one quoted FTS5 string (``"`` doubled inside), so
``*``, ``-x``, ``a:b``, ``NEAR(``, ``AND``/``OR``/``NOT``, parentheses and ``^`` are plain text. A
quoted piece such as ``"a:b"`` is a phrase: the ``unicode61`` tokenizer splits it into ``a`` ``b``
and matches them adjacent. Pieces are joined with ``OR`` so BM25 ranks rows by how many and how
rare the matched words are (candidate retrieval wants recall; the re-ranker orders them).

Control characters (NUL included, which FTS5 rejects) and lone surrogates become spaces; pieces with no letter or digit
(only punctuation or emoji, which the tokenizer drops) are left out. Text longer than
2,000 characters (``validation.MAX_QUERY``) raises :class:`~limbic.core.errors.ValidationError`.
"""

from __future__ import annotations

import unicodedata

from .errors import ValidationError
from .validation import MAX_QUERY


def _clean(text: str) -> str:
    return "".join(" " if unicodedata.category(ch) in ("Cc", "Cs") else ch for ch in text)


def fts_terms(text: str) -> list[str]:
    """The white-space separated pieces of ``text`` that contain at least one letter or digit, in order, without repeats."""
    if not isinstance(text, str):
        raise ValidationError(f"search text must be a string, got {type(text).__name__}")
    if len(text) > MAX_QUERY:
        raise ValidationError(f"query is {len(text)} characters long; the limit is {MAX_QUERY:,}")
    terms: list[str] = []
    for piece in _clean(text).split():
        if any(ch.isalnum() for ch in piece) and piece not in terms:
            terms.append(piece)
    return terms


def quote_term(term: str) -> str:
    """One FTS5 string literal: ``term`` in double quotes, inner double quotes doubled."""
    return '"' + term.replace('"', '""') + '"'


def fts_match_expression(text: str) -> str | None:
    """A safe FTS5 ``MATCH`` expression for ``text`` (quoted pieces joined with ``OR``), or ``None``
    when ``text`` has nothing searchable (empty, white space, only punctuation).

    Raises:
        ValidationError: ``text`` is not a string or longer than 2,000 characters.
    """
    terms = fts_terms(text)
    if not terms:
        return None
    return " OR ".join(quote_term(term) for term in terms)
