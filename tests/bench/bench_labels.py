"""Label placement on the graph canvas: the UI thread's time to place the labels once
(``GraphCanvas.update_labels``: which nodes get a name and where, docs/explorer.md "Reading the graph").

    python tests/bench/bench_labels.py [--repeat 9]

Synthetic drawings of 300, 2,500 and 10,000 nodes (a seeded Gaussian cloud, salience-like sizes, names of 30
characters, ten of them search hits) in a 1100×700 canvas, fitted and then zoomed in four times. Prints one
JSON object: per drawing and zoom, the labels drawn and the placement's median and longest time in ms.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import time

os.environ.setdefault("QT_QPA_PLATFORM", "offscreen")

SIZES = (300, 2_500, 10_000)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=9)
    args = parser.parse_args()
    import numpy as np
    from PySide6.QtWidgets import QApplication

    from limbic.gui.graph import style
    from limbic.gui.graph.canvas import GraphCanvas

    qt = QApplication.instance() or QApplication([])
    rng = np.random.default_rng(0)
    figures: dict[str, dict[str, float]] = {}
    for n in SIZES:
        canvas = GraphCanvas()
        canvas.resize(1100, 700)
        canvas.show()
        names = [f"entity number {i:>5} with a name" for i in range(n)]
        canvas.draw(names, rng.normal(size=(n, 2)) * np.sqrt(n), np.zeros((0, 2), dtype=np.int64),
                    style.node_sizes(rng.random(n) ** 3), np.zeros(n, dtype=np.int64), np.full(n, 7), rng.random(n))
        canvas.zoom_to_fit()
        canvas.set_rings(names[:10], [], [], [])
        for zoom in ("fitted", "zoomed in 4x"):
            if zoom != "fitted":
                canvas.view.scaleBy((0.25, 0.25))
            qt.processEvents()
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                canvas.update_labels()
                times.append(1000 * (time.perf_counter() - started))
            figures[f"{n} nodes, {zoom}"] = {"labels": len(canvas.shown_labels()),
                                             "median_ms": round(statistics.median(times), 1),
                                             "max_ms": round(max(times), 1)}
        canvas.close()
    figures["load_average"] = {"1 min": round(os.getloadavg()[0], 1)}
    print(json.dumps(figures, indent=1))


if __name__ == "__main__":
    main()
