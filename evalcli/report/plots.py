"""Static plots for the HTML report: matplotlib figures rendered to inline SVG.

No browser code, no fonts or scripts fetched: text is drawn as paths, so the SVG looks the
same offline everywhere. Output is deterministic (fixed hash salt, no date), so the same result
gives the same file. Curves with many points are thinned for drawing (at most
:data:`MAX_POINTS`, evenly spaced along the curve, ends kept); the exact points are what
``--curves`` writes.
"""

from __future__ import annotations

import io
import re
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import polars as pl
    from matplotlib.axes import Axes
    from matplotlib.figure import Figure

MAX_POINTS = 500
COLOR = "#2563eb"
BAD = "#dc2626"
GREY = "#9ca3af"
SERIES = (COLOR, "#ea580c", "#16a34a", "#9333ea", "#0891b2", "#be185d")
"""Colours of a plot's several series (the first is :data:`COLOR`), then they repeat."""


def _figure(width: float = 5.0, height: float = 4.0) -> Figure:
    import matplotlib

    matplotlib.rcParams["svg.hashsalt"] = "evalcli"
    matplotlib.rcParams["svg.fonttype"] = "path"
    # text comes from the data (class labels, segment values, metric ids): '$x$' is drawn as
    # written, never parsed as math (an unbalanced one made the report an internal error)
    matplotlib.rcParams["text.parse_math"] = False
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), layout="constrained")


def to_svg(fig: Figure, title: str) -> str:
    """The figure as an inline ``<svg>`` element with an accessible title."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None, "Creator": None})
    text = buf.getvalue()
    text = text[text.index("<svg"):]
    text = re.sub(r"\s*<metadata>.*?</metadata>", "", text, count=1, flags=re.DOTALL)
    # str.replace, not re.sub: a title from the data may hold a backslash
    text = text.replace("<svg ", f'<svg role="img" aria-label="{_attr(title)}" class="plot" ', 1)
    return text


def _attr(s: str) -> str:
    return s.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def thin(n: int, limit: int = MAX_POINTS) -> list[int]:
    """Row indices to draw: all of them up to ``limit``, else evenly spaced with both ends.

    >>> thin(5, 10)
    [0, 1, 2, 3, 4]
    >>> thin(101, 5)
    [0, 25, 50, 75, 100]
    """
    if n <= limit:
        return list(range(n))
    step = (n - 1) / (limit - 1)
    return sorted({round(i * step) for i in range(limit)})


def _cols(df: pl.DataFrame, *names: str) -> list[list[float]]:
    idx = thin(df.height)
    sub = df[idx]
    return [sub[c].to_list() for c in names]


def _axes(fig: Figure) -> Axes:
    ax = fig.add_subplot()
    ax.grid(True, color="#e5e7eb", linewidth=0.6)
    ax.set_axisbelow(True)
    for side in ("top", "right"):
        ax.spines[side].set_visible(False)
    return ax


def roc(df: pl.DataFrame, areas: Sequence[tuple[str, float]] = ()) -> str:
    """ROC curve (fpr, tpr) with the chance diagonal; the first of ``areas`` (the summaries
    the run computed, by name) labels the curve."""
    fpr, tpr = _cols(df, "fpr", "tpr")
    fig = _figure()
    ax = _axes(fig)
    ax.plot([0, 1], [0, 1], linestyle="--", color=GREY, linewidth=1, label="chance")
    label = f"{areas[0][0]} {areas[0][1]:.4f}" if areas else "ROC"
    ax.plot(fpr, tpr, color=COLOR, linewidth=1.8, label=label)
    ax.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="false positive rate",
           ylabel="true positive rate (recall)", title="ROC curve")
    ax.legend(loc="lower right", frameon=False)
    return to_svg(fig, f"ROC curve, {label}")


def pr(df: pl.DataFrame, areas: Sequence[tuple[str, float]] = (),
       prevalence: float | None = None) -> str:
    """Precision-recall curve, starting at (0, precision of the top score).

    ``areas`` are the summaries the run computed, each named as itself (``AUPRC``, the
    trapezoid, and ``average precision``, the step sum, differ): the legend shows each with its
    value, the curve's line beside the first.
    """
    rec, prec = _cols(df, "recall", "precision")
    fig = _figure()
    ax = _axes(fig)
    if prevalence is not None:
        ax.axhline(prevalence, linestyle="--", color=GREY, linewidth=1,
                   label=f"prevalence {prevalence:.3f}")
    labels = [f"{name} {value:.4f}" for name, value in areas]
    ax.plot([0.0, *rec], [prec[0], *prec] if prec else [], color=COLOR, linewidth=1.8,
            label=labels[0] if labels else "precision-recall")
    for label in labels[1:]:  # legend entries without a line of their own
        ax.plot([], [], linestyle="none", label=label)
    ax.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="recall", ylabel="precision",
           title="Precision-recall curve")
    ax.legend(loc="lower left", frameon=False)
    return to_svg(fig, ", ".join(["Precision-recall curve", *labels]))


def reliability(df: pl.DataFrame, labels: Mapping[tuple[int, str], Sequence[str]]) -> str:
    """Reliability diagram: each binning's (``bins``, ``strategy``) bins as points (mean score,
    fraction positive) joined by a line, with the diagonal of perfect calibration; the light
    bars under them are the share of the weight in each bin, of the first binning only (bars of
    several widths on one axis would hide each other). ``labels`` are the legend texts
    of each binning (the ece/mce values computed with it)."""
    fig = _figure()
    ax = _axes(fig)
    ax.plot([0, 1], [0, 1], linestyle="--", color=GREY, linewidth=1, label="perfectly calibrated")
    blocks = df.partition_by("bins", "strategy", maintain_order=True, as_dict=True)
    share = ax.twinx()
    share.set_ylim(0, 3)  # the bars stay in the bottom third
    share.set_yticks([])
    for side in ("top", "right"):
        share.spines[side].set_visible(False)
    texts = []
    for i, ((bins, strategy), block) in enumerate(blocks.items()):
        x, y, w = (block[c].to_numpy() for c in ("mean_score", "fraction_positive", "weight"))
        name = f"bins={bins}, {strategy}"
        text = ", ".join([name, *labels.get((int(bins), str(strategy)), ())])
        texts.append(text)
        line = ax.plot(x, y, marker="o", markersize=3.5, linewidth=1.6,
                       color=SERIES[i % len(SERIES)], label=text)[0]
        if i == 0:
            width = 1.0 / max(int(bins), 1)
            share.bar(x, w / w.sum(), width=width * 0.8, color=line.get_color(), alpha=0.25)
    ax.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="mean score (predicted probability)",
           ylabel="fraction positive", title="Reliability diagram")
    ax.legend(loc="upper left", frameon=False, fontsize=8)
    return to_svg(fig, "; ".join(["Reliability diagram", *texts]))


def _gain_blocks(df: pl.DataFrame) -> dict[Any, pl.DataFrame]:
    return df.partition_by("groups", maintain_order=True, as_dict=True)


def gain(df: pl.DataFrame) -> str:
    """Cumulative gain chart: the share of all positives in the top fraction of the rows
    ranked by score, at each group's cut (from the origin), with the random ranking's
    diagonal."""
    fig = _figure()
    ax = _axes(fig)
    ax.plot([0, 1], [0, 1], linestyle="--", color=GREY, linewidth=1, label="random")
    for i, ((groups,), block) in enumerate(_gain_blocks(df).items()):
        ax.plot([0.0, *block["fraction"].to_list()], [0.0, *block["gain"].to_list()],
                marker="o", markersize=3.5, linewidth=1.8, color=SERIES[i % len(SERIES)],
                label=f"{groups} groups")
    ax.set(xlim=(0, 1), ylim=(0, 1.01), xlabel="fraction of the rows (highest scores first)",
           ylabel="fraction of the positives (gain)", title="Cumulative gain")
    ax.legend(loc="lower right", frameon=False)
    return to_svg(fig, "Cumulative gain chart")


def lift(df: pl.DataFrame) -> str:
    """Lift chart: the cumulative lift (gain / fraction) at each group's cut, and the light
    bars of each group's own lift (the first block's), with the random ranking's 1."""
    fig = _figure()
    ax = _axes(fig)
    ax.axhline(1.0, linestyle="--", color=GREY, linewidth=1, label="random")
    for i, ((groups,), block) in enumerate(_gain_blocks(df).items()):
        x = block["fraction"].to_numpy()
        if i == 0:
            ax.bar(x - 0.5 / len(x), block["group_lift"].to_numpy(), width=0.8 / len(x),
                   color=COLOR, alpha=0.2, label="each group's lift")
        ax.plot(x, block["lift"].to_numpy(), marker="o", markersize=3.5, linewidth=1.8,
                color=SERIES[i % len(SERIES)], label=f"cumulative lift, {groups} groups")
    ax.set(xlim=(0, 1.02), ylim=(0, None), xlabel="fraction of the rows (highest scores first)",
           ylabel="lift", title="Lift")
    ax.legend(loc="upper right", frameon=False, fontsize=8)
    return to_svg(fig, "Lift chart")


def residuals(df: pl.DataFrame, bins: int = 40) -> str:
    """Histogram of residuals (label − prediction), weighted."""
    import numpy as np

    e = df["residual"].to_numpy()
    w = df["weight"].to_numpy()
    fig = _figure(5.5, 3.6)
    ax = _axes(fig)
    lo, hi = float(e.min()), float(e.max())
    if lo == hi:
        lo, hi = lo - 0.5, hi + 0.5
    counts, edges = np.histogram(e, bins=bins, range=(lo, hi), weights=w)
    ax.bar(edges[:-1], counts, width=np.diff(edges), align="edge", color=COLOR,
           edgecolor="white", linewidth=0.4)
    ax.axvline(0, color=BAD, linewidth=1)
    ax.set(xlabel="residual (label − prediction)", ylabel="weight (rows)",
           title="Residuals")
    return to_svg(fig, "Histogram of residuals")


def confusion(labels: Sequence[Any], matrix: Sequence[Sequence[float]], title: str,
              rows: str = "true class", columns: str = "predicted class") -> str:
    """Heat map of a confusion matrix, with the counts written in the cells when few."""
    import numpy as np

    m = np.asarray(matrix, dtype=float)
    n = len(labels)
    size = min(9.0, 2.5 + 0.45 * n)
    fig = _figure(size + 1.0, size)
    ax = fig.add_subplot()
    im = ax.imshow(m, cmap="Blues", aspect="equal")
    fig.colorbar(im, ax=ax, shrink=0.8)
    names = [str(x) for x in labels]
    ax.set_xticks(range(n), names, rotation=45 if n > 6 else 0, ha="right" if n > 6 else "center")
    ax.set_yticks(range(n), names)
    ax.set(xlabel=columns, ylabel=rows, title=title)
    if n <= 20 and m.size:
        top = m.max() or 1.0
        for i in range(n):
            for j in range(n):
                v = m[i, j]
                txt = f"{v:.0f}" if float(v).is_integer() else f"{v:.2f}"
                ax.text(j, i, txt, ha="center", va="center", fontsize=8,
                        color="white" if v > 0.6 * top else "black")
    return to_svg(fig, f"{title} heat map")


def at_k(series: Mapping[str, Sequence[tuple[int, float | None]]], title: str,
         bounds: Mapping[str, Sequence[tuple[int, float, float]]] | None = None) -> str:
    """Metric@k curves: one line per metric, value against the cut-off k; with ``bounds``
    (k, low, high), the intervals as error bars."""
    fig = _figure(5.5, 3.8)
    ax = _axes(fig)
    for name, pts in series.items():
        ks = [k for k, v in pts if v is not None]
        vs = [v for _, v in pts if v is not None]
        line = ax.plot(ks, vs, marker="o", linewidth=1.6, markersize=4, label=name)[0]
        at = {k: (lo, hi) for k, lo, hi in (bounds or {}).get(name, ())}
        shown = [(k, v) for k, v in zip(ks, vs, strict=True) if k in at]
        if shown:
            xs = [k for k, _ in shown]
            ys = [v for _, v in shown]
            err = [[max(0.0, v - at[k][0]) for k, v in shown],
                   [max(0.0, at[k][1] - v) for k, v in shown]]
            ax.errorbar(xs, ys, yerr=err, fmt="none", ecolor=line.get_color(), elinewidth=1,
                        capsize=3)
    from matplotlib.ticker import MaxNLocator

    ax.xaxis.set_major_locator(MaxNLocator(integer=True))  # k is a whole number of items
    ax.set(xlabel="k (cut-off)", ylabel="value", title=title)
    ax.legend(frameon=False, fontsize=8)
    return to_svg(fig, title)


def segment_bars(metric_id: str, labels: Sequence[str], values: Sequence[float | None],
                 failed: Sequence[bool], overall: float | None = None,
                 gate_min: float | None = None, gate_max: float | None = None,
                 bounds: Sequence[tuple[float | None, float | None] | None] | None = None
                 ) -> str:
    """Horizontal bars of one metric per segment; undefined values marked n/a, failures red;
    with ``bounds`` (low, high per segment), the intervals as error bars."""
    n = len(labels)
    fig = _figure(6.0, min(12.0, 1.2 + 0.32 * n))
    ax = _axes(fig)
    ys = list(range(n))[::-1]
    vals = [v if v is not None else 0.0 for v in values]
    colors = [BAD if f else COLOR for f in failed]
    ax.barh(ys, vals, color=colors, height=0.7)
    if bounds is not None:
        pts = [(y, v, b) for y, v, b in zip(ys, values, bounds, strict=True)
               if v is not None and b is not None and b[0] is not None and b[1] is not None]
        if pts:
            ax.errorbar([v for _, v, _ in pts], [y for y, _, _ in pts],
                        xerr=[[max(0.0, v - b[0]) for _, v, b in pts],  # type: ignore[operator]
                              [max(0.0, b[1] - v) for _, v, b in pts]],  # type: ignore[operator]
                        fmt="none", ecolor="#111827", elinewidth=1, capsize=3)
    for y, v in zip(ys, values, strict=True):
        if v is None:
            ax.text(0, y, " n/a (undefined)", va="center", fontsize=8, color="#92400e")
    if overall is not None:
        ax.axvline(overall, color="black", linewidth=1, linestyle=":",
                   label=f"overall {overall:.4g}")
    for bound, name in ((gate_min, "min"), (gate_max, "max")):
        if bound is not None:
            ax.axvline(bound, color=BAD, linewidth=1, linestyle="--",
                       label=f"segment gate {name} {bound:g}")
    ax.set_yticks(ys, list(labels), fontsize=8)
    ax.set(xlabel=metric_id, title=f"{metric_id} by segment")
    if overall is not None or gate_min is not None or gate_max is not None:
        ax.legend(frameon=False, fontsize=8, loc="lower right")
    return to_svg(fig, f"{metric_id} by segment")
