#!/usr/bin/env python3
"""The scripts' one plotting module: every figure is a PNG and the JSON it was drawn from.

A script builds :class:`Panel` objects (line series, optional log axes) and calls
:func:`draw`, which writes ``NAME.json`` (the numbers, axis labels and title) and ``NAME.png``
beside it. matplotlib (the ``plots`` extra, ``pip install -e '.[plots]'``) is imported only
when a figure is drawn, so the scripts run without it unless asked for ``--plot``.

Run as a program, it redraws PNGs from their JSON (a change of style needs no rerun):

    python scripts/plots.py docs/figures/*.json
"""

from __future__ import annotations

import json
import math
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path

from records import provenance

from lpcfg_cli.files.streams import atomic_output


@dataclass
class Series:
    """One line: ``y`` (with optional error bars ``yerr``) against ``x``. ``style`` is a
    matplotlib format string ("o-": points joined; "--": a reference line)."""

    label: str
    x: list[float]
    y: list[float]
    yerr: list[float] | None = None
    style: str = "o-"


@dataclass
class Panel:
    """One set of axes."""

    title: str
    xlabel: str
    ylabel: str
    series: list[Series] = field(default_factory=list)
    logx: bool = False
    logy: bool = False
    # The axis's lower end: a value below it (an error of 1e-15, zero up to rounding, on a
    # log axis) is drawn at it as a downward triangle and its series' label says so, so that
    # one such value does not stretch the axis over decades where nothing else lies.
    ymin: float | None = None


def slope_line(label: str, x: Sequence[float], anchor: float, slope: float) -> Series:
    """A reference line ``anchor * (x / x[0]) ** slope`` over ``x`` (straight on log-log
    axes), e.g. the 1/sqrt(M) rate of a consistent estimator: ``slope=-0.5``."""
    xs = [float(v) for v in x]
    return Series(label, xs, [anchor * (v / xs[0]) ** slope for v in xs], style="k--")


def level_line(label: str, x: Sequence[float], y: float, style: str = "--") -> Series:
    """A horizontal reference line at ``y`` over the range of ``x`` (a baseline's figure)."""
    return Series(label, [float(min(x)), float(max(x))], [float(y)] * 2, style=style)


def draw(
    path: str | Path, panels: Sequence[Panel], title: str = "", data: dict | None = None
) -> Path:
    """Write ``path`` as PNG (its suffix replaced) and the JSON it was drawn from beside it;
    returns the PNG's path. Values that are not finite are written to the JSON as null and
    left out of the line. ``data``: further numbers for the JSON only (not drawn)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    spec = {"title": title, "panels": [asdict(p) for p in panels]}
    if data is not None:
        spec["data"] = data
    spec["provenance"] = provenance()  # the command, commit and machine (records.py)
    with atomic_output(path.with_suffix(".json")) as fh:
        fh.write(json.dumps(_finite(spec), indent=1) + "\n")
    return render(spec, path.with_suffix(".png"))


def render(spec: dict, png: Path) -> Path:
    """Draw the figure ``spec`` (as :func:`draw` writes it to JSON) to ``png``."""
    try:
        import matplotlib
    except ImportError:
        raise SystemExit(
            "plots: matplotlib is missing: pip install -e '.[plots]' (or drop --plot)"
        ) from None
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = spec["panels"]
    below = any(len(panel["series"]) > 4 for panel in panels)  # legends under the axes
    height = 5.0 if below else 3.9
    fig, axes = plt.subplots(1, len(panels), figsize=(5.2 * len(panels), height), squeeze=False)
    for ax, panel in zip(axes[0], panels, strict=True):
        for s in panel["series"]:
            points = [
                (x, y, e)
                for x, y, e in zip(s["x"], s["y"], s["yerr"] or [None] * len(s["x"]), strict=True)
                if x is not None and y is not None
            ]
            if not points:
                continue
            xs, ys, es = zip(*points, strict=True)
            label, floor = s["label"], panel.get("ymin")
            if floor is not None and min(ys) < floor:
                label += f" (at or below {floor:g})"
                below = [(x, floor) for x, y in zip(xs, ys, strict=True) if y < floor]
                ys = tuple(max(y, floor) for y in ys)
                bx, by = zip(*below, strict=True)
                ax.plot(bx, by, "v", color="black", markersize=6)
            if s["yerr"]:
                errors = [e or 0.0 for e in es]
                ax.errorbar(xs, ys, yerr=errors, fmt=s["style"], capsize=3, label=label)
            else:
                ax.plot(xs, ys, s["style"], label=label, markersize=4)
        ax.set_title(panel["title"], fontsize=10)
        ax.set_xlabel(panel["xlabel"])
        ax.set_ylabel(panel["ylabel"], fontsize=9)
        if panel["logx"]:
            ax.set_xscale("log")
        if panel["logy"]:
            ax.set_yscale("log")
        if panel.get("ymin") is not None:
            ax.set_ylim(bottom=panel["ymin"] / 1.5)
        ax.grid(True, which="major", alpha=0.3)
        if len(panel["series"]) > 4:  # below the axes, where it hides no line
            ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.3), ncol=2)
        else:
            ax.legend(fontsize=8)
    if spec.get("title"):
        fig.suptitle(spec["title"], fontsize=11)
    fig.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    with atomic_output(png, mode="wb") as fh:
        fig.savefig(fh, format="png", dpi=90, bbox_inches="tight")
    plt.close(fig)
    return png


def _finite(value):
    """``value`` with every float that is not finite replaced by None (JSON has no NaN)."""
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(v) for v in value]
    return value


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 0 if argv else 2
    for name in argv:
        spec = json.loads(Path(name).read_text(encoding="utf-8"))
        if "panels" not in spec:  # a results record (records.py), not a figure
            print(f"{name}: no panels, not a figure: left out", file=sys.stderr)
            continue
        print(render(spec, Path(name).with_suffix(".png")))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
