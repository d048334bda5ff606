"""Table model of ranked search results over an immutable list (Picard's ``LogViewModel`` shape).

Columns: rank, name and final score first (what a narrow dock must show), then Δrank against the
default parameters, limbic and base (the base relevance: cosine and keyword match fused); the rest of a result
(the raw cosine, RRF, type, routing) is in the cells' tooltips and the scoring inspector, so the table fits a
laptop's side column without a horizontal scroll bar. Long names are elided in the middle by the view. The row tint says the same as the
Δrank number (:data:`DELTA_LEGEND`): green rows rank higher than with the default parameters, red ones lower. The model never computes a score and never touches the database: it shows
``SearchResult`` values handed to :meth:`ResultsModel.set_results` in one call: a new number of rows
is a model reset; a re-rank of the same number of rows is one ``dataChanged`` over the range of rows
whose shown values changed (the view repaints those cells without laying itself out again), and
nothing at all when no shown value changed.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from PySide6.QtCore import QAbstractTableModel, QModelIndex, QPersistentModelIndex, Qt
from PySide6.QtGui import QBrush, QColor, QFont

COLUMNS = ("rank", "name", "final", "Δrank", "limbic", "base")
STRETCH_COLUMN = COLUMNS.index("name")  # gets the width left; the others are as wide as their content
COLUMN_TIPS = {
    "rank": "Rank with the current parameters",
    "Δrank": "Places gained (▲, green row) or lost (▼, red row) against the default parameters; "
             "● not ranked with the default parameters",
    "final": "Routing blend w·cosine + (1−w)·limbic_norm; the ranking key",
    "limbic": "cosine × salience × temporal × co-occurrence × status × metadata",
    "base": "Base relevance: the cosine max(0, 1 − distance) fused with the keyword match (the inspector's first "
            "line); 0.2 + 0.6·norm_rrf for full-text-only hits (in italics). The raw cosine is in the cell's tooltip",
}
ROUTING_LABELS = {"cosine_heavy": "cosine-heavy", "limbic_heavy": "limbic-heavy", "hybrid_balanced": "balanced"}
RESULT_ROLE = int(Qt.ItemDataRole.UserRole) + 1  # the SearchResult of the row
DISPLAY = int(Qt.ItemDataRole.DisplayRole)
MOVED_UP = QColor(60, 160, 90, 70)     # ranks higher than with the default parameters
MOVED_DOWN = QColor(200, 80, 70, 70)   # ranks lower
DELTA_LEGEND = ("vs defaults: "
                "<span style='background: rgba(60,160,90,110)'>&nbsp;▲&nbsp;higher&nbsp;</span> "
                "<span style='background: rgba(200,80,70,110)'>&nbsp;▼&nbsp;lower&nbsp;</span>")
_UP_BRUSH, _DOWN_BRUSH = QBrush(MOVED_UP), QBrush(MOVED_DOWN)
_RIGHT = int(Qt.AlignmentFlag.AlignRight | Qt.AlignmentFlag.AlignVCenter)
_TEXT_COLUMNS = frozenset({COLUMNS.index("name")})
_BASE = COLUMNS.index("base")


def rank_delta(name: str, rank: int, default_ranks: Mapping[str, int]) -> int | None:
    """Places gained against the default ranking (positive = moved up); ``None`` if absent there."""
    default = default_ranks.get(name)
    return None if default is None else default - rank


class ResultsModel(QAbstractTableModel):
    """Rows = ``SearchResult`` values in rank order.

    ``default_ranks`` maps entity names to their rank under the default parameters: the Δrank number
    and the row tint.
    """

    def __init__(self, parent: Any = None) -> None:
        super().__init__(parent)
        self._rows: tuple = ()
        self._default_ranks: dict[str, int] = {}
        self._texts: dict[int, tuple[str, ...]] = {}  # display texts per row, filled on first paint
        self._keys: list[tuple] = []  # per row: every value its cells show (see _row_keys)
        self._italic = QFont()
        self._italic.setItalic(True)
        self._handlers = {
            DISPLAY: self._display_role, RESULT_ROLE: self._result_role,
            int(Qt.ItemDataRole.TextAlignmentRole): self._alignment_role,
            int(Qt.ItemDataRole.BackgroundRole): self._background_role,
            int(Qt.ItemDataRole.FontRole): self._font_role, int(Qt.ItemDataRole.ToolTipRole): self._tooltip_role,
        }

    # --- content -------------------------------------------------------------------------------

    def set_results(self, results: Sequence[Any], default_ranks: Mapping[str, int] | None = None) -> None:
        """Replace every row; ``default_ranks=None`` keeps the current mapping (a re-rank of the same search)."""
        results = tuple(results)
        same_shape = len(results) == len(self._rows) and len(results) > 0
        if not same_shape:
            self.beginResetModel()
        self._rows = results
        if default_ranks is not None:
            self._default_ranks = dict(default_ranks)
        keys, old_keys = self._row_keys(), self._keys
        self._keys = keys
        if not same_shape:
            self._texts = {}
            self.endResetModel()
            return
        # A re-rank: same number of rows — repaint only the rows whose shown values changed.
        changed = [row for row, (new, old) in enumerate(zip(keys, old_keys, strict=True)) if new != old]
        if not changed:
            return
        for row in changed:
            self._texts.pop(row, None)
        self.dataChanged.emit(self.index(changed[0], 0), self.index(changed[-1], len(COLUMNS) - 1))

    def _row_keys(self) -> list[tuple]:
        """Per row, every value shown in its cells (texts, tint, italics): equal keys, equal cells.

        Scores are shown with four decimals, so they are compared rounded to four (``round`` and the
        ``.4f`` format round the same way)."""
        default = self._default_ranks
        keys = []
        for r in self._rows:
            rrf = None if r.rrf_score is None else round(r.rrf_score, 4)
            keys.append((r.name, r.rank, default.get(r.name),
                         round(r.final_score, 4), round(r.limbic_score, 4), round(r.base_relevance, 4), rrf,
                         r.distance is None, r.entity_type, r.routing_strategy))
        return keys

    def clear(self) -> None:
        self.beginResetModel()
        self._rows = ()
        self._texts = {}
        self._keys = []
        self._default_ranks = {}
        self.endResetModel()

    def results(self) -> tuple:
        return self._rows

    def result(self, row: int) -> Any:
        return self._rows[row]

    def row_of(self, name: str) -> int:
        """Row of the entity ``name`` or −1."""
        for i, r in enumerate(self._rows):
            if r.name == name:
                return i
        return -1

    def delta(self, row: int) -> int | None:
        r = self._rows[row]
        return rank_delta(r.name, r.rank, self._default_ranks)

    # --- Qt model interface ----------------------------------------------------------------------

    def rowCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(self._rows)

    def columnCount(self, parent: QModelIndex | QPersistentModelIndex = QModelIndex()) -> int:  # noqa: B008
        return 0 if parent.isValid() else len(COLUMNS)

    def headerData(self, section: int, orientation: Qt.Orientation, role: int = Qt.ItemDataRole.DisplayRole):
        if orientation != Qt.Orientation.Horizontal:
            return None
        if role == Qt.ItemDataRole.DisplayRole:
            return COLUMNS[section]
        if role == Qt.ItemDataRole.ToolTipRole:
            return COLUMN_TIPS.get(COLUMNS[section])
        return None

    def data(self, index: QModelIndex | QPersistentModelIndex, role: int = DISPLAY):
        # Called for every role of every visible cell on each repaint: one dict lookup, cached texts.
        handler = self._handlers.get(role)
        if handler is None or not index.isValid():
            return None
        return handler(index.row(), index.column())

    def _display_role(self, row: int, column: int) -> str:
        texts = self._texts.get(row)
        if texts is None:
            r = self._rows[row]
            texts = self._texts[row] = tuple(self._display(r, name, row) for name in COLUMNS)
        return texts[column]

    def _result_role(self, row: int, _column: int) -> Any:
        return self._rows[row]

    def _alignment_role(self, _row: int, column: int) -> int | None:
        return None if column in _TEXT_COLUMNS else _RIGHT

    def _background_role(self, row: int, _column: int) -> QBrush | None:
        delta = self.delta(row)
        if not delta:
            return None
        return _UP_BRUSH if delta > 0 else _DOWN_BRUSH

    def _font_role(self, row: int, column: int) -> QFont | None:
        if column == _BASE and self._rows[row].distance is None:
            return self._italic
        return None

    def _tooltip_role(self, row: int, column: int) -> str | None:
        r = self._rows[row]
        if COLUMNS[column] == "Δrank":
            default = self._default_ranks.get(r.name)
            return "not ranked with the default parameters" if default is None else \
                f"rank {default} with the default parameters"
        if COLUMNS[column] == "name":
            head = f"{r.name}\n{r.entity_type} · routing {ROUTING_LABELS.get(r.routing_strategy, r.routing_strategy)}"
            return "\n".join((head, *r.observations[:5]))
        if COLUMNS[column] == "base":
            cosine = "cosine —: found by full text only" if r.distance is None else \
                f"cosine {max(0.0, 1 - r.distance):.4f} (1 − distance {r.distance:.4f})"
            rrf = "" if r.rrf_score is None else f"\nRRF {r.rrf_score:.4f}"
            return f"base relevance {r.base_relevance:.4f}\n{cosine}{rrf}"
        return None

    def _display(self, r: Any, column: str, row: int) -> str:
        if column == "rank":
            return str(r.rank)
        if column == "Δrank":
            delta = self.delta(row)
            if delta is None:
                return "●"
            if delta > 0:
                return f"▲{delta}"
            if delta < 0:
                return f"▼{-delta}"
            return "="
        if column == "name":
            return r.name
        if column == "final":
            return f"{r.final_score:.4f}"
        if column == "limbic":
            return f"{r.limbic_score:.4f}"
        return f"{r.base_relevance:.4f}"
