"""Compact storage of a :class:`~limbic.core.search.candidates.CandidateSet` in the search log.

Every numeric array of the candidate set is kept exactly (same dtype, same bytes), with its scalar
fields (query, limit, mode, strategy, now, …), so that :func:`limbic.core.search.pipeline.rerank` of
the unpacked set with any ``ScoringParams`` gives the ranking it would have given at search time.
Display data (names, types, observation texts) is not kept: an unpacked set carries empty strings
there, and results are identified by ``entity_ids``. The layout is a JSON header (field names,
dtypes, shapes, scalars) followed by the raw array bytes, zlib-compressed (about 1 KB for 30
candidates). New array fields added to ``CandidateSet`` are stored without a change here.
"""

from __future__ import annotations

import dataclasses
import json
import struct
import zlib
from typing import Any

import numpy as np

from limbic.core.errors import ValidationError
from limbic.core.search.candidates import CandidateSet

FORMAT_VERSION = 1
_HEADER = struct.Struct("<BI")  # format version, header length in bytes


def pack(candidates: CandidateSet) -> bytes:
    """The candidate set as bytes: arrays exact, display text left out (see the module docstring)."""
    arrays: list[dict[str, Any]] = []
    scalars: dict[str, Any] = {}
    texts: list[str] = []
    chunks: list[bytes] = []
    for f in dataclasses.fields(candidates):
        value = getattr(candidates, f.name)
        if isinstance(value, np.ndarray):
            data = np.ascontiguousarray(value)
            arrays.append({"name": f.name, "dtype": data.dtype.str, "shape": list(data.shape)})
            chunks.append(data.tobytes())
        elif isinstance(value, tuple):
            texts.append(f.name)
        else:
            scalars[f.name] = value
    header = json.dumps({"arrays": arrays, "scalars": scalars, "texts": texts}, separators=(",", ":")).encode()
    return zlib.compress(_HEADER.pack(FORMAT_VERSION, len(header)) + header + b"".join(chunks), 6)


def unpack(blob: bytes) -> CandidateSet:
    """The candidate set stored by :func:`pack`; text fields hold ``""`` (or empty tuples) per candidate.

    Raises:
        ValidationError: the bytes are not a packed candidate set of a known format version.
    """
    try:
        raw = zlib.decompress(blob)
        version, length = _HEADER.unpack_from(raw)
        if version != FORMAT_VERSION:
            raise ValueError(f"format version {version}")
        header = json.loads(raw[_HEADER.size:_HEADER.size + length])
        offset = _HEADER.size + length
        values: dict[str, Any] = dict(header["scalars"])
        for spec in header["arrays"]:
            dtype = np.dtype(spec["dtype"])
            count = int(np.prod(spec["shape"], dtype=np.int64))
            values[spec["name"]] = np.frombuffer(raw, dtype=dtype, count=count, offset=offset).reshape(spec["shape"])
            offset += count * dtype.itemsize
        n = len(values["entity_ids"])
        known = {f.name for f in dataclasses.fields(CandidateSet)}
        for name in header["texts"]:
            values[name] = ((),) * n if name == "observations" else ("",) * n
        return CandidateSet(**{k: v for k, v in values.items() if k in known})
    except (zlib.error, struct.error, ValueError, KeyError, TypeError) as exc:
        raise ValidationError("a logged candidate set could not be read (corrupt or from a newer version)") from exc
