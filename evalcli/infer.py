"""Inference of task and columns for ``evalcli compare`` (no config).

Inference only decides when the answer is unambiguous; otherwise it raises an error that lists
the candidates and the option that settles it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalcli.config import Config, parse_config
from evalcli.errors import ConfigError, InputDataError, clip
from evalcli.io import input_path

if TYPE_CHECKING:
    from evalcli.io import Source

LABEL_NAMES = ("label", "y", "y_true", "target", "truth", "actual", "ground_truth", "class",
               "relevance", "labels")
SCORE_NAMES = ("score", "y_score", "prob", "proba", "probability", "p", "prediction_score",
               "y_prob", "pred_proba")
PRED_NAMES = ("prediction", "pred", "y_pred", "predicted", "yhat", "y_hat", "predictions")
ID_NAMES = ("id", "key", "uid", "row_id", "example_id", "sample_id")


def _names(names: Sequence[str], limit: int = 20) -> str:
    """Column names for a message: each clipped, the whole capped (a header may hold a
    100 KB name)."""
    shown = ", ".join(clip(n, 60) for n in names[:limit])
    return clip(shown + (" ..." if len(names) > limit else ""), 800)


def _find(names: Sequence[str], wanted: Sequence[str], role: str, file: str) -> str | None:
    lower = {n.lower(): n for n in names}
    hits = [lower[w] for w in wanted if w in lower]
    if len(hits) > 1:
        raise ConfigError(
            f"{file}: several columns could be the {role}: {_names(hits)}",
            hint=f"choose one with --{role} NAME",
        )
    return hits[0] if hits else None


def parse_gate(text: str) -> tuple[str, str, float]:
    """Parse an inline gate.

    >>> parse_gate("auroc>=0.8"), parse_gate("log_loss <= 0.4")
    (('auroc', 'min', 0.8), ('log_loss', 'max', 0.4))
    """
    m = re.fullmatch(r"\s*([^<>=\s]+)\s*(>=|<=)\s*([-+0-9.eE]+)\s*", text)
    try:
        value = float(m.group(3)) if m else math.nan
    except ValueError:
        value = math.nan
    if not m or not math.isfinite(value):
        from evalcli.errors import clip

        raise ConfigError(f"cannot read the gate '{clip(text, 100)}'",
                          hint="write METRIC>=VALUE or METRIC<=VALUE with a finite number, "
                          "e.g. --gate 'auroc>=0.8'")
    return m.group(1), "min" if m.group(2) == ">=" else "max", value


def _format_in(path: str | None, format_in: str | None) -> str | None:
    """``--format-in`` applies to standard input and to a path whose name says no format."""
    from evalcli.io import detect_format
    from evalcli.io.readers import is_stdin

    if path is None or format_in is None:
        return None
    if is_stdin(path):
        return format_in
    try:
        detect_format(path)
    except InputDataError:
        return format_in
    return None


def _shown(path: str) -> str:
    from evalcli.io.readers import STDIN, is_stdin

    return STDIN if is_stdin(path) else path


def _input(path: str, fmt: str | None) -> str | dict[str, str]:
    return {"path": input_path(path), "format": fmt} if fmt else input_path(path)


def _schema(path: str, fmt: str | None = None) -> tuple[list[str], dict[str, Any], _Reading]:
    from evalcli.io import Source, scan

    source = Source(input_path(path), format=fmt, relative_to="the working directory")
    lf = scan(source)
    schema = lf.collect_schema()
    return list(schema.names()), dict(schema), _Reading(lf, source)


class _Reading:
    """A scanned file whose rows inference reads (a few values): a read error names the file,
    the line and the fix, as the engine's would."""

    def __init__(self, lf: Any, source: Source | None) -> None:
        self.lf, self.source = lf, source

    def value(self, *exprs: Any) -> Any:
        """``lf.select(exprs)`` collected, as one value."""
        import polars as pl

        try:
            return self.lf.select(*exprs).collect().item()
        except pl.exceptions.PolarsError as exc:
            raise self.failure(exc) from None

    def values(self, expr: Any) -> list[Any]:
        import polars as pl

        try:
            return list(self.lf.select(expr).collect().to_series().to_list())
        except pl.exceptions.PolarsError as exc:
            raise self.failure(exc) from None

    def failure(self, exc: Exception) -> InputDataError:
        from evalcli.io.readers import explain_read_error

        found = explain_read_error([self.source], exc)
        if found is not None:
            return found
        first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
        name = self.source.path if self.source is not None else "the input"
        return InputDataError(f"cannot read {name}: {first[:200]}",
                              hint="check the file's format and encoding")


def _probabilities(lf: Any, schema: dict[str, Any], col: str) -> bool:
    """Whether a column holds numbers other than 0 and 1 (scores, not hard predictions)."""
    import polars as pl

    dtype = schema.get(col)
    if dtype is None or not dtype.is_float():
        return False
    c = pl.col(col)
    return bool(_reading(lf).value(((c != 0) & (c != 1)).any()))


def _reading(lf: Any) -> _Reading:
    """``lf`` as read by inference: a scanned file (from :func:`_schema`) or a bare LazyFrame."""
    return lf if isinstance(lf, _Reading) else _Reading(lf, None)


def infer_task(lf: Any, col: str, schema: dict[str, Any], positive: str | None,
               has_score: bool, file: str) -> str:
    """Binary, multiclass, multilabel or regression, from the label column's type and values."""
    import polars as pl

    reading = _reading(lf)
    dtype = schema[col]
    if dtype == pl.Boolean:
        return "binary"
    if isinstance(dtype, pl.Struct) or dtype == pl.Object:
        from evalcli.metrics.task import shape_words

        raise InputDataError(
            f"{file}: the label column '{clip(col, 60)}' holds {shape_words(dtype)} "
            f"({clip(str(dtype), 80)}); a label is one value per row (binary, multiclass, "
            "regression) or a list of labels (multilabel)",
            hint="name another column with --label, or write one value (or one list) per row",
        )
    if isinstance(dtype, pl.List | pl.Array):
        return "multilabel"
    if dtype == pl.String and _Reading(reading.lf.head(10_000), reading.source).value(
            pl.col(col).str.contains("|", literal=True).any()):
        return "multilabel"  # label sets joined by '|' (the multilabel delimited layout)
    # first values in file order: the message names them in a stable order
    values = reading.values(pl.col(col).drop_nulls().unique(maintain_order=True).head(3))
    if dtype.is_numeric():
        if set(values) <= {0, 1}:
            return "binary"
        if dtype.is_float() and any(float(v) != int(v) for v in values):
            return "regression"
        if dtype.is_float():
            n = reading.value(pl.col(col).n_unique())
            return "regression" if n > 50 else "multiclass"
        return "multiclass"
    if len(values) <= 2 and positive is not None:
        return "binary"
    if len(values) == 2:
        a, b = (clip(str(v), 60) for v in values)
        raise ConfigError(
            f"{file}: the label column '{clip(col, 60)}' has two values "
            f"({clip(repr(values[0]), 60)}, {clip(repr(values[1]), 60)}); evalcli cannot tell "
            "which is positive",
            hint=f"name the positive class (--positive {a} or --positive {b}) "
            "for a binary evaluation, or use --task multiclass",
        )
    return "multiclass"


QUERY_NAMES = ("query", "qid", "query_id", "user", "user_id", "userid", "session", "example")
ITEM_NAMES = ("item", "doc", "docid", "doc_id", "docno", "document", "item_id", "itemid",
              "product", "product_id", "label")
RELEVANCE_NAMES = ("relevance", "rel", "grade", "rating", "gain", "judgment")
RANK_NAMES = ("rank", "position", "pos")


def _ranking_columns(pnames: Sequence[str], tnames: Sequence[str], pfile: str, tfile: str, *,
                     required: bool, score: str | None, relevance: str | None
                     ) -> dict[str, str] | None:
    """Query and item columns present in both files (and score/rank, relevance), or None."""
    found: dict[str, str] = {}
    for role, names in (("query", QUERY_NAMES), ("item", ITEM_NAMES)):
        both = [c for c in pnames if c in tnames]
        hit = _find(both, names, role, f"{pfile} and {tfile}")
        if hit is None:
            if required:
                raise InputDataError(
                    f"a ranking evaluation needs a {role} column in both files; looked for "
                    f"{', '.join(names[:5])} ... among {_names(both) or '(no shared column)'}",
                    hint="rename the column, or write a config with "
                    f"'columns: {{extra: {{{role}: NAME}}}}'",
                )
            return None
        found[role] = hit
    if found["item"].lower() == "label" and not required:
        return None  # a shared 'label' column is a classification truth, not ranked items
    if score is not None:
        found["score"] = score
    elif (s := _find(pnames, SCORE_NAMES, "score", pfile)) is not None:
        found["score"] = s
    elif (r := _find(pnames, RANK_NAMES, "rank", pfile)) is not None:
        found["rank"] = r
    rel = relevance or _find(tnames, RELEVANCE_NAMES, "relevance", tfile)
    if rel is not None:
        found["relevance"] = rel
    elif not required and _find(tnames, LABEL_NAMES, "label", tfile) is not None:
        return None  # keyed classification (e.g. user_id, item_id, label), not a ranking
    return found


def _ranking_config(predictions: str, truth: str | None, cols: dict[str, str], inferred_task: bool,
                    *, metrics: Sequence[str], weight: str | None, gates: Sequence[str],
                    group_by: Sequence[str], formats: tuple[str | None, str | None] = (None, None)
                    ) -> tuple[Config, list[str]]:
    columns: dict[str, Any] = dict(cols)
    if weight:
        columns["weight"] = weight
    entries = _gated_entries(metrics, gates)
    data: dict[str, Any] = {
        "task": "ranking",
        "predictions": _input(predictions, formats[0]),
        "columns": columns,
        "metrics": entries,
        "group_by": list(group_by),
    }
    if truth:
        data["truth"] = _input(truth, formats[1])
    cfg = parse_config(data, "command line", Path.cwd())
    if gates and not metrics:
        cfg = _with_defaults(cfg)
    notes = ["task=ranking"] if inferred_task else []
    return cfg, notes + [f"{r}={c}" for r, c in cols.items()]


def _gated_entries(metrics: Sequence[str], gates: Sequence[str]) -> list[Any]:
    """Metric entries from -m ids with the --gate bounds attached (a gated metric is added)."""
    entries: list[Any] = list(metrics)
    for g in gates:
        name, bound, value = parse_gate(g)
        for i, e in enumerate(entries):
            if isinstance(e, str) and e == name:
                entries[i] = {"metric": name, bound: value}
                break
            if isinstance(e, dict) and e["metric"] == name:
                e[bound] = value
                break
        else:
            entries.append({"metric": name, bound: value})
    return entries


def build_config(
    predictions: str, truth: str | None, *, task: str | None, metrics: Sequence[str],
    ids: Sequence[str], label: str | None, score: str | None, prediction: str | None,
    weight: str | None, positive: str | None, gates: Sequence[str], group_by: Sequence[str],
    drop_unmatched: bool, format_in: str | None = None,
) -> tuple[Config, list[str]]:
    """A config equivalent to the command line, and what was inferred (for a dim note).

    ``format_in`` is the format of an input whose name does not tell it: standard input
    (``-``, else sniffed from its content) or a file without a known extension."""
    from evalcli.io.readers import is_stdin

    if truth is not None and is_stdin(predictions) and is_stdin(truth):
        from evalcli.config import STDIN_TWICE

        what, fix = STDIN_TWICE.split("; ", 1)
        raise ConfigError(what, hint=fix)
    inferred: list[str] = []
    pfmt, tfmt = _format_in(predictions, format_in), _format_in(truth, format_in)
    predictions = _shown(predictions)
    truth = _shown(truth) if truth is not None else None
    pnames, pschema, plf = _schema(predictions, pfmt)
    tnames, tschema, tlf = _schema(truth, tfmt) if truth else ([], {}, None)
    if task == "ranking" or (task is None and not ids):
        ranking = _ranking_columns(pnames, tnames if truth else pnames, predictions,
                                   truth or predictions, required=task == "ranking",
                                   score=score, relevance=label)
        if ranking is not None:
            return _ranking_config(predictions, truth, ranking, task is None, metrics=metrics,
                                   weight=weight, gates=gates, group_by=group_by,
                                   formats=(pfmt, tfmt))
    if truth is not None and not ids:
        common = [c for c in pnames if c in tnames]
        named = [c for c in common if c.lower() in ID_NAMES or c.lower().endswith("_id")]
        if len(named) == 1:
            ids = named
        elif len(common) == 1:
            ids = common
        else:
            raise InputDataError(
                f"cannot tell which column joins {predictions} and {truth}: "
                + (f"candidates {_names(named or common)}" if common else
                   "they share no column"),
                hint="name the key with --id COLUMN (repeat for several)",
            )
        inferred.append(f"id={','.join(ids)}")
    label_names, label_file = (tnames, truth) if truth else (pnames, predictions)
    if label is None:
        label = _find(label_names, LABEL_NAMES, "label", str(label_file))
        if label is None and truth is not None:
            rest = [c for c in tnames if c not in ids]
            if len(rest) == 1:
                label = rest[0]
        if label is None:
            raise InputDataError(
                f"{label_file}: cannot tell which column is the label (truth); columns: "
                f"{_names(label_names)}",
                hint="name it with --label COLUMN",
            )
        inferred.append(f"label={label}")
    if score is None:
        score = _find(pnames, SCORE_NAMES, "score", predictions)
        if score:
            inferred.append(f"score={score}")
    if prediction is None:
        prediction = _find(pnames, PRED_NAMES, "prediction", predictions)
        if prediction:
            inferred.append(f"prediction={prediction}")
    if score is None and prediction is None and truth is not None:
        rest = [c for c in pnames if c not in ids and c != weight and c not in group_by]
        if len(rest) == 1:
            prediction = rest[0]
            inferred.append(f"prediction={prediction}")
    if task is None:
        lschema = tschema if truth else pschema
        llf = tlf if truth else plf
        if label not in lschema:
            raise InputDataError(f"{label_file}: no column '{clip(label, 60)}'",
                                 hint="name the label with --label COLUMN")
        task = infer_task(llf, label, lschema, positive, score is not None, str(label_file))
        inferred.insert(0, f"task={task}")
    if task == "regression" and prediction is None and score is not None:
        prediction, score = score, None
    if (task == "binary" and score is None and prediction is not None
            and f"prediction={prediction}" in inferred
            and _probabilities(plf, pschema, prediction)):
        # a column named like a prediction that holds scores: use it as the score
        score, prediction = prediction, None
        inferred[inferred.index(f"prediction={score}")] = f"score={score}"
    columns: dict[str, Any] = {"label": label}
    if score:
        columns["score"] = score
    if prediction:
        columns["prediction"] = prediction
    if weight:
        columns["weight"] = weight
    if ids:
        columns["id"] = list(ids)
    entries = _gated_entries(metrics, gates)
    data: dict[str, Any] = {
        "task": task,
        "predictions": _input(predictions, pfmt),
        "columns": columns,
        "metrics": entries,
        "group_by": list(group_by),
        "alignment": {"unmatched": "drop" if drop_unmatched else "error"},
    }
    if truth:
        data["truth"] = _input(truth, tfmt)
    if positive is not None:
        data["options"] = {"positive": positive}
    cfg = parse_config(data, "command line", Path.cwd())
    if gates and not metrics:
        cfg = _with_defaults(cfg)
    return cfg, inferred


def _with_defaults(cfg: Config) -> Config:
    """Gates without -m: compute every applicable metric, with the gates on theirs."""
    from evalcli.config import MetricEntry
    from evalcli.runner import prepare

    bare = cfg.model_copy(update={"metrics": []})
    plan = prepare(bare).plan
    gated = {e.metric: e for e in cfg.metrics}
    entries = []
    for pm in plan.metrics:
        names = {pm.metric.name, *pm.metric.aliases}
        hit = next((n for n in names if n in gated), None)
        entries.append(gated.pop(hit) if hit else MetricEntry.model_validate(pm.id))
    entries += list(gated.values())
    return cfg.model_copy(update={"metrics": entries})
