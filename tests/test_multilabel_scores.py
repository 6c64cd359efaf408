"""Multilabel auroc and average_precision from per-label scores (issue 15 item 4) against
scikit-learn 1.9's roc_auc_score and average_precision_score on the label indicator matrix,
average macro, weighted, micro and samples, with sample_weight (zero weights too) and tied
scores; the score layouts of the multiclass task (struct, list, wide columns); labels or
examples with one class only; bad input (exit 2); segments; the streaming engine.
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from sklearn import metrics as skm

from evalcli import evaluate
from evalcli.errors import InputDataError, MetricError
from tests.test_spark import spark, write  # noqa: F401 - the session fixture
from tests.test_streaming import both_engines

LABELS = ["a", "b", "c", "d", "e"]
AVERAGES = ["macro", "weighted", "micro", "samples"]


def data(n: int, seed: int, *, weighted: bool = True, one_class_rows: bool = False
         ) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """An indicator matrix, scores rounded to one decimal (many ties) that lean towards the
    true labels, and weights with zeros; every label true and false somewhere, and (unless
    ``one_class_rows``) every example with a true and a false label."""
    rng = np.random.default_rng(seed)
    k = len(LABELS)
    y = (rng.random((n, k)) < 0.4).astype(int)
    y[:k, :] = np.eye(k, dtype=int)  # each label true somewhere, false elsewhere
    if not one_class_rows:
        y[y.sum(1) == 0, 0] = 1
        full = y.sum(1) == k
        y[full, 1] = 0
    s = np.round(np.clip(0.35 * y + rng.random((n, k)) * 0.7, 0, 1), 1)
    w = rng.choice([0.0, 0.5, 1.0, 2.0, 3.5], n) if weighted else None
    if w is not None:
        w[:k] = 1.0
    return y, s, w


def frame(y: np.ndarray, s: np.ndarray, w: np.ndarray | None, layout: str = "struct"
          ) -> pl.DataFrame:
    sets = [[LABELS[j] for j in np.flatnonzero(row)] for row in y]
    cols: dict[str, Any] = {"label": pl.Series(sets, dtype=pl.List(pl.String)),
                            "prediction": pl.Series([[LABELS[int(np.argmax(r))]] for r in s],
                                                    dtype=pl.List(pl.String))}
    if layout == "struct":
        cols["score"] = [dict(zip(LABELS, map(float, r), strict=True)) for r in s]
    elif layout == "list":
        cols["score"] = [list(map(float, r)) for r in s]
    else:  # wide
        for j, name in enumerate(LABELS):
            cols[f"p_{name}"] = s[:, j]
    if w is not None:
        cols["w"] = w
    return pl.DataFrame(cols)


def config(metrics: list[Any], layout: str, weighted: bool, **extra: Any) -> dict[str, Any]:
    options = {"list": {"classes": LABELS}, "wide": {"score_prefix": "p_"}}.get(layout, {})
    cfg: dict[str, Any] = {"task": "multilabel", "metrics": metrics, "options": options, **extra}
    cfg["columns"] = {"score": "score"} if layout != "wide" else {}  # an opt-in role
    if weighted:
        cfg["columns"]["weight"] = "w"
    return cfg


def sk(fn: Any, y: np.ndarray, s: np.ndarray, w: np.ndarray | None, average: str) -> float:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return float(fn(y, s, average=average, sample_weight=w))


def every(no_positive: str = "zero") -> list[Any]:
    return [{"metric": m, "average": a, **({"no_positive": no_positive}
                                            if m == "average_precision" else {})}
            for m in ("auroc", "average_precision") for a in AVERAGES]


def check(got: dict[str, float | None], y: np.ndarray, s: np.ndarray, w: np.ndarray | None,
          rel: float = 1e-12) -> None:
    for mid, value in got.items():
        fn = skm.roc_auc_score if mid.startswith("auroc") else skm.average_precision_score
        average = next((a for a in AVERAGES if f"average={a}" in mid), "macro")
        want = sk(fn, y, s, w, average)
        if math.isnan(want):
            assert value is None, (mid, value)
        else:
            assert value == pytest.approx(want, rel=rel, abs=1e-12), mid


# --------------------------------------------------------------------------- scikit-learn

@pytest.mark.parametrize("layout", ["struct", "list", "wide"])
@pytest.mark.parametrize("weighted", [False, True])
def test_every_average_equals_scikit_learn(layout: str, weighted: bool) -> None:
    for seed in range(3):
        y, s, w = data(300, seed, weighted=weighted)
        got = evaluate(config(every(), layout, weighted), predictions=frame(y, s, w, layout)
                       ).values()
        assert len(got) == 8 and all(v is not None for v in got.values()), got
        check(got, y, s, w)


def test_per_label_values_equal_scikit_learn_average_none() -> None:
    y, s, w = data(200, 5)
    r = evaluate(config(["auroc", {"metric": "average_precision"}], "struct", True),
                 predictions=frame(y, s, w))
    for mid, fn in (("auroc", skm.roc_auc_score),
                    ("average_precision", skm.average_precision_score)):
        by = r.metric(mid).details["by_label"]
        want = fn(y, s, average=None, sample_weight=w)
        assert [d["label"] for d in by] == LABELS
        assert [d["value"] for d in by] == pytest.approx(list(want), rel=1e-12)
        assert [d["support"] for d in by] == pytest.approx(list((w[:, None] * y).sum(0)))


def test_examples_with_one_class_follow_scikit_learn() -> None:
    """An example whose labels are all true or all false: scikit-learn's samples AUROC is NaN
    (null here, with a note); its samples AP counts an example without a true label as 0
    (no_positive=zero) and undefined by default; the other averages are unaffected."""
    y, s, w = data(200, 7, one_class_rows=True)
    assert (y.sum(1) == 0).any() and (y.sum(1) == len(LABELS)).any()
    r = evaluate(config(every(), "struct", True), predictions=frame(y, s, w))
    check(r.values(), y, s, w)
    assert r.metric("auroc[average=samples]").value is None
    assert "only true or only false" in r.metric("auroc[average=samples]").notes[0]
    r = evaluate(config([{"metric": "average_precision", "average": "samples"}], "struct",
                        True), predictions=frame(y, s, w))
    (m,) = r.metrics
    assert m.value is None and "no true label" in m.notes[0]


def test_a_zero_weight_example_of_one_class_counts_as_absent() -> None:
    y, s, w = data(60, 8)
    y[-1], w[-1] = 0, 0.0  # no true label, weight 0: scikit-learn forces its value to 0
    r = evaluate(config(every("undefined"), "struct", True), predictions=frame(y, s, w))
    check(r.values(), y, s, w)
    assert r.metric("auroc[average=samples]").value is not None


def test_a_label_never_true() -> None:
    """scikit-learn: roc_auc NaN for the label (macro NaN, weighted gives it weight 0);
    average precision 0 for it (no_positive=zero), undefined by default."""
    y, s, w = data(100, 9)
    y[:, 2] = 0
    y[y.sum(1) == 0, 0] = 1
    r = evaluate(config(every(), "struct", True), predictions=frame(y, s, w))
    check(r.values(), y, s, w)
    m = r.metric("auroc")
    assert m.value is None and "label(s) 'c' never true" in m.notes[0]
    assert [d["value"] for d in m.details["by_label"]][2] is None
    assert "weigh 0" in r.metric("auroc[average=weighted]").notes[0]
    r = evaluate(config(["average_precision"], "struct", True), predictions=frame(y, s, w))
    assert r.metric("average_precision").value is None


def test_a_label_true_on_every_example() -> None:
    y, s, w = data(100, 10)
    y[:, 3] = 1
    r = evaluate(config(every(), "struct", True), predictions=frame(y, s, w))
    check(r.values(), y, s, w)
    assert r.metric("auroc[average=weighted]").value is None  # scikit-learn: NaN


def test_list_positions_name_integer_labels() -> None:
    """A list column without options.classes: position i is the label i (integer labels)."""
    y, s, _ = data(120, 11, weighted=False)
    sets = [[int(j) for j in np.flatnonzero(row)] for row in y]
    df = pl.DataFrame({"label": sets, "prediction": [[0]] * len(sets),
                       "score": [list(map(float, r)) for r in s]})
    got = evaluate({"task": "multilabel", "metrics": every(), "columns": {"score": "score"}},
                   predictions=df).values()
    check(got, y, s, None)


def test_two_files_delimited_truth() -> None:
    y, s, _ = data(80, 12, weighted=False)
    df = frame(y, s, None).with_row_index("id")
    truth = df.select("id", pl.col("label").list.join("|"))
    pred = df.select("id", "prediction", "score")
    got = evaluate(config(every(), "struct", False), predictions=pred, truth=truth).values()
    check(got, y, s, None)


def test_two_files_delimited_predictions_with_wide_scores() -> None:
    """Scores beside a delimited predicted set (the rows grouped by id) and two files."""
    y, s, _ = data(80, 18, weighted=False)
    df = frame(y, s, None, "wide").with_row_index("id")
    pred = df.select("id", pl.col("prediction").list.join("|"), pl.col("^p_.*$"))
    truth = df.select("id", "label")
    got = evaluate(config(every(), "wide", False), predictions=pred, truth=truth).values()
    check(got, y, s, None)


# --------------------------------------------------------------------------- bad input

def test_a_true_label_without_a_score_is_an_error() -> None:
    y, s, _ = data(30, 13, weighted=False)
    df = frame(y, s, None).with_columns(pl.col("label").list.concat(pl.lit(["zebra"])))
    with pytest.raises(InputDataError, match=r"a true label has no score \(scored labels: a, b"):
        evaluate(config(["auroc"], "struct", False), predictions=df)
    df = frame(y, s, None, "list").with_columns(pl.col("label").list.concat(pl.lit(["zebra"])))
    with pytest.raises(InputDataError, match="a true label has no score"):
        evaluate({"task": "multilabel", "metrics": ["auroc"], "columns": {"score": "score"}},
                 predictions=df)


def test_bad_scores_are_errors() -> None:
    y, s, _ = data(30, 14, weighted=False)
    s[3, 1] = np.nan
    with pytest.raises(InputDataError, match="null, NaN or infinite"):
        evaluate(config(["auroc"], "struct", False), predictions=frame(y, s, None))
    y, s, _ = data(30, 14, weighted=False)
    df = frame(y, s, None, "list").with_columns(
        pl.when(pl.int_range(pl.len()) == 2).then(pl.col("score").list.head(3))
        .otherwise(pl.col("score")).alias("score"))
    with pytest.raises(InputDataError, match="does not hold 5 scores"):
        evaluate(config(["average_precision"], "list", False), predictions=df)


def test_a_column_called_score_is_used_only_when_named() -> None:
    """The score role is opt-in: multilabel files that happen to hold a 'score' column (of
    anything) read as before; a score metric without it names what it needs (exit 2)."""
    y, s, _ = data(30, 15, weighted=False)
    df = frame(y, s, None).with_columns(pl.lit("x").alias("score"))
    assert evaluate({"task": "multilabel", "metrics": ["f1"]}, predictions=df).values()
    with pytest.raises(MetricError, match="'auroc' needs a score column"):
        evaluate({"task": "multilabel", "metrics": ["auroc"]}, predictions=frame(y, s, None))


# --------------------------------------------------------------------------- engines, segments

def test_segments_equal_each_segment_alone() -> None:
    y, s, w = data(300, 16)
    df = frame(y, s, w).with_columns(pl.Series("group", np.arange(300) % 3).cast(pl.String))
    r = evaluate(config(every(), "struct", True, group_by=["group"]), predictions=df)
    for seg in r.segments:
        mask = (df["group"] == seg.key["group"]).to_numpy()
        check({m.id: m.value for m in seg.metrics}, y[mask], s[mask], w[mask])


@pytest.mark.parametrize("layout", ["struct", "list"])
def test_streaming_engine_agrees(layout: str) -> None:
    y, s, w = data(400, 17)
    both_engines(config(every(), layout, True), frame(y, s, w, layout))


@pytest.mark.spark
def test_spark_engine_agrees(spark, tmp_path):  # noqa: F811
    from evalcli.config import parse_config
    from evalcli.runner import run_config

    y, s, w = data(300, 19)
    df = frame(y, s, w, "list").with_columns(pl.Series("group", np.arange(300) % 2))
    cfg = config(every(), "list", True, group_by=["group"])
    cfg["predictions"] = write(df, tmp_path, "d")
    r = run_config(parse_config({**cfg, "engine": "spark"}, "test", tmp_path))
    assert r.engine == "spark"
    check({m.id: m.value for m in r.metrics}, y, s, w)
    for seg in r.segments:
        mask = (df["group"] == seg.key["group"]).to_numpy()
        check({m.id: m.value for m in seg.metrics}, y[mask], s[mask], w[mask])


@pytest.mark.parametrize("average", AVERAGES)
def test_bootstrap_equals_a_scikit_learn_bootstrap(average: str) -> None:
    """The intervals resample the per-group statistics (the label-score table, the examples'
    sums); the reference reweights every example by its group's draws and asks scikit-learn."""
    from tests.test_uncertainty_engine import R, bounds, ci_of, row_weights

    y, s, w = data(240, 20)
    cfg = config([{"metric": m, "average": average,
                   **({"no_positive": "zero"} if m == "average_precision" else {})}
                  for m in ("auroc", "average_precision")], "struct", True,
                 uncertainty={"method": "bootstrap"})
    r = evaluate(cfg, predictions=frame(y, s, w))
    reps = row_weights(pl.Series("u", np.arange(len(y)), dtype=pl.UInt32)) * w[None, :]
    for m, fn in ((r.metrics[0], skm.roc_auc_score), (r.metrics[1], skm.average_precision_score)):
        want = np.array([sk(fn, y, s, reps[i], average) for i in range(R) if reps[i].sum() > 0])
        assert not np.isnan(want).any()
        assert ci_of(r, m.id) == pytest.approx(bounds(want), abs=1e-9), m.id
