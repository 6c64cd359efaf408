"""Reports: one report object (:class:`~evalcli.result.RunResult`), one module per format.

``render(result, fmt)`` returns the text of a format; ``write(result, path)`` picks the format
from the extension and writes atomically. A run's outputs together (reports, curve files, the
per-query table) are checked and written all-or-none by :mod:`evalcli.report.outputs`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from enum import Enum
from pathlib import Path

from evalcli.errors import ConfigError
from evalcli.result import MetricResult, Paired, RunResult


class ReportFormat(str, Enum):
    """Output formats."""

    table = "table"
    json = "json"
    markdown = "markdown"
    junit = "junit"
    html = "html"
    latex = "latex"
    trec_eval = "trec_eval"


EXTENSIONS = {
    ".json": ReportFormat.json,
    ".md": ReportFormat.markdown,
    ".markdown": ReportFormat.markdown,
    ".xml": ReportFormat.junit,
    ".html": ReportFormat.html,
    ".htm": ReportFormat.html,
    ".txt": ReportFormat.table,
    ".tex": ReportFormat.latex,
    ".treceval": ReportFormat.trec_eval,
}


_RENDERERS = {
    ReportFormat.json: ("json", "render"),
    ReportFormat.table: ("table", "render_text"),
    ReportFormat.markdown: ("markdown", "render"),
    ReportFormat.junit: ("junit", "render"),
    ReportFormat.html: ("html", "render"),
    ReportFormat.latex: ("latex", "render"),
    ReportFormat.trec_eval: ("treceval", "render"),
}


def _renderer(fmt: ReportFormat) -> Callable[[RunResult], str] | None:
    """The render function of one format, importing only its module (a JSON report does not
    load Rich, a table does not load the HTML writer); ``None`` when it cannot be imported."""
    module, name = _RENDERERS[fmt]
    try:
        mod = __import__(f"evalcli.report.{module}", fromlist=[name])
    except ImportError:
        return None
    fn: Callable[[RunResult], str] = getattr(mod, name)
    return fn


def render(result: RunResult, fmt: ReportFormat) -> str:
    renderer = _renderer(fmt)
    if renderer is None:
        available = [f.value for f in _RENDERERS if _renderer(f) is not None]
        raise ConfigError(f"report format '{fmt.value}' is not available in this version",
                          hint=f"use one of: {', '.join(available)}")
    return renderer(result)


def format_for(path: Path) -> ReportFormat:
    fmt = EXTENSIONS.get(path.suffix.lower())
    if fmt is None:
        raise ConfigError(
            f"cannot tell the report format of {path} from its extension",
            hint="use .json, .md, .xml (JUnit), .html, .tex (LaTeX), .treceval (trec_eval's "
            "lines) or .txt",
        )
    return fmt


def format_value(v: float | None, undefined: str = "n/a") -> str:
    """A metric value for people: 4 decimals, or 4 significant digits when very large/small.

    >>> format_value(0.912345), format_value(None), format_value(1234567.0), format_value(0.0)
    ('0.9123', 'n/a', '1.235e+06', '0.0000')
    """
    if v is None:
        return undefined
    if v == 0 or 1e-4 <= abs(v) < 1e6:
        return f"{v:.4f}"
    return f"{v:.4g}"


def format_signed(v: float | None) -> str:
    """A change with its sign (empty when there is none).

    >>> format_signed(0.01), format_signed(-0.5), format_signed(None)
    ('+0.0100', '-0.5000', '')
    """
    return "" if v is None else ("+" if v > 0 else "") + format_value(v)


def metric_notes(m: MetricResult) -> list[str]:
    """What a report writes beside a metric's value: its caption (a fact the metric states,
    such as the threshold reaching peak F1), then its notes.

    >>> from evalcli.result import MetricResult
    >>> metric_notes(MetricResult("m", "m", "binary", {}, "higher", 0.8, notes=["n"],
    ...                           caption="at threshold 0.42"))
    ['at threshold 0.42', 'n']
    """
    return [m.caption, *m.notes] if m.caption else list(m.notes)


def ci_notes(m: MetricResult) -> list[str]:
    """What a report writes about a metric's interval: why there is none, or a note on it
    (every report writes it beside the value, as the notes).

    >>> from evalcli.result import CI, MetricResult
    >>> m = MetricResult("m", "m", "binary", {}, "higher", 0.8,
    ...                  ci=CI(None, None, 0.95, "percentile", reason="too few rows"))
    >>> ci_notes(m)
    ['no interval: too few rows']
    """
    if m.ci is None:
        return []
    if m.ci.reason:
        return [f"no interval: {m.ci.reason}"]
    return [f"interval: {m.ci.note}"] if m.ci.note else []


def shared_notes(metrics: Sequence[MetricResult]) -> dict[str, int]:
    """Notes that several metrics carry (their own or their intervals'), numbered: a report's
    table shows them once, as footnotes. A caption (``at threshold 0.37``) stays beside its
    value.

    >>> from evalcli.result import MetricResult
    >>> ms = [MetricResult(i, i, "binary", {}, "higher", 0.8, notes=n)
    ...       for i, n in (("a", ["binned", "own"]), ("b", ["binned"]))]
    >>> shared_notes(ms)
    {'binned': 1}
    """
    count: dict[str, int] = {}
    for m in metrics:
        for n in dict.fromkeys([*m.notes, *ci_notes(m)]):
            count[n] = count.get(n, 0) + 1
    shared = [n for n, c in count.items() if c > 1]
    return {n: i for i, n in enumerate(shared, 1)}


def notes_of(m: MetricResult) -> list[str]:
    """A metric's notes in a report's table, each once: :func:`metric_notes`, then
    :func:`ci_notes`."""
    return list(dict.fromkeys([*metric_notes(m), *ci_notes(m)]))


def system_gates(r: RunResult, row: Paired) -> bool | None:
    """Every gate a compared system's metric is held to, as one outcome: its own value gate
    (``min:``/``max:``, checked for every system) and its change gate against the baseline
    system; ``None`` when it has neither."""
    outcomes = [] if row.passed is None else [row.passed]
    own = r.systems.get(row.system)
    if own is not None:
        outcomes += [m.passed for m in own.metrics
                     if m.id == row.id and m.gate is not None and m.passed is not None]
    return None if not outcomes else all(outcomes)


def alignment_facts(r: RunResult) -> list[str]:
    """How the inputs lined up, as plain sentences every report shows (its own way)."""
    a = r.alignment
    x = a.extra
    dropped_metrics = [f"left out of the default metrics: {said}"
                       for said in x.get("default_metrics_left_out", [])]
    if r.systems:  # each system's own (the baseline's is among them)
        dropped = [f"system {name}: {said}" for name, s in r.systems.items()
                   if (said := _left_out(s)) is not None]
    else:
        dropped = [said] if (said := _left_out(r)) is not None else []
    dropped = [*dropped_metrics, *dropped]
    if "queries_in_both" in x:  # ranking: full join on (query, item), counted by query
        return [
            f"queries: {x['queries_in_both']:,} in both files, "
            f"{x.get('queries_only_in_predictions', 0):,} only in the predictions, "
            f"{x.get('queries_only_in_truth', 0):,} only in the truth",
            f"(query, item) pairs: {a.matched:,} recommended and judged, "
            f"{a.only_in_predictions:,} recommended but not judged, "
            f"{a.only_in_truth:,} judged but not recommended",
            *([f"rows dropped for a null (nulls: drop): {a.dropped_nulls:,}"]
              if a.dropped_nulls else []),
            *dropped,
        ]
    out = []
    if r.truth is not None:
        out.append(f"matched {a.matched:,}, only in predictions {a.only_in_predictions:,}, "
                   f"only in truth {a.only_in_truth:,} (unmatched: {a.unmatched_policy})")
    if x.get("empty_predicted_sets"):
        out.append(f"ids of the truth without prediction rows, evaluated as empty predicted "
                   f"sets: {x['empty_predicted_sets']:,}")
    out.append(f"rows evaluated: {a.evaluated:,}"
               + (f" (dropped for nulls: {a.dropped_nulls:,})" if a.dropped_nulls else ""))
    return [*out, *dropped]


def _left_out(r: RunResult) -> str | None:
    """The rows of ``r``'s predictions a ``duplicates`` policy left out, as a sentence (None
    when it left none out).

    >>> from evalcli.result import AlignmentInfo, InputInfo
    >>> a = AlignmentInfo(5, 0, 0, "error", extra={"duplicates_dropped": 2,
    ...                                             "duplicates_policy": "last"})
    >>> r = RunResult("ranking", "polars", InputInfo("p.csv", 5, {"score": "s"}), None, a, [],
    ...               options={"compat": "ranx"})
    >>> print(_left_out(r))  # doctest: +NORMALIZE_WHITESPACE
    2 repeated key(s) of the predictions left out (duplicates: last, the ranx preset, keeps the
    last of each in file order)
    """
    x = r.alignment.extra
    if not x.get("duplicates_dropped"):
        return None
    policy = str(x.get("duplicates_policy"))
    scored = "score" in (r.predictions.columns or {})
    kept = _KEPT.get(policy, "one of each")
    if policy == "max_score" and not scored:
        kept = "the best-ranked of each"
    preset = r.options.get("compat") if "duplicates" not in r.options else None
    how = f"{policy}, the {preset} preset," if preset else policy
    what = "(query, item) pair(s)" if "queries_in_both" in x else "key(s)"
    return (f"{x['duplicates_dropped']:,} repeated {what} of the predictions left out "
            f"(duplicates: {how} keeps {kept})")


_KEPT = {"first": "the first of each in file order", "last": "the last of each in file order",
         "max_score": "the highest-scored of each"}
"""What a ``duplicates`` policy keeps of each repeated key, for :func:`_left_out`."""


def write(result: RunResult, path: Path, fmt: ReportFormat | None = None) -> None:
    """Write one report atomically (see :mod:`evalcli.report.outputs` for several at once)."""
    from evalcli.report.outputs import commit, text_writer

    commit([(Path(path), text_writer(render(result, fmt or format_for(Path(path)))))])
