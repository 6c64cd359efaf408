"""Binary metrics against scikit-learn and Spark's published definitions, through the pipeline.

Every value here is computed the way a user gets it: data written to a file, a config, the
reader, the alignment, the task's checks and the one-pass engine (``tests/_pipeline.py``).
References are scikit-learn 1.9 (``sklearn.metrics``), Spark MLlib's definitions written out
as plain Python loops (AUPRC), and brute force (peak F1).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from itertools import pairwise

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm

from evalcli.errors import InputDataError, MetricError
from tests._pipeline import run, value, values

ALL = [
    "accuracy", "precision", "recall", "specificity", "fpr", "f1", "fbeta[beta=2]",
    "fbeta[beta=0.5]", "mcc", "balanced_accuracy", "auroc", "auprc", "average_precision",
    "log_loss", "brier", "peak_f1",
]

Arr = np.ndarray


# --------------------------------------------------------------------------- references

def spark_auprc(y: Sequence[int], s: Sequence[float], w: Sequence[float] | None = None) -> float:
    """Spark MLlib's areaUnderPR, written from its definition.

    One (recall, precision) point per distinct score, highest first, from cumulative weighted
    counts; the point (0, precision of the first point) is put in front; the area is the
    trapezoidal sum. Zero-weight rows are left out (they carry no evidence).
    """
    rows = [(si, yi, 1.0 if w is None else wi)
            for si, yi, wi in zip(s, y, w if w is not None else [1.0] * len(y), strict=True)]
    rows = [r for r in rows if r[2] > 0]
    p_total = sum(wi for _, yi, wi in rows if yi == 1)
    points = []
    for t in sorted({si for si, _, _ in rows}, reverse=True):
        tp = sum(wi for si, yi, wi in rows if si >= t and yi == 1)
        fp = sum(wi for si, yi, wi in rows if si >= t and yi == 0)
        points.append((tp / p_total, tp / (tp + fp)))
    points.insert(0, (0.0, points[0][1]))
    return sum((x2 - x1) * (y1 + y2) / 2 for (x1, y1), (x2, y2) in pairwise(points))


def brute_peak_f1(y: Arr, s: Arr, w: Arr | None) -> tuple[float, float]:
    """Max F1 over every distinct score used as threshold (score >= t), and the highest t."""
    ww = np.ones(len(y)) if w is None else w
    best, best_t = -1.0, math.nan
    for t in sorted(set(s[ww > 0].tolist()), reverse=True):
        f = skm.f1_score(y, (s >= t).astype(int), sample_weight=ww, zero_division=0)
        if f > best + 1e-12:
            best, best_t = f, t
    return best, best_t


def sk_reference(y: Arr, s: Arr, w: Arr | None, threshold: float = 0.5) -> dict[str, float]:
    """scikit-learn's value of every binary metric (nan where scikit-learn has none)."""
    yp = (s >= threshold).astype(int)
    kw = {"sample_weight": w}
    cm = skm.confusion_matrix(y, yp, labels=[0, 1], sample_weight=w)
    tn, fp = cm[0]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        out = {
            "accuracy": skm.accuracy_score(y, yp, **kw),
            "precision": skm.precision_score(y, yp, zero_division=0, **kw),
            "recall": skm.recall_score(y, yp, zero_division=0, **kw),
            "specificity": tn / (tn + fp) if tn + fp else 0.0,
            "fpr": fp / (tn + fp) if tn + fp else 0.0,
            "f1": skm.f1_score(y, yp, zero_division=0, **kw),
            "fbeta[beta=2]": skm.fbeta_score(y, yp, beta=2, zero_division=0, **kw),
            "fbeta[beta=0.5]": skm.fbeta_score(y, yp, beta=0.5, zero_division=0, **kw),
            "mcc": skm.matthews_corrcoef(y, yp, **kw),
            "balanced_accuracy": skm.balanced_accuracy_score(y, yp, **kw),
            "auroc": skm.roc_auc_score(y, s, **kw) if len(set(y)) == 2 else math.nan,
            "log_loss": skm.log_loss(y, s, labels=[0, 1], **kw),
            "brier": skm.brier_score_loss(y, s, pos_label=1, **kw),
        }
    ww = np.ones(len(y)) if w is None else w
    if (ww * y).sum() > 0:
        out["average_precision"] = skm.average_precision_score(y, s, **kw)
        out["auprc"] = spark_auprc(y.tolist(), s.tolist(), None if w is None else w.tolist())
        out["peak_f1"] = brute_peak_f1(y, s, w)[0]
    else:
        out["average_precision"] = out["auprc"] = out["peak_f1"] = math.nan
    # scikit-learn's AUROC is nan when a class has no weight; so is ours (undefined)
    if (ww * y).sum() == 0 or (ww * (1 - y)).sum() == 0:
        out["auroc"] = math.nan
    return out


def frame(y: Sequence[int], s: Sequence[float], w: Sequence[float] | None = None) -> pl.DataFrame:
    data: dict[str, object] = {
        "label": pl.Series(list(y), dtype=pl.Int64),
        "score": pl.Series([float(v) for v in s], dtype=pl.Float64),
    }
    if w is not None:
        data["w"] = pl.Series([float(v) for v in w], dtype=pl.Float64)
    return pl.DataFrame(data)


def ours(y: Sequence[int], s: Sequence[float], w: Sequence[float] | None = None,
         metrics: Sequence[object] = ALL, **kw: object) -> dict[str, float | None]:
    if w is not None:
        kw["columns"] = {"weight": "w"}
    return values(run(frame(y, s, w), "binary", metrics, **kw))


def assert_matches(got: dict[str, float | None], ref: dict[str, float]) -> None:
    for mid, expected in ref.items():
        if mid not in got:
            continue
        if math.isnan(expected):
            assert got[mid] is None, f"{mid}: expected undefined, got {got[mid]}"
        else:
            assert got[mid] is not None, f"{mid}: undefined, scikit-learn says {expected}"
            assert got[mid] == pytest.approx(expected, rel=1e-9, abs=1e-12), mid


# --------------------------------------------------------------------------- property tests

GRID = [0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0]


@st.composite
def binary_data(draw: st.DrawFn, max_size: int = 40) -> tuple[Arr, Arr, Arr | None]:
    n = draw(st.integers(1, max_size))
    y = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    if draw(st.booleans()):  # a coarse grid: many ties
        s = draw(st.lists(st.sampled_from(GRID), min_size=n, max_size=n))
    else:
        s = draw(st.lists(st.floats(0, 1, allow_nan=False), min_size=n, max_size=n))
    w = None
    if draw(st.booleans()):
        w = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 2.0, 3.0]), min_size=n, max_size=n))
    return (np.array(y), np.array(s, dtype=float),
            None if w is None else np.array(w, dtype=float))


SETTINGS = settings(max_examples=60, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(binary_data())
def test_every_metric_matches_the_references(data: tuple[Arr, Arr, Arr | None]) -> None:
    y, s, w = data
    assume(w is None or w.sum() > 0)
    got = ours(y.tolist(), s.tolist(), None if w is None else w.tolist())
    assert_matches(got, sk_reference(y, s, w))


@SETTINGS
@given(binary_data(), st.sampled_from([0.0, 0.1, 0.3, 0.75, 1.0]))
def test_threshold_parameter(data: tuple[Arr, Arr, Arr | None], threshold: float) -> None:
    y, s, w = data
    assume(w is None or w.sum() > 0)
    names = ["accuracy", "precision", "recall", "specificity", "fpr", "f1", "mcc",
             "balanced_accuracy"]
    got = ours(y.tolist(), s.tolist(), None if w is None else w.tolist(),
               [{"metric": m, "threshold": threshold} for m in names])
    ref = sk_reference(y, s, w, threshold)
    assert_matches({k.split("[")[0]: v for k, v in got.items()},
                   {k: ref[k] for k in names})


@SETTINGS
@given(binary_data())
def test_peak_f1_threshold_is_the_highest_reaching_the_maximum(
        data: tuple[Arr, Arr, Arr | None]) -> None:
    y, s, w = data
    assume((np.ones(len(y)) if w is None else w)[y == 1].sum() > 0)
    r = run(frame(y.tolist(), s.tolist(), None if w is None else w.tolist()), "binary",
            ["peak_f1"], **({"columns": {"weight": "w"}} if w is not None else {}))
    best, t = brute_peak_f1(y, s, w)
    assert r.metrics[0].value == pytest.approx(best, rel=1e-9)
    assert r.metrics[0].details["threshold"] == pytest.approx(t)


@SETTINGS
@given(binary_data(max_size=25))
def test_hard_prediction_column(data: tuple[Arr, Arr, Arr | None]) -> None:
    """With a prediction column and no threshold, counts come from the predictions."""
    y, s, w = data
    assume(w is None or w.sum() > 0)
    yp = (s >= 0.42).astype(int)  # any hard prediction, unrelated to the 0.5 default
    df = frame(y.tolist(), s.tolist(), None if w is None else w.tolist()).with_columns(
        prediction=pl.Series(yp.tolist()))
    kw = {"columns": {"weight": "w"}} if w is not None else {}
    got = values(run(df, "binary", ["precision", "recall", "f1", "mcc", "auroc"], **kw))
    ref = sk_reference(y, s, w, threshold=0.42)
    assert_matches(got, {k: ref[k] for k in ("precision", "recall", "f1", "mcc", "auroc")})


# --------------------------------------------------------------------------- hand-worked cases

def test_auprc_hand_worked_from_sparks_definition() -> None:
    # scores 0.9(+) 0.8(-) 0.7(+) 0.6(-): PR points (R, P) at each distinct score, highest
    # first: (.5, 1), (.5, .5), (1, 2/3), (1, .5); Spark puts (0, 1) in front.
    # area = .5*(1+1)/2 + 0 + .5*(.5+2/3)/2 + 0 = 19/24
    got = value({"label": [1, 0, 1, 0], "score": [0.9, 0.8, 0.7, 0.6]}, "binary", "auprc")
    assert got == pytest.approx(19 / 24)
    # average precision (step) on the same data: .5*1 + .5*(2/3) = 5/6
    got = value({"label": [1, 0, 1, 0], "score": [0.9, 0.8, 0.7, 0.6]}, "binary",
                "average_precision")
    assert got == pytest.approx(5 / 6)


def test_auprc_first_point_takes_the_precision_of_a_tied_top_score() -> None:
    # the top score is tied between a positive and a negative: first point (0, 1/2), then
    # (.5, .5), (1, 2/3): area = .25 + .5*(.5+2/3)/2 = 13/24 (not starting at precision 1)
    got = value({"label": [1, 0, 1], "score": [0.9, 0.9, 0.1]}, "binary", "auprc")
    assert got == pytest.approx(13 / 24)
    assert got == pytest.approx(spark_auprc([1, 0, 1], [0.9, 0.9, 0.1]))


def test_auroc_ties_count_half() -> None:
    # one positive and one negative tied: the pair counts 1/2; the other pairs are ordered
    y, s = [1, 0, 1, 0], [0.8, 0.8, 0.9, 0.1]
    # pairs (pos, neg): (0.8,0.8)=.5 (0.8,0.1)=1 (0.9,0.8)=1 (0.9,0.1)=1 -> 3.5/4
    assert value({"label": y, "score": s}, "binary", "auroc") == pytest.approx(3.5 / 4)
    assert value({"label": y, "score": s}, "binary", "auroc") == pytest.approx(
        skm.roc_auc_score(y, s))


def test_all_equal_scores() -> None:
    got = ours([0, 1, 1, 0, 1], [0.3] * 5)
    assert got["auroc"] == 0.5
    assert got["average_precision"] == pytest.approx(0.6)  # the prevalence
    assert got["auprc"] == pytest.approx(0.6)  # one point (1, .6) after (0, .6)
    assert got["peak_f1"] == pytest.approx(2 * 3 / (2 * 3 + 2))  # everything positive


@pytest.mark.parametrize("y", [[0, 0, 0], [1, 1, 1]])
def test_single_class_present(y: list[int]) -> None:
    r = run(frame(y, [0.2, 0.6, 0.9]), "binary", ALL)
    got = {m.id: m for m in r.metrics}
    assert got["auroc"].value is None and got["auroc"].notes
    if y[0] == 0:
        for mid in ("auprc", "average_precision", "peak_f1"):
            assert got[mid].value is None and "no positive" in got[mid].notes[0]
        assert got["recall"].value == 0.0 and got["recall"].notes  # zero_division, said so
    else:
        assert got["average_precision"].value == 1.0
        assert got["auprc"].value == 1.0
        assert got["specificity"].value == 0.0 and got["specificity"].notes
    assert got["mcc"].value == 0.0 and got["mcc"].notes
    ys, ss = np.array(y), np.array([0.2, 0.6, 0.9])
    ref = sk_reference(ys, ss, None)
    for mid in ("accuracy", "precision", "f1", "balanced_accuracy", "log_loss", "brier"):
        assert got[mid].value == pytest.approx(ref[mid]), mid


def test_one_row() -> None:
    got = ours([1], [0.7])
    assert got["accuracy"] == 1.0 and got["auroc"] is None
    assert got["log_loss"] == pytest.approx(-math.log(0.7))
    assert got["brier"] == pytest.approx(0.09)
    assert got["peak_f1"] == 1.0


@pytest.mark.parametrize("zd,expected", [("0", 0.0), ("1", 1.0), ("nan", None)])
def test_zero_division_parameter(zd: str, expected: float | None) -> None:
    r = run(frame([1, 0], [0.1, 0.2]), "binary", [{"metric": "precision", "zero_division": zd}])
    m = r.metrics[0]
    assert m.value == expected and m.notes
    assert skm.precision_score([1, 0], [0, 0], zero_division=np.nan if zd == "nan" else
                               int(zd)) == pytest.approx(math.nan if expected is None
                                                         else expected, nan_ok=True)


# --------------------------------------------------------------------------- weights

def test_zero_weights_equal_dropping_the_rows() -> None:
    # the top score only has zero-weight rows: it must not create a PR point (it would be
    # 0/0 precision) nor a peak-F1 threshold
    y, s, w = [1, 0, 1, 0, 1, 1], [0.99, 0.8, 0.6, 0.3, 0.2, 0.05], [0, 1, 1, 1, 1, 0]
    got = ours(y, s, w)
    keep = [i for i in range(len(y)) if w[i] > 0]
    dropped = ours([y[i] for i in keep], [s[i] for i in keep])
    for mid in ALL:
        assert got[mid] == pytest.approx(dropped[mid]), mid
    r = run(frame(y, s, w), "binary", ["peak_f1"], columns={"weight": "w"})
    assert r.metrics[0].details["threshold"] != 0.99


def test_integer_weights_equal_duplicated_rows() -> None:
    rng = np.random.default_rng(7)
    y = rng.integers(0, 2, 30)
    s = rng.choice(GRID, 30)
    w = rng.integers(1, 4, 30)
    got = ours(y.tolist(), s.tolist(), w.astype(float).tolist())
    rep = ours(np.repeat(y, w).tolist(), np.repeat(s, w).tolist())
    for mid in ALL:
        assert got[mid] == pytest.approx(rep[mid]), mid


def test_all_weights_zero_is_undefined_not_a_number() -> None:
    r = run(frame([1, 0], [0.7, 0.3], [0, 0]), "binary", ALL, columns={"weight": "w"})
    for m in r.metrics:
        assert m.value is None or m.notes, m.id  # undefined, or a fallback that says so
    assert r.metric("auroc").value is None
    assert r.metric("log_loss").value is None


def test_negative_weight_is_an_error() -> None:
    with pytest.raises(InputDataError, match="negative"):
        ours([1, 0], [0.7, 0.3], [-1, 1])


# --------------------------------------------------------------------------- log loss, brier

def test_log_loss_clips_at_machine_epsilon_like_scikit_learn() -> None:
    y, s = [1, 0, 1], [1.0, 1.0, 0.0]
    got = ours(y, s, metrics=["log_loss"])["log_loss"]
    assert got == pytest.approx(skm.log_loss(y, s, labels=[0, 1]))
    eps = float(np.finfo(np.float64).eps)
    assert got == pytest.approx(-2 * math.log(eps) / 3)


def test_log_loss_eps_parameter() -> None:
    y, s = [1, 0, 1, 0], [1.0, 0.2, 0.0005, 0.0]
    got = ours(y, s, metrics=[{"metric": "log_loss", "eps": 1e-3}])["log_loss[eps=0.001]"]
    p = np.clip(np.array(s), 1e-3, 1 - 1e-3)
    yy = np.array(y)
    assert got == pytest.approx(float(-np.mean(yy * np.log(p) + (1 - yy) * np.log(1 - p))))


@pytest.mark.parametrize("eps", [0, -1, 0.5, 0.7])
def test_log_loss_eps_out_of_range(eps: float) -> None:
    with pytest.raises(MetricError, match="eps"):
        ours([1, 0], [0.5, 0.5], metrics=[{"metric": "log_loss", "eps": eps}])


@pytest.mark.parametrize("metric", ["log_loss", "brier"])
@pytest.mark.parametrize("bad", [1.5, -0.1])
def test_scores_outside_unit_interval_are_an_error_for_probability_metrics(
        metric: str, bad: float) -> None:
    with pytest.raises(InputDataError, match=r"outside \[0, 1\].*1 row\(s\).*data row 3"):
        ours([1, 0, 1], [0.5, 0.2, bad], metrics=[metric])


def test_scores_outside_unit_interval_are_fine_for_rank_metrics() -> None:
    y, s = [1, 0, 1, 0], [3.5, -2.0, 0.7, 0.7]
    got = ours(y, s, metrics=["auroc", "average_precision", "auprc", "peak_f1"])
    assert got["auroc"] == pytest.approx(skm.roc_auc_score(y, s))
    assert got["average_precision"] == pytest.approx(skm.average_precision_score(y, s))
    assert got["auprc"] == pytest.approx(spark_auprc(y, s))


# --------------------------------------------------------------------------- label codings

def test_boolean_labels() -> None:
    df = pl.DataFrame({"label": [True, False, True, False], "score": [0.9, 0.4, 0.3, 0.2]})
    got = values(run(df, "binary", ["auroc", "accuracy"]))
    assert got["auroc"] == pytest.approx(skm.roc_auc_score([1, 0, 1, 0], [0.9, 0.4, 0.3, 0.2]))
    assert got["accuracy"] == pytest.approx(0.75)


def test_float_labels_zero_one() -> None:
    df = pl.DataFrame({"label": [1.0, 0.0, 1.0, 0.0], "score": [0.9, 0.4, 0.3, 0.2]})
    assert values(run(df, "binary", ["auroc"]))["auroc"] == pytest.approx(0.75)


def test_float_labels_other_values_are_an_error() -> None:
    df = pl.DataFrame({"label": [1.0, 0.5, 1.0, 0.0], "score": [0.9, 0.4, 0.3, 0.2]})
    with pytest.raises(InputDataError, match=r"0 and 1.*data row 2.*0\.5"):
        run(df, "binary", ["auroc"])


def test_string_labels_with_positive() -> None:
    df = pl.DataFrame({"label": ["yes", "no", "yes", "no"], "score": [0.9, 0.4, 0.3, 0.2],
                       "prediction": ["yes", "yes", "no", "no"]})
    got = values(run(df, "binary", ["auroc", "precision", "recall"], options={"positive": "yes"}))
    assert got["auroc"] == pytest.approx(0.75)
    assert got["precision"] == pytest.approx(0.5) and got["recall"] == pytest.approx(0.5)


def test_string_labels_with_positive_and_a_zero_one_prediction() -> None:
    # the prediction is coded 0/1, not like the labels: positive maps the labels only
    df = pl.DataFrame({"label": ["yes", "no", "yes"], "prediction": [1, 1, 0]})
    got = values(run(df, "binary", ["accuracy", "precision", "recall"],
                     options={"positive": "yes"}))
    assert got["accuracy"] == pytest.approx(1 / 3)
    assert got["precision"] == pytest.approx(1 / 2) and got["recall"] == pytest.approx(1 / 2)
    bad = pl.DataFrame({"label": ["yes", "no"], "prediction": [2, 1]})
    with pytest.raises(InputDataError, match=r"prediction column must hold 0 and 1"):
        run(bad, "binary", ["accuracy"], options={"positive": "yes"})


def test_string_labels_without_positive_are_an_error() -> None:
    df = pl.DataFrame({"label": ["yes", "no"], "score": [0.9, 0.4]})
    with pytest.raises(InputDataError, match="positive"):
        run(df, "binary", ["auroc"])


def test_numeric_labels_with_a_named_positive() -> None:
    df = pl.DataFrame({"label": [2, 1, 2, 1], "score": [0.9, 0.4, 0.3, 0.2]})
    got = values(run(df, "binary", ["auroc"], options={"positive": "2"}))
    assert got["auroc"] == pytest.approx(0.75)


def test_labels_other_than_zero_one_are_an_error() -> None:
    with pytest.raises(InputDataError, match=r"0 and 1.*data row 2.*label=2"):
        ours([1, 2, 0], [0.3, 0.2, 0.1])


# --------------------------------------------------------------------------- nulls

def test_nan_score_is_an_error_with_count_and_first_row() -> None:
    with pytest.raises(InputDataError, match=r"2 row\(s\) with a null or NaN score.*data row 2"):
        ours([1, 0, 1, 0], [0.7, math.nan, 0.2, math.nan])


def test_null_label_is_an_error() -> None:
    df = pl.DataFrame({"label": [1, None, 0], "score": [0.7, 0.3, 0.2]})
    with pytest.raises(InputDataError, match=r"1 row\(s\) with a null or NaN label"):
        run(df, "binary", ["auroc"])


def test_nulls_drop_reports_the_count() -> None:
    df = pl.DataFrame({"label": [1, None, 0, 1, 0], "score": [0.7, 0.3, math.nan, 0.4, 0.9]})
    r = run(df, "binary", ["auroc"], alignment={"nulls": "drop"})
    assert r.alignment.dropped_nulls == 2
    assert r.metrics[0].value == pytest.approx(skm.roc_auc_score([1, 1, 0], [0.7, 0.4, 0.9]))


# --------------------------------------------------------------------------- parameters

@pytest.mark.parametrize("beta", [0, -1, "abc"])
def test_bad_beta(beta: object) -> None:
    with pytest.raises(MetricError, match="beta"):
        ours([1, 0], [0.5, 0.5], metrics=[{"metric": "fbeta", "beta": beta}])


def test_aliases_and_ids() -> None:
    r = run(frame([1, 0, 1], [0.9, 0.2, 0.4]), "binary",
            ["roc_auc", "fbeta[beta=2]", {"metric": "recall", "threshold": 0.3}, "ap"])
    assert [m.id for m in r.metrics] == [
        "auroc", "fbeta[beta=2]", "recall[threshold=0.3]", "average_precision"]



def test_threshold_without_scores_is_an_error() -> None:
    df = pl.DataFrame({"label": [1, 0, 1], "prediction": [1, 1, 0]})
    with pytest.raises(MetricError, match=r"threshold=0\.3 applies to scores.*no score column"):
        run(df, "binary", [{"metric": "recall", "threshold": 0.3}])
    # without a threshold the hard predictions are used
    assert values(run(df, "binary", ["recall"]))["recall"] == pytest.approx(0.5)


def test_positive_yes_from_a_yaml_config(tmp_path: object) -> None:
    from pathlib import Path

    from evalcli.config import load_config
    from evalcli.runner import run_config

    folder = Path(str(tmp_path))
    (folder / "p.csv").write_text("answer,score\nyes,0.9\nno,0.2\nyes,0.4\nno,0.5\n")
    (folder / "c.yaml").write_text("task: binary\npredictions: p.csv\ncolumns: {label: answer}\n"
                                   "options: {positive: yes}\nmetrics: [auroc]\n")
    r = run_config(load_config(folder / "c.yaml"))
    assert r.metrics[0].value == pytest.approx(0.75)


@pytest.mark.parametrize("label,positive,match", [
    ([1, 0, 1], "yes", r"positive: 'yes' is not a number.*Int64"),
    ([True, False, True], "maybe", r"positive: 'maybe' cannot name a class.*true/false"),
])
def test_positive_that_cannot_name_a_class(label: list[object], positive: str,
                                           match: str) -> None:
    from evalcli.errors import ConfigError

    df = pl.DataFrame({"label": label, "score": [0.9, 0.2, 0.4]})
    with pytest.raises(ConfigError, match=match):
        run(df, "binary", ["auroc"], options={"positive": positive})


def test_positive_false_on_boolean_labels() -> None:
    df = pl.DataFrame({"label": [True, False, True, False], "score": [0.9, 0.4, 0.3, 0.2]})
    got = values(run(df, "binary", ["auroc"], options={"positive": "false"}))
    assert got["auroc"] == pytest.approx(skm.roc_auc_score([0, 1, 0, 1], [0.9, 0.4, 0.3, 0.2]))


# --------------------------------------------------------------------------- the count tables

@settings(max_examples=80, deadline=None)
@given(st.lists(st.tuples(
    st.one_of(st.sampled_from([0.0, -0.0, 1.0, -1.0, math.inf, -math.inf, 0.5]),
              st.floats(allow_nan=False)),
    st.integers(0, 1)), min_size=1, max_size=60))
def test_the_three_ways_to_count_per_score_agree(rows: list[tuple[float, int]]) -> None:
    """The in-memory engine's unweighted path (two sorted sides merged), its weighted path
    (one sort carrying the label) and the streaming path (a hash aggregation) give the same
    table: every score of either sign, both zeros as one, infinities, ties across labels."""
    from evalcli.metrics.binary.stats import (
        _score_counts_build,
        _score_counts_merged,
        _score_counts_sorted,
    )

    lf = pl.LazyFrame({"score": [r[0] for r in rows], "label": [float(r[1]) for r in rows],
                       "weight": [1.0] * len(rows)})
    tables = [f(lf, []).collect() for f in
              (_score_counts_build, _score_counts_sorted, _score_counts_merged)]
    expected: dict[float, list[float]] = {}
    for s, y in rows:
        expected.setdefault(s + 0.0, [0.0, 0.0])[1 - y] += 1.0
    for t in tables:
        assert t.get_column("score").to_list() == sorted(expected, reverse=True)
        assert {r[0]: [r[1], r[2]] for r in t.rows()} == expected


def test_curve_metrics_share_one_computation_per_run_and_runs_share_nothing(monkeypatch):
    """The curve metrics of a run read the curve areas computed once (the run's memo); nothing
    a run computed outlives it, and a second run in the same process, on other rows, computes
    its own."""
    import gc
    import weakref

    import evalcli
    from evalcli.metrics.binary import metrics

    tables: list[weakref.ref[pl.DataFrame]] = []
    areas = metrics._areas

    def counted(table: pl.DataFrame) -> dict[str, object]:
        tables.append(weakref.ref(table))
        return areas(table)

    monkeypatch.setattr(metrics, "_areas", counted)
    cfg = {"task": "binary", "metrics": ["auroc", "auprc", "average_precision", "peak_f1"]}
    scores = [0.9, 0.8, 0.3, 0.1]
    first = evalcli.evaluate(cfg, predictions={"label": [1, 0, 1, 0], "score": scores}).values()
    assert len(tables) == 1
    gc.collect()
    assert tables[0]() is None  # the run's table of counts went with the run
    second = evalcli.evaluate(cfg, predictions={"label": [0, 1, 0, 1], "score": scores}).values()
    assert len(tables) == 2
    for labels, got in (([1, 0, 1, 0], first), ([0, 1, 0, 1], second)):
        assert got["auroc"] == pytest.approx(skm.roc_auc_score(labels, scores))
        assert got["average_precision"] == pytest.approx(
            skm.average_precision_score(labels, scores))
    assert (first["peak_f1"], second["peak_f1"]) == (pytest.approx(0.8), pytest.approx(2 / 3))


# --------------------------------------------------------------------------- operating points
# References: a brute force over every distinct score written here (scikit-learn's confusion
# matrix at each threshold), and scikit-learn's precision_recall_curve for the two PR ones.

def brute_points(y: Arr, s: Arr, w: Arr | None) -> list[tuple[float, float, float, float, float]]:
    """(threshold, tp, fp, fn, tn) at every distinct score of a row with weight, highest first,
    from scikit-learn's weighted confusion matrix of score >= threshold."""
    ww = np.ones(len(y)) if w is None else w
    out = []
    for t in sorted(set(s[ww > 0].tolist()), reverse=True):
        (tn, fp), (fn, tp) = skm.confusion_matrix(y, (s >= t).astype(int), labels=[0, 1],
                                                  sample_weight=ww)
        out.append((t, float(tp), float(fp), float(fn), float(tn)))
    return out


def brute_constrained(y: Arr, s: Arr, w: Arr | None, value: str, bound: str, level: float
                      ) -> tuple[float, float, float] | None:
    """(value, bound, threshold): the best value over the thresholds whose bound rate is at
    least level; at equal value the best bound, then the highest threshold. None when no
    threshold qualifies."""
    def rate(name: str, tp: float, fp: float, fn: float, tn: float) -> float:
        num, den = {"precision": (tp, tp + fp), "recall": (tp, tp + fn),
                    "specificity": (tn, tn + fp)}[name]
        return num / den

    cands = [(rate(value, *c), rate(bound, *c), t) for t, *c in brute_points(y, s, w)
             if rate(bound, *c) >= level]
    return max(cands) if cands else None


OPERATING = {  # metric: (value, bound, level parameter)
    "recall_at_precision": ("recall", "precision", "min_precision"),
    "precision_at_recall": ("precision", "recall", "min_recall"),
    "sensitivity_at_specificity": ("recall", "specificity", "min_specificity"),
    "specificity_at_sensitivity": ("specificity", "recall", "min_sensitivity"),
}


def brute_min_cost(y: Arr, s: Arr, w: Arr | None, c_fp: float, c_fn: float
                   ) -> tuple[float, float | None]:
    """(mean cost, threshold) minimised over the distinct scores and predicting nothing
    (threshold None); at equal cost the highest threshold, predicting nothing first."""
    ww = np.ones(len(y)) if w is None else w
    total = ww.sum()
    best = (c_fn * ww[y == 1].sum(), None)
    for t, _, fp, fn, _ in brute_points(y, s, w):
        cost = c_fp * fp + c_fn * fn
        if cost < best[0]:
            best = (cost, t)
    return best[0] / total, best[1]


def interpolated_top(y: Arr, s: Arr, w: Arr | None, fraction: float) -> float:
    """Precision in the top fraction of the weight, ties in part: the cumulative positives
    against the cumulative weight of scikit-learn's ROC points, interpolated linearly inside
    the tied block that straddles the cut (the expectation over the orders of tied rows)."""
    fpr, tpr, _ = skm.roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    ww = np.ones(len(y)) if w is None else w
    p, n = ww[y == 1].sum(), ww[y == 0].sum()
    tps, fps = tpr * p, fpr * n
    k = fraction * (p + n)
    return float(np.interp(k, tps + fps, tps) / k)


LEVELS = [0.0, 0.3, 0.5, 2 / 3, 0.75, 0.9, 1.0]


@SETTINGS
@given(binary_data(), st.sampled_from(LEVELS))
def test_constrained_operating_points_match_brute_force(data: tuple[Arr, Arr, Arr | None],
                                                        level: float) -> None:
    y, s, w = data
    ww = np.ones(len(y)) if w is None else w
    assume(ww.sum() > 0)
    p, n = ww[y == 1].sum(), ww[y == 0].sum()
    r = run(frame(y.tolist(), s.tolist(), None if w is None else w.tolist()), "binary",
            [{"metric": m, spec[2]: level} for m, spec in OPERATING.items()],
            **({"columns": {"weight": "w"}} if w is not None else {}))
    for m, (name, (val, bound, _)) in zip(r.metrics, OPERATING.items(), strict=True):
        needs_neg = "specificity" in (val, bound)
        if p <= 0 or (needs_neg and n <= 0):
            assert m.value is None and m.notes[0].startswith("undefined: no "), (name, m.notes)
            continue
        ref = brute_constrained(y, s, w, val, bound, level)
        if ref is None:
            assert m.value is None, (name, m.value)
            said = "sensitivity" if name.startswith("spec") else bound
            assert m.notes[0].startswith(f"undefined: no threshold reaches {said} >="), m.notes
            continue
        assert m.value == pytest.approx(ref[0], rel=1e-12, abs=1e-15), name
        key = "sensitivity" if name == "specificity_at_sensitivity" else bound
        assert m.details == {"threshold": ref[2], key: pytest.approx(ref[1], rel=1e-12)}, name
        assert m.caption == f"at threshold {ref[2]:.6g}"


@SETTINGS
@given(binary_data(), st.sampled_from([0.0, 0.5, 0.8, 0.9]))
def test_pr_operating_points_match_precision_recall_curve(data: tuple[Arr, Arr, Arr | None],
                                                          level: float) -> None:
    """The same against scikit-learn's precision_recall_curve (every threshold kept)."""
    y, s, w = data
    ww = np.ones(len(y)) if w is None else w
    assume(ww[y == 1].sum() > 0)
    prec, rec, _ = skm.precision_recall_curve(y, s, sample_weight=w, drop_intermediate=False)
    prec, rec = prec[:-1], rec[:-1]  # drop the (recall 0, precision 1) end: no threshold
    got = ours(y.tolist(), s.tolist(), None if w is None else w.tolist(),
               [{"metric": "recall_at_precision", "min_precision": level},
                {"metric": "precision_at_recall", "min_recall": level}])
    ok = prec >= level
    expected = rec[ok].max() if ok.any() else None
    assert got[f"recall_at_precision[min_precision={level:g}]"] == (
        None if expected is None else pytest.approx(expected, rel=1e-12))
    assert got[f"precision_at_recall[min_recall={level:g}]"] == pytest.approx(
        prec[rec >= level].max(), rel=1e-12)


@SETTINGS
@given(binary_data(), st.sampled_from([(1.0, 1.0), (1.0, 5.0), (4.0, 1.0), (0.5, 0.25)]))
def test_min_cost_matches_brute_force(data: tuple[Arr, Arr, Arr | None],
                                      costs: tuple[float, float]) -> None:
    y, s, w = data
    ww = np.ones(len(y)) if w is None else w
    assume(ww.sum() > 0)
    r = run(frame(y.tolist(), s.tolist(), None if w is None else w.tolist()), "binary",
            [{"metric": "min_cost", "fp_cost": costs[0], "fn_cost": costs[1]}, "accuracy",
             "peak_f1"], **({"columns": {"weight": "w"}} if w is not None else {}))
    cost, t = brute_min_cost(y, s, w, *costs)
    m = r.metrics[0]
    assert m.value == pytest.approx(cost, rel=1e-12, abs=1e-15)
    assert m.details["threshold"] == t
    assert m.caption == ("predicting no row positive" if t is None else f"at threshold {t:.6g}")
    if costs == (1.0, 1.0):  # the lowest error rate: no accuracy at any threshold is higher
        best = max([skm.accuracy_score(y, s >= t, sample_weight=ww) for t in set(s.tolist())]
                   + [skm.accuracy_score(y, np.zeros(len(y)), sample_weight=ww)])
        assert m.value == pytest.approx(1 - best, abs=1e-12)


@SETTINGS
@given(binary_data(), st.sampled_from([0.01, 0.1, 0.25, 1 / 3, 0.5, 1.0]))
def test_precision_and_lift_at_top_match_the_interpolated_roc_counts(
        data: tuple[Arr, Arr, Arr | None], fraction: float) -> None:
    y, s, w = data
    ww = np.ones(len(y)) if w is None else w
    assume(ww[y == 1].sum() > 0 and ww[y == 0].sum() > 0)  # roc_curve needs both classes
    top, lift = ours(y.tolist(), s.tolist(), None if w is None else w.tolist(),
                     [{"metric": "precision_at_top", "fraction": fraction},
                      {"metric": "lift_at_top", "fraction": fraction}]).values()
    expected = interpolated_top(y, s, w, fraction)
    base = ww[y == 1].sum() / ww.sum()
    assert top == pytest.approx(expected, rel=1e-9)
    assert lift == pytest.approx(expected / base, rel=1e-9)


def test_precision_at_top_is_the_plain_top_k_without_ties() -> None:
    rng = np.random.default_rng(3)
    y, s = rng.integers(0, 2, 200), rng.permutation(200) / 200  # distinct scores
    got = ours(y.tolist(), s.tolist(), None, ["precision_at_top@0.05"])
    top = np.argsort(-s)[:10]
    assert got["precision_at_top@0.05"] == pytest.approx(y[top].mean(), rel=1e-12)


def test_a_fraction_is_the_cut_off_of_the_top_metrics() -> None:
    """``lift@0.2`` (issue 15's lift@fraction) is lift_at_top[fraction=0.2], and the id writes
    the fraction as the cut-off; an integer metric refuses a fraction."""
    y, s = [1, 1, 0, 0, 0, 0, 1, 0, 0, 0], [0.9, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.2, 0.1, 0.0]
    for spelling in ("lift@0.2", "lift_at_top@.2", "lift_at_top[fraction=0.2]",
                     {"metric": "lift", "fraction": 0.2}):
        assert ours(y, s, None, [spelling]) == {"lift_at_top@0.2": pytest.approx(1 / 0.3)}
    assert ours(y, s, None, ["precision_at_top@1"]) == {"precision_at_top@1": 0.3}
    with pytest.raises(MetricError, match="disagree"):
        run(frame(y, s), "binary", [{"metric": "lift@0.2", "fraction": 0.3}])


def test_operating_points_undefined_cases_and_parameters() -> None:
    got = run(frame([0, 0, 0], [0.2, 0.4, 0.9]), "binary", [
        "recall_at_precision[min_precision=0.5]", "precision_at_top@0.5",
        "lift_at_top@0.5", "min_cost", "specificity_at_sensitivity[min_sensitivity=1]"])
    by = {m.metric: m for m in got.metrics}
    assert by["recall_at_precision"].notes == ["undefined: no positive labels"]
    assert by["precision_at_top"].value == 0.0  # no positive in the top: a true 0
    assert by["lift_at_top"].value is None
    assert by["min_cost"].value == 0.0 and by["min_cost"].details["threshold"] is None
    assert by["specificity_at_sensitivity"].notes == ["undefined: no positive labels"]
    for bad, msg in (("recall_at_precision", "'min_precision'.*may not be empty"),
                     ("recall_at_precision[min_precision=1.5]", "must be <= 1"),
                     ("precision_at_top@0", "must be > 0"),
                     ("min_cost[fn_cost=-1]", "must be > 0")):
        with pytest.raises(MetricError, match=msg):
            run(frame([0, 1], [0.2, 0.4]), "binary", [bad])


def test_operating_points_per_segment() -> None:
    rng = np.random.default_rng(7)
    n = 300
    y = rng.integers(0, 2, n)
    s = np.round(np.clip(0.5 * y + rng.normal(0.3, 0.2, n), 0, 1), 1)  # ties
    w = rng.choice([0.0, 0.5, 1.0, 3.0], n)
    g = rng.choice(["a", "b", "c"], n)
    df = frame(y.tolist(), s.tolist(), w.tolist()).with_columns(pl.Series("g", g))
    metrics = [{"metric": m, spec[2]: 0.8} for m, spec in OPERATING.items()] + [
        {"metric": "min_cost", "fn_cost": 3}, {"metric": "precision_at_top", "fraction": 0.1},
        {"metric": "lift_at_top", "fraction": 0.1}]
    r = run(df, "binary", metrics, columns={"weight": "w"}, group_by=["g"])
    assert len(r.segments) == 3
    for seg in r.segments:
        keep = g == seg.key["g"]
        yy, ss, ww = y[keep], s[keep], w[keep]
        for m, (val, bound, _) in zip(seg.metrics, OPERATING.values(), strict=False):
            ref = brute_constrained(yy, ss, ww, val, bound, 0.8)
            assert ref is not None, "the data reach every level in every segment"
            assert m.value == pytest.approx(ref[0], rel=1e-12)
            assert m.details["threshold"] == ref[2]
        cost, t = brute_min_cost(yy, ss, ww, 1.0, 3.0)
        assert seg.metrics[4].value == pytest.approx(cost, rel=1e-12)
        assert seg.metrics[4].details["threshold"] == t
        top = interpolated_top(yy, ss, ww, 0.1)
        assert seg.metrics[5].value == pytest.approx(top, rel=1e-9)
        base = ww[yy == 1].sum() / ww.sum()
        assert seg.metrics[6].value == pytest.approx(top / base, rel=1e-9)


def test_a_level_reached_exactly_counts_as_reached() -> None:
    """Recall 14/17.5 is 0.8 exactly (scikit-learn's curve says so); a division by the
    total as a literal would give 0.7999999999999999 and miss min_recall=0.8."""
    y = [1, 1, 1, 0]
    s = [0.1, 0.0, 0.0, 0.0]
    w = [14.0, 1.5, 2.0, 0.5]
    got = ours(y, s, w, ["precision_at_recall[min_recall=0.8]",
                         "sensitivity_at_specificity[min_specificity=1]"])
    assert got == {"precision_at_recall[min_recall=0.8]": 1.0,
                   "sensitivity_at_specificity[min_specificity=1]": 0.8}


# --------------------------------------------------------------------------- calibration

def sk_calibration(y: Arr, s: Arr, bins: int, strategy: str) -> tuple[float, float]:
    """ECE and MCE from scikit-learn's calibration_curve (its per-bin positive rate and mean
    score, non-empty bins only) and the bins' row counts, binned as it bins."""
    from sklearn.calibration import calibration_curve

    prob_true, prob_pred = calibration_curve(y, s, n_bins=bins, strategy=strategy)
    edges = (np.linspace(0, 1, bins + 1) if strategy == "uniform" else
             np.percentile(s, np.linspace(0, 1, bins + 1) * 100))
    counts = np.bincount(np.searchsorted(edges[1:-1], s), minlength=bins)
    counts = counts[counts > 0]
    gap = np.abs(prob_true - prob_pred)
    return float((counts * gap).sum() / counts.sum()), float(gap.max())


def hand_calibration(y: Arr, s: Arr, w: Arr, bins: int, strategy: str) -> tuple[float, float]:
    """The weighted definition written out row by row: quantile edges at position
    (W − 1)·b/B of the rows sorted by score, a row of weight w spanning w positions,
    interpolated linearly between the scores there; a score goes to #{inner edges < score}."""
    keep = w > 0
    y, s, w = y[keep], s[keep], w[keep]
    if strategy == "uniform":
        edges = np.linspace(0, 1, bins + 1)
    else:
        order = np.argsort(s, kind="stable")
        ss, cum = s[order], np.cumsum(w[order])

        def x(j: float) -> float:  # the score at position j: the first row whose span passes j
            return float(ss[min(int(np.sum(cum <= j)), len(ss) - 1)])

        edges = []
        total = float(np.sum(w[order]))
        for q in np.linspace(0, 1, bins + 1) * 100 / 100:  # numpy.percentile's arithmetic
            v = (total - 1) * q
            k = max(math.floor(v), 0)
            t = min(max(v - k, 0.0), 1.0)
            a, d = x(k), x(k + 1) - x(k)
            edges.append(x(k + 1) - d * (1 - t) if t >= 0.5 else a + d * t)  # numpy's _lerp
        edges = np.array(edges)
    b = np.searchsorted(edges[1:-1], s)
    gaps, mass = [], []
    for i in np.unique(b):
        m = b == i
        if w[m].sum() > 0:
            gaps.append(abs(np.average(y[m], weights=w[m]) - np.average(s[m], weights=w[m])))
            mass.append(w[m].sum())
    g, ms = np.array(gaps), np.array(mass)
    return float((g * ms).sum() / ms.sum()), float(g.max())


def calibration_ids(bins: int, strategy: str) -> tuple[str, str]:
    params = [f"bins={bins}"] * (bins != 10) + [f"strategy={strategy}"] * (strategy != "uniform")
    suffix = f"[{','.join(params)}]" if params else ""
    return "ece" + suffix, "mce" + suffix


def calibration_entries(bins: int, strategy: str) -> list[dict[str, object]]:
    return [{"metric": m, "bins": bins, "strategy": strategy} for m in ("ece", "mce")]


@pytest.mark.parametrize("strategy", ["uniform", "quantile"])
@pytest.mark.parametrize("bins", [1, 2, 5, 10, 15])
def test_calibration_matches_scikit_learn_calibration_curve(bins: int, strategy: str) -> None:
    rng = np.random.default_rng(bins)
    for n, decimals in ((400, 2), (300, 1), (250, 12)):  # ties on a grid (many on edges)
        s = np.round(rng.uniform(size=n) ** 1.5, decimals)
        y = (rng.uniform(size=n) < s ** 0.8).astype(int)
        got = ours(y.tolist(), s.tolist(), None, calibration_entries(bins, strategy))
        want = sk_calibration(y, s, bins, strategy)
        ece, mce = calibration_ids(bins, strategy)
        assert got[ece] == pytest.approx(want[0], rel=1e-12, abs=1e-15)
        assert got[mce] == pytest.approx(want[1], rel=1e-12, abs=1e-15)


@SETTINGS
@given(binary_data(), st.sampled_from([1, 2, 3, 10]), st.sampled_from(["uniform", "quantile"]))
def test_calibration_matches_the_references(data: tuple[Arr, Arr, Arr | None], bins: int,
                                            strategy: str) -> None:
    y, s, w = data
    assume(w is None or w.sum() > 0)
    got = ours(y.tolist(), s.tolist(), None if w is None else w.tolist(),
               calibration_entries(bins, strategy))
    ece, mce = calibration_ids(bins, strategy)
    hand = hand_calibration(y, s, np.ones(len(y)) if w is None else w, bins, strategy)
    assert got[ece] == pytest.approx(hand[0], rel=1e-9, abs=1e-12)
    assert got[mce] == pytest.approx(hand[1], rel=1e-9, abs=1e-12)
    if w is None:
        assert hand == pytest.approx(sk_calibration(y, s, bins, strategy), rel=1e-9, abs=1e-12)
    elif np.all(w == np.round(w)):  # integer weights: scikit-learn on the repeated rows
        reps = w.astype(int)
        assert hand == pytest.approx(sk_calibration(np.repeat(y, reps), np.repeat(s, reps), bins,
                                                    strategy), rel=1e-9, abs=1e-12)


def test_calibration_edge_convention_is_scikit_learns() -> None:
    # bins=10: 0.1 is in the first bin [0, 0.1] with 0; 1.0 in the last (0.9, 1]; 0.35 alone
    y, s = [1, 0, 1, 0, 1], [0.0, 0.1, 1.0, 0.35, 0.95]
    got = run(frame(y, s), "binary", ["ece", "mce"])
    by = {m.metric: m for m in got.metrics}
    # [0, 0.1]: mean 0.05, rate 0.5; (0.3, 0.4]: 0.35 vs 0; (0.9, 1]: 0.975 vs 1
    assert by["ece"].value == pytest.approx((2 * 0.45 + 0.35 + 2 * 0.025) / 5, rel=1e-12)
    assert by["ece"].details == {"bins_used": 3}
    assert by["mce"].value == pytest.approx(0.45, rel=1e-12)
    assert by["mce"].details == {"bins_used": 3, "bin": 0, "mean_score": 0.05,
                                 "positive_rate": 0.5, "weight": 2.0}
    assert by["ece"].value == pytest.approx(sk_calibration(np.array(y), np.array(s), 10,
                                                           "uniform")[0], rel=1e-12)


def test_quantile_bins_never_split_tied_scores() -> None:
    # six rows at 0.5 among ten: an edge at 0.5 puts all six in one bin (never 3 and 3)
    y = [0, 1, 0, 1, 1, 0, 1, 1, 0, 1]
    s = [0.1, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.9, 0.2, 0.8]
    got = run(frame(y, s), "binary", [{"metric": "ece", "bins": 2, "strategy": "quantile"}])
    (m,) = got.metrics
    assert m.details == {"bins_used": 2}
    # [0.1, 0.5]: eight rows, mean score 0.3375 + ..., both ends as scikit-learn's
    want = sk_calibration(np.array(y), np.array(s), 2, "quantile")[0]
    assert m.value == pytest.approx(want, rel=1e-12)
    low = np.array(s) <= 0.5
    gap = abs(np.mean(np.array(y)[low]) - np.mean(np.array(s)[low])) * low.sum() + \
        abs(np.mean(np.array(y)[~low]) - np.mean(np.array(s)[~low])) * (~low).sum()
    assert m.value == pytest.approx(gap / 10, rel=1e-12)


def test_calibration_weighted_quantile_definition_by_hand() -> None:
    # W = 6 (weights 3, 1, 1, 1 on 0.1, 0.2, 0.4, 0.8): the median edge at position 2.5, between
    # the rows at positions 2 (0.1, the third copy) and 3 (0.2): 0.15
    y, s, w = [0, 1, 0, 1], [0.1, 0.2, 0.4, 0.8], [3.0, 1.0, 1.0, 1.0]
    got = ours(y, s, w, calibration_entries(2, "quantile"))
    # [0, 0.15]: 0.1 (rate 0); (0.15, 1]: 0.2, 0.4, 0.8 (mean 0.4667, rate 2/3)
    ece = (3 * 0.1 + abs(2 - 1.4)) / 6
    assert got["ece[bins=2,strategy=quantile]"] == pytest.approx(ece, rel=1e-12)
    assert got["mce[bins=2,strategy=quantile]"] == pytest.approx(0.6 / 3, rel=1e-12)
    # fractional weights: the same definition, written out in hand_calibration
    w2 = [0.3, 0.25, 1.5, 0.7]
    got = ours(y, s, w2, calibration_entries(2, "quantile"))
    want = hand_calibration(np.array(y), np.array(s), np.array(w2), 2, "quantile")
    assert got["ece[bins=2,strategy=quantile]"] == pytest.approx(want[0], rel=1e-12)


def test_calibration_per_segment() -> None:
    rng = np.random.default_rng(11)
    n = 600
    s = np.round(rng.uniform(size=n), 2)
    y = (rng.uniform(size=n) < s ** 1.4).astype(int)
    w = rng.choice([0.0, 0.5, 1.0, 3.0], n)
    g = rng.choice(["a", "b", "c"], n)
    df = frame(y.tolist(), s.tolist(), w.tolist()).with_columns(pl.Series("g", g))
    for strategy in ("uniform", "quantile"):
        r = run(df, "binary", calibration_entries(7, strategy), columns={"weight": "w"},
                group_by=["g"])
        assert len(r.segments) == 3
        for seg in r.segments:
            keep = g == seg.key["g"]
            want = hand_calibration(y[keep], s[keep], w[keep], 7, strategy)
            assert seg.metrics[0].value == pytest.approx(want[0], rel=1e-12)
            assert seg.metrics[1].value == pytest.approx(want[1], rel=1e-12)


def test_calibration_undefined_cases_and_parameters() -> None:
    got = ours([1, 0], [0.3, 0.9], [0.0, 0.0], ["ece", "mce"])
    assert got == {"ece": None, "mce": None}
    one = ours([1, 1, 1], [0.2, 0.9, 0.9], None, ["ece"])  # one class: defined
    assert one["ece"] == pytest.approx((0.8 + 2 * 0.1) / 3, rel=1e-12)
    for bad, msg in (("ece[bins=0]", "must be >= 1"), ("mce[strategy=equal]", "one of"),
                     ("ece[bins=2.5]", "bins")):
        with pytest.raises(MetricError, match=msg):
            run(frame([0, 1], [0.2, 0.4]), "binary", [bad])
    with pytest.raises(InputDataError, match="ece and mce need probabilities"):
        run(frame([0, 1], [0.2, 1.4]), "binary", ["mce"])


def test_calibration_metadata() -> None:
    from evalcli.metrics.registry import get_registry

    for name in ("ece", "mce"):
        m = get_registry().get("binary", name)
        assert m.direction == "lower" and not m.in_default_set and m.range == (0.0, 1.0)
    assert get_registry().get("binary", "expected_calibration_error").name == "ece"
    assert get_registry().get("binary", "maximum_calibration_error").name == "mce"


# --------------------------------------------------------------------------- gain and lift table

def reference_gain(y: Arr, s: Arr, w: Arr | None, groups: int) -> dict[str, Arr]:
    """Cumulative gain and lift at the cuts j/groups of the weight: the cumulative positives
    against the cumulative weight of scikit-learn's ROC points, interpolated linearly inside
    the tied block that straddles a cut (the expectation over the orders of tied rows)."""
    fpr, tpr, _ = skm.roc_curve(y, s, sample_weight=w, drop_intermediate=False)
    ww = np.ones(len(y)) if w is None else w
    p, n = ww[y == 1].sum(), ww[y == 0].sum()
    tps, fps = tpr * p, fpr * n
    fraction = np.arange(1, groups + 1) / groups
    hits = np.interp(fraction * (p + n), tps + fps, tps)
    gain = hits / p
    rate = np.diff(hits, prepend=0.0) / ((p + n) / groups)
    return {"fraction": fraction, "positives": hits, "gain": gain, "lift": gain / fraction,
            "group_rate": rate, "group_lift": rate / (p / (p + n))}


def scikit_plot_gain(y: Arr, s: Arr, groups: int) -> Arr:
    """scikit-plot's cumulative_gain_curve (distinct scores, unweighted), read at the group
    cuts: the positives among the first n·j/groups rows sorted by score, over all positives."""
    order = np.argsort(-s, kind="stable")
    gains = np.cumsum(y[order]) / y.sum()
    return gains[np.arange(1, groups + 1) * len(y) // groups - 1]


@SETTINGS
@given(binary_data(), st.sampled_from([1, 2, 3, 4, 10]))
def test_lift_table_matches_the_interpolated_roc_counts(data: tuple[Arr, Arr, Arr | None],
                                                        groups: int) -> None:
    y, s, w = data
    ww = np.ones(len(y)) if w is None else w
    assume(ww[y == 1].sum() > 0 and ww[y == 0].sum() > 0)  # roc_curve needs both classes
    r = run(frame(y.tolist(), s.tolist(), None if w is None else w.tolist()), "binary",
            [{"metric": "lift_table", "groups": groups},
             {"metric": "lift_at_top", "fraction": 1 / groups}],
            **({} if w is None else {"columns": {"weight": "w"}}))
    table, top = r.metrics
    rows = pl.DataFrame(table.details["groups"])
    want = reference_gain(y, s, w, groups)
    for col, ref in want.items():
        assert rows[col].to_numpy() == pytest.approx(ref, rel=1e-9, abs=1e-12), col
    assert rows["group"].to_list() == list(range(1, groups + 1))
    assert rows["gain"][-1] == 1.0 and rows["lift"][-1] == 1.0
    assert table.value == top.value  # the same cut, the same bits
    assert table.details["base_rate"] == pytest.approx(ww[y == 1].sum() / ww.sum(), rel=1e-12)


def test_lift_table_is_scikit_plots_gain_without_ties() -> None:
    rng = np.random.default_rng(5)
    for n, groups in ((200, 10), (300, 20), (90, 3)):
        y, s = rng.integers(0, 2, n), rng.permutation(n) / n  # distinct scores
        m = run(frame(y.tolist(), s.tolist()), "binary",
                [{"metric": "lift_table", "groups": groups}]).metrics[0]
        gain = np.array([g["gain"] for g in m.details["groups"]])
        assert gain == pytest.approx(scikit_plot_gain(y, s, groups), rel=1e-12)
        assert m.value == pytest.approx(gain[0] * groups, rel=1e-12)


def test_lift_table_ties_and_weights_by_hand() -> None:
    # W = 8 (weights 2, 1, 1, 1, 1, 2): top half = 4: 0.9 (w 2, +), then 2 of the 3 tied at 0.6
    # (w 1 each: +, -, +): 2/3 of their 2 positives
    y, s, w = [1, 1, 0, 1, 0, 0], [0.9, 0.6, 0.6, 0.6, 0.3, 0.1], [2, 1, 1, 1, 1, 2]
    m = run(frame(y, s, w), "binary", ["lift_table[groups=2]"],
            columns={"weight": "w"}).metrics[0]
    first, last = m.details["groups"]
    assert first["positives"] == pytest.approx(2 + 2 * 2 / 3, rel=1e-12)
    assert first["gain"] == pytest.approx((2 + 4 / 3) / 4, rel=1e-12)
    assert first["threshold"] == 0.6 and last["threshold"] == 0.1
    assert m.value == pytest.approx(first["gain"] / 0.5, rel=1e-12)
    # integer weights equal repeated rows
    reps = run(frame(np.repeat(y, w).tolist(), np.repeat(s, w).tolist()), "binary",
               ["lift_table[groups=2]"]).metrics[0]
    assert reps.value == pytest.approx(m.value, rel=1e-12)


def test_lift_table_undefined_cases_and_parameters() -> None:
    got = run(frame([0, 0, 0], [0.2, 0.4, 0.9]), "binary", ["lift_table"]).metrics[0]
    assert got.value is None and got.notes == ["undefined: no positive labels"]
    assert ours([1, 0], [0.3, 0.9], [0.0, 0.0], ["lift_table"]) == {"lift_table": None}
    for bad, msg in (("lift_table[groups=0]", "must be >= 1"),
                     ("lift_table[groups=1001]", "must be <= 1000"),
                     ("lift_table[groups=2.5]", "groups")):
        with pytest.raises(MetricError, match=msg):
            run(frame([0, 1], [0.2, 0.4]), "binary", [bad])
    from evalcli.metrics.registry import get_registry

    m = get_registry().get("binary", "lift_table")
    assert m.direction == "higher" and not m.in_default_set


def test_lift_table_per_segment() -> None:
    rng = np.random.default_rng(13)
    n = 400
    y = rng.integers(0, 2, n)
    s = np.round(np.clip(0.4 * y + rng.normal(0.3, 0.2, n), 0, 1), 1)  # ties
    w = rng.choice([0.0, 0.5, 1.0, 3.0], n)
    g = rng.choice(["a", "b"], n)
    df = frame(y.tolist(), s.tolist(), w.tolist()).with_columns(pl.Series("g", g))
    r = run(df, "binary", ["lift_table[groups=5]"], columns={"weight": "w"}, group_by=["g"])
    for seg in r.segments:
        keep = g == seg.key["g"]
        want = reference_gain(y[keep], s[keep], w[keep], 5)
        got = pl.DataFrame(seg.metrics[0].details["groups"])
        assert got["lift"].to_numpy() == pytest.approx(want["lift"], rel=1e-9)


def _curves_run(df: pl.DataFrame, metrics: list[object],
                **config: object) -> dict[str, pl.DataFrame]:
    from evalcli.config import parse_config
    from evalcli.runner import run_config
    from tests._pipeline import _TMP, write

    cfg = {"task": "binary", "predictions": write(df, "parquet"), "metrics": metrics, **config}
    return run_config(parse_config(cfg, "test", _TMP), curves=True).curves


def test_curves_hold_the_reliability_bins_as_scikit_learns_calibration_curve() -> None:
    from sklearn.calibration import calibration_curve

    rng = np.random.default_rng(17)
    s = np.round(rng.uniform(size=500) ** 1.5, 2)
    y = (rng.uniform(size=500) < s ** 0.8).astype(int)
    curves = _curves_run(frame(y.tolist(), s.tolist()), [
        "ece", {"metric": "mce", "bins": 5, "strategy": "quantile"}, "mce"])
    rel = curves["reliability"]
    assert rel.columns == ["bins", "strategy", "bin", "mean_score", "fraction_positive",
                           "weight"]
    for bins, strategy in ((10, "uniform"), (5, "quantile")):  # one block per binning
        block = rel.filter((pl.col("bins") == bins) & (pl.col("strategy") == strategy))
        prob_true, prob_pred = calibration_curve(y, s, n_bins=bins, strategy=strategy)
        assert block["fraction_positive"].to_numpy() == pytest.approx(prob_true, rel=1e-12)
        assert block["mean_score"].to_numpy() == pytest.approx(prob_pred, rel=1e-12)
        assert block["weight"].sum() == 500
    assert rel.height == rel.unique(["bins", "strategy", "bin"]).height
    assert "gain" not in curves
    assert "reliability" not in _curves_run(frame(y.tolist(), s.tolist()), ["auroc"])


def test_curves_hold_the_gain_table_of_each_lift_table() -> None:
    rng = np.random.default_rng(19)
    y = rng.integers(0, 2, 300)
    s = np.round(np.clip(0.4 * y + rng.normal(0.3, 0.2, 300), 0, 1), 2)
    w = rng.choice([0.5, 1.0, 2.0], 300)
    df = frame(y.tolist(), s.tolist(), w.tolist())
    curves = _curves_run(df, ["lift_table", "lift_table[groups=4]"], columns={"weight": "w"})
    gain = curves["gain"]
    assert gain.columns == ["groups", "group", "fraction", "threshold", "weight", "positives",
                            "gain", "lift", "group_rate", "group_lift"]
    for groups in (10, 4):
        block = gain.filter(pl.col("groups") == groups)
        assert block["gain"].to_numpy() == pytest.approx(
            reference_gain(y, s, w, groups)["gain"], rel=1e-9)
    # lift_at_top alone: deciles
    alone = _curves_run(df, ["lift_at_top@0.05"], columns={"weight": "w"})["gain"]
    assert alone["groups"].unique().to_list() == [10]
    assert "gain" not in _curves_run(df, ["auroc"], columns={"weight": "w"})
