"""The data behind the graph view's *Who wrote it* and *What fades next* colourings, read off the UI thread.

:class:`Lenses` asks the service (:mod:`limbic.core.service.provenance`) for each entity's last writer, or for
what fades within a horizon (the service's forecast: what the lifecycle rules would propose by then), when that
colouring is on and again after every change; it says per drawn node what to colour (:meth:`origins_of`,
:meth:`fades_of`) and what the legend's detail list shows (an origin's writes in order, the fading memories with
the date each crosses). Reading records nothing.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from functools import partial

import numpy as np
from PySide6.QtCore import QObject, Signal

from limbic.core.models import iso
from limbic.core.service import provenance
from limbic.core.service.provenance import Fade, Write, WriteOrigins
from limbic.gui.controller import AppController
from limbic.gui.graph.colouring import origin_colours, origin_label

DEFAULT_DAYS = 30
DETAIL_ROWS = 300


class Lenses(QObject):
    """See the module docstring; ``changed`` is emitted when new data arrived (the view redraws)."""

    changed = Signal()

    def __init__(self, controller: AppController, channel: str, parent: QObject | None = None) -> None:
        super().__init__(parent)
        self.controller = controller
        self.channel = channel
        self.origins: WriteOrigins | None = None
        self.colours: dict[str, int] = {}  # origin → colour code, kept while the app runs
        self.days: float = DEFAULT_DAYS
        self.until: float = time.time() + DEFAULT_DAYS * provenance.DAY  # the end of the window read last (UTC seconds)
        self.fades: list[Fade] | None = None
        self.writes: tuple[str, list[Write]] | None = None  # the chosen origin and its writes

    def refresh(self, mode: str) -> None:
        """Read again what ``mode`` ("origin" or "fades") needs; other modes need nothing."""
        service = self.controller.service
        if mode == "origin":
            self.controller.run(provenance.write_origins, service, on_success=self._origins,
                                channel=self.channel + "-origins")
        elif mode == "fades":
            days, now = self.days, time.time()
            self.until = now + days * provenance.DAY
            self.controller.run(partial(provenance.fading_next, now=now), service, days,
                                on_success=lambda found: self._fades(days, found), channel=self.channel + "-fades")

    def set_days(self, days: float) -> None:
        self.days = float(days)
        self.fades = None
        self.refresh("fades")

    def _origins(self, found: WriteOrigins) -> None:
        self.origins = found
        self.colours = origin_colours(found.counts, self.colours)
        self.changed.emit()

    def _fades(self, days: float, found: list[Fade]) -> None:
        if days == self.days:
            self.fades = found
            self.changed.emit()

    def origins_of(self, ids: np.ndarray) -> list[str | None]:
        """The origin of each entity's last write (``None``: unknown, or not read yet)."""
        last = self.origins.last if self.origins is not None else {}
        return [last.get(i) for i in np.asarray(ids).tolist()]

    def fades_of(self, ids: np.ndarray) -> list[str | None]:
        """How each entity fades within the horizon (the soonest: "expires" or "forgotten"), ``None`` if not."""
        first: dict[int, str] = {}
        for fade in self.fades or ():
            first.setdefault(fade.entity_id, fade.kind)
        return [first.get(i) for i in np.asarray(ids).tolist()]

    def fading_ids(self) -> list[int]:
        return list(dict.fromkeys(f.entity_id for f in self.fades or ()))

    def until_date(self) -> str:
        """The last day of the window, ``YYYY-MM-DD`` (UTC)."""
        return (iso(self.until) or "")[:10]

    def fade_rows(self) -> list[tuple[str, str]]:
        """``(text, entity name)`` per fading memory, soonest first: the date it crosses and what."""
        rows = []
        for fade in (self.fades or [])[:DETAIL_ROWS]:
            what = f"“{fade.detail}” expires" if fade.kind == provenance.EXPIRES else \
                f"proposed for forgetting: {fade.detail}"
            rows.append((f"{(iso(fade.at) or '')[:10]} · {fade.name}\n{what}", fade.name))
        return rows

    def load_writes(self, origin: str, done: Callable[[], None]) -> None:
        """Read ``origin``'s writes in order (off the UI thread); ``done`` follows."""
        def loaded(found: list[Write]) -> None:
            self.writes = (origin, found)
            done()

        self.controller.run(provenance.writes_by, self.controller.service, origin,
                            on_success=loaded, channel=self.channel + "-writes")

    def write_rows(self) -> list[tuple[str, str]]:
        """``(text, first entity name)`` per write of the chosen origin, oldest first."""
        if self.writes is None:
            return []
        rows = []
        for write in self.writes[1][-DETAIL_ROWS:]:
            names = ", ".join(write.names[:3]) + (f" +{len(write.names) - 3}" if len(write.names) > 3 else "")
            rows.append((f"{(iso(write.at) or '')[:16].replace('T', ' ')} · {write.op}\n{names or '—'}",
                         write.names[0] if write.names else ""))
        return rows

    def shown_origins(self, origins: Sequence[str | None]) -> list[str]:
        """The origins of the drawn nodes in legend order (most drawn first), as :func:`by_origin` lists them."""
        counts: dict[str, int] = {}
        for origin in origins:
            if origin is not None:
                counts[origin] = counts.get(origin, 0) + 1
        return sorted(counts, key=lambda o: (-counts[o], o))

    @staticmethod
    def label(origin: str) -> str:
        return origin_label(origin)
