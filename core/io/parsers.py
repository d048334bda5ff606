"""Tolerant reading of knowledge-graph memory files into one normalised parse.

Reads every shape real agent memory files have: standard memory-server JSONL
(``{"type":"entity",…}`` / ``{"type":"relation",…}``), ``{"type":"_aim"}`` marker lines, ``_type``
for ``type``, relation keys ``from``/``to``, ``from_entity``/``to_entity``, ``source``/``target``,
records without a type, relations nested in entity records, ``{"type":"observation"}`` records,
plain-text lines, observations that are objects or XML leftovers, duplicate names, graph-database
dumps (``{"id","labels","properties"}`` nodes and ``{"type","from","to"}`` edges by id), one
pretty-printed ``{"entities":[…],"relations":[…]}`` (or ``nodes``/``edges``/``links``) document,
a BOM, CRLF, no final newline, UTF-16 with a BOM. Timestamps (``createdAt``/``updatedAt``/…, ISO or
epoch s/ms) are kept as UTC unix seconds.

Nothing here touches the database. Whole-file failures (not text, not UTF-8/16, empty) raise
:class:`~limbic.core.errors.ImportFormatError`; everything else becomes a :class:`LineIssue`.
"""

from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from limbic.core.errors import ImportFormatError
from limbic.core.io.records import LineIssue, ParsedEntity, ParsedObservation, ParsedRelation, RecordReader
from limbic.core.io.reflection_records import ParsedReflection

__all__ = [
    "LineIssue", "ParseResult", "ParsedEntity", "ParsedObservation", "ParsedRelation",
    "decode", "parse_bytes", "parse_file", "parse_text",
]


@dataclass(slots=True)
class ParseResult:
    """The normalised content of one file.

    ``stats`` counts: ``lines``, ``markers``, ``entity_records``, ``relation_records`` (nested ones
    included), ``observation_records``, ``graph_nodes``, ``entities_merged`` (duplicate names
    folded), ``relations_duplicate``, ``observations_listed`` (strings in standard lists, what the
    corpus manifest counts), ``observations_recovered`` (from objects / XML leftovers),
    ``observations_derived`` (from descriptions, properties, extra fields), ``observations_recorded``
    (texts of observation records), ``observations_duplicate``
    (repeated texts dropped), ``observations_split`` (extra parts of texts over 10,000 characters).
    ``reflections``: the reflection records (:mod:`.reflection_records`).
    """

    path: str | None
    format: str
    entities: list[ParsedEntity]
    relations: list[ParsedRelation]
    issues: list[LineIssue]
    stats: Counter
    reflections: list[ParsedReflection] = field(default_factory=list)


def parse_file(path: str | Path) -> ParseResult:
    """Read and parse one file. Raises ImportFormatError if it cannot be read as text at all."""
    path = Path(path)
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ImportFormatError(f"{path}: cannot read the file: {exc.strerror or exc}") from exc
    return parse_bytes(data, str(path))


def parse_bytes(data: bytes, path: str | None = None) -> ParseResult:
    """Decode (UTF-8 with or without BOM, UTF-16 with BOM) and parse. Raises ImportFormatError."""
    return parse_text(decode(data, path), path)


def decode(data: bytes, path: str | None = None) -> str:
    """The text of a memory file; ImportFormatError for binary data, other encodings, or no content."""
    label = path or "input"
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        text = data.decode("utf-16")
    else:
        if b"\x00" in data:
            raise ImportFormatError(f"{label}: binary data (NUL bytes), not a JSON or JSONL memory file")
        try:
            text = data.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line = data.count(b"\n", 0, exc.start) + 1
            raise ImportFormatError(
                f"{label}: not UTF-8 text (invalid byte at line {line}); save the file as UTF-8 and retry"
            ) from exc
    if not text.strip():
        raise ImportFormatError(f"{label}: the file is empty")
    return text


def parse_text(text: str, path: str | None = None) -> ParseResult:
    """Parse decoded text: a single JSON document when the whole text is one, else JSON lines."""
    reader = RecordReader()
    document = _whole_document(text)
    if document is not None:
        fmt = "json-document"
        reader.stats["lines"] = text.count("\n") + 1
        _feed_document(reader, document)
    else:
        fmt = "jsonl"
        _feed_lines(reader, text)
    entities, relations = reader.finish()
    if reader.stats["graph_nodes"]:
        fmt += "+graph-dump"
    return ParseResult(path, fmt, entities, relations, reader.issues, reader.stats, reader.reflections)


def _whole_document(text: str) -> Any | None:
    stripped = text.lstrip("\ufeff \t\r\n")
    if not stripped.startswith(("{", "[")):
        return None
    first_line = stripped.split("\n", 1)[0].strip()
    try:
        json.loads(first_line)
        single_line_ok = True
    except ValueError:
        single_line_ok = False
    if single_line_ok:
        return None
    try:
        document = json.loads(stripped)
    except ValueError:
        return None
    return document if isinstance(document, dict | list) else None


def _feed_document(reader: RecordReader, document: Any) -> None:
    if isinstance(document, list):
        for index, item in enumerate(document):
            reader.record(item, None, f"[{index}]")
        return
    if _is_container(document):
        reader.container(document, None)
    else:
        reader.record(document, None, "document")


def _is_container(obj: Any) -> bool:
    if not isinstance(obj, dict) or "type" in obj:
        return False
    return any(
        isinstance(obj.get(k), list) for k in ("entities", "relations", "nodes", "edges", "links")
    ) and not any(k in obj for k in ("name", "entityName"))


def _feed_lines(reader: RecordReader, text: str) -> None:
    decoder = json.JSONDecoder()
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    reader.stats["lines"] = len(lines)
    for number, raw in enumerate(lines, 1):
        line = raw.strip().lstrip("\ufeff").strip()
        if not line:
            continue
        values, problem = _decode_line(decoder, line)
        if problem is not None:
            reader.issue(number, "recovered" if values else "skipped", problem)
        for value in values:
            if _is_container(value):
                reader.container(value, number)
            elif isinstance(value, list):
                others = [item for item in value if not isinstance(item, dict)]
                for item in value:
                    if isinstance(item, dict):
                        reader.record(item, number, None)
                if others:
                    reader.issue(number, "skipped", f"a JSON array with {len(others)} value(s) that are not "
                                 f"records: {json.dumps(others, ensure_ascii=False)[:60]}")
            else:
                reader.record(value, number, None)


def _decode_line(decoder: json.JSONDecoder, line: str) -> tuple[list[Any], str | None]:
    """All JSON values on one line and a problem, if any (several objects back to back are accepted,
    and a trailing comma; text after the last value is reported)."""
    if line.endswith(",") and line[:1] in "{[":
        line = line[:-1].rstrip()
    values: list[Any] = []
    position = 0
    while position < len(line):
        try:
            value, end = decoder.raw_decode(line, position)
        except json.JSONDecodeError as exc:
            if not values:
                kind = "plain text" if line[:1] not in "{[\"" else "invalid JSON"
                return [], f"{kind}, not a JSON record ({exc.msg} at column {exc.colno}): {line[:80]!r}"
            return values, f"text after the JSON record ignored: {line[position:position + 60]!r}"
        values.append(value)
        position = end
        while position < len(line) and line[position] in " \t,;":
            position += 1
    return values, None
