"""Multilabel metrics: Spark MLlib's worked example, scikit-learn on indicator matrices, and the
three input layouts giving one report. Everything runs through ``run_config`` on files.
"""

from __future__ import annotations

import json
import math
import warnings
from typing import Any

import numpy as np
import polars as pl
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from sklearn import metrics as skm
from sklearn.preprocessing import MultiLabelBinarizer

from evalcli.result import to_dict
from evalcli.runner import run_path
from tests._multiclass_multilabel import by_id, run, values
from tests.conftest import CONFIGS

SETTINGS = settings(max_examples=30, deadline=None,
                    suppress_health_check=[HealthCheck.too_slow])
LS = pl.List(pl.String)


def close(ours: float | None, ref: float) -> bool:
    if isinstance(ref, float) and math.isnan(ref):
        return ours is None
    return ours is not None and ours == pytest.approx(ref, rel=1e-9, abs=1e-12)


def quiet(fn: Any, *args: Any, **kwargs: Any) -> Any:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return fn(*args, **kwargs)


def same(a: Any, b: Any) -> bool:
    """Reports equal in every key, label and count; floats equal up to summation order."""
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, int | float) and isinstance(b, int | float) and \
            a == pytest.approx(b, rel=1e-12, abs=1e-15)
    if isinstance(a, dict):
        return isinstance(b, dict) and a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return isinstance(b, list) and len(a) == len(b) and all(map(same, a, b))
    return bool(a == b)


# --------------------------------------------------------------------------- layouts

def list_frame(pred: list[list[Any]], true: list[list[Any]],
               w: list[float] | None = None) -> pl.DataFrame:
    cols: dict[str, Any] = {"id": list(range(len(pred))),
                            "prediction": [[str(x) for x in s] for s in pred],
                            "label": [[str(x) for x in s] for s in true]}
    if w is not None:
        cols["w"] = w
    return pl.DataFrame(cols, schema_overrides={"prediction": LS, "label": LS})


def run_layout(layout: str, pred: list[list[Any]], true: list[list[Any]], metrics: list[Any],
               w: list[float] | None = None, **config: Any) -> Any:
    """The same sets as list columns (Parquet), delimited text (one CSV) or long rows (two
    CSV files, an empty set as one row with an empty label)."""
    df = list_frame(pred, true, w)
    extra = {"columns": {"weight": "w"}} if w is not None else {}
    if layout == "list":
        return run("multilabel", df, metrics, **extra, **config)
    if layout == "delimited":
        flat = df.with_columns(pl.col("prediction", "label").list.join("|"))
        return run("multilabel", flat, metrics, fmt="csv", **extra, **config)
    sides = {}
    for col in ("prediction", "label"):
        keep = ["id", col, *(["w"] if w is not None and col == "label" else [])]
        sides[col] = df.select(keep).with_columns(
            pl.when(pl.col(col).list.len() > 0).then(pl.col(col))
            .otherwise(pl.lit([None], dtype=LS))).explode(col)
    return run("multilabel", sides["prediction"], metrics, truth=sides["label"], fmt="csv",
               options={"layout": "long"}, **extra, **config)


# --------------------------------------------------------------------------- Spark MLlib's example

SPARK_DOCS = [  # (predictions, labels) of the seven documents in Spark MLlib's guide
    ([0, 1], [0, 2]), ([0, 2], [0, 1]), ([], [0]), ([2], [2]), ([2, 0], [2, 0]),
    ([0, 1, 2], [0, 1]), ([1], [1, 2]),
]
SPARK_CONFIGS = ["multilabel-spark-docs.yaml", "multilabel-spark-docs-delimited.yaml",
                 "multilabel-spark-docs-long.yaml"]


def spark_expected() -> dict[str, float]:
    """The values of Spark's definitions on the example, worked by hand per document."""
    out = {
        "precision": (1 / 2 + 1 / 2 + 0 + 1 + 2 / 2 + 2 / 3 + 1) / 7,
        "recall": (1 / 2 + 1 / 2 + 0 + 1 + 2 / 2 + 2 / 2 + 1 / 2) / 7,
        "f1": 2 * (1 / 4 + 1 / 4 + 0 + 1 / 2 + 2 / 4 + 2 / 5 + 1 / 3) / 7,
        "accuracy": (1 / 3 + 1 / 3 + 0 + 1 + 1 + 2 / 3 + 1 / 2) / 7,
        "subset_accuracy": 2 / 7,
        "hamming_loss": (2 + 2 + 1 + 0 + 0 + 1 + 1) / (7 * 3),
        "precision[average=micro]": 8 / 11,
        "recall[average=micro]": 8 / 12,
        "f1[average=micro]": 2 * 8 / (2 * 8 + 4 + 3),
    }
    p = [4 / 4, 2 / 3, 2 / 4]  # precision by label: tp / predicted
    r = [4 / 5, 2 / 3, 2 / 4]  # recall by label: tp / true
    for c in range(3):
        out[f"precision[label={c}]"] = p[c]
        out[f"recall[label={c}]"] = r[c]
        out[f"f1[label={c}]"] = 2 * p[c] * r[c] / (p[c] + r[c])
    return out


@pytest.mark.parametrize("config", SPARK_CONFIGS)
def test_spark_worked_example_gives_the_documented_values(config: str) -> None:
    got = values(run_path(CONFIGS / config))
    expected = spark_expected()
    assert set(got) == set(expected)
    for mid, v in expected.items():
        assert got[mid] == pytest.approx(v, rel=1e-12), mid


def test_spark_example_three_layouts_give_identical_reports() -> None:
    reports = [to_dict(run_path(CONFIGS / c))["metrics"] for c in SPARK_CONFIGS]
    assert same(reports[0], reports[1]) and same(reports[0], reports[2])
    pred, true = [p for p, _ in SPARK_DOCS], [t for _, t in SPARK_DOCS]
    ms = ["precision[average=macro]", "f1[average=weighted]", "accuracy[average=macro]"]
    built = [to_dict(run_layout(lay, pred, true, ms))["metrics"]
             for lay in ("list", "delimited", "long")]
    assert same(built[0], built[1]) and same(built[0], built[2])
    assert [d["label"] for d in built[0][0]["details"]["by_label"]] == ["0", "1", "2"]


def long_sides(pred: list[list[Any]], true: list[list[Any]]) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Long rows as Spark's example has them: an empty set has no row at all."""
    def rows(sets: list[list[Any]], col: str) -> pl.DataFrame:
        return pl.DataFrame({"id": [i for i, s in enumerate(sets) for _ in s],
                             col: [str(x) for s in sets for x in s]})
    return rows(pred, "prediction"), rows(true, "label")


@pytest.mark.parametrize("layout", ["long", "auto"])
def test_long_layout_truth_id_without_prediction_rows_is_an_empty_predicted_set(
        layout: str) -> None:
    pred, true = long_sides([p for p, _ in SPARK_DOCS], [t for _, t in SPARK_DOCS])
    assert 2 not in pred["id"].to_list()  # doc 2: no predicted label, no row
    expected = spark_expected()
    result = run("multilabel", pred, list(expected), truth=true, fmt="csv",
                 options={"layout": layout})
    got = values(result)
    for mid, v in expected.items():
        assert got[mid] == pytest.approx(v, rel=1e-12), mid
    a = result.alignment
    assert (a.matched, a.only_in_truth, a.only_in_predictions) == (6, 1, 0)
    assert a.extra == {"empty_predicted_sets": 1} and a.evaluated == 7
    assert to_dict(result)["alignment"]["empty_predicted_sets"] == 1
    from evalcli.report import alignment_facts
    assert any("empty predicted sets: 1" in f for f in alignment_facts(result))


def test_absent_as_empty_off_or_list_layout_reports_the_id_only_in_truth() -> None:
    from evalcli.errors import InputDataError

    pred, true = long_sides([p for p, _ in SPARK_DOCS], [t for _, t in SPARK_DOCS])
    with pytest.raises(InputDataError, match=r"1 row\(s\) only in .*id=2"):
        run("multilabel", pred, ["f1"], truth=true, fmt="csv",
            options={"layout": "long", "absent_as_empty": False})
    df = list_frame([p for p, _ in SPARK_DOCS], [t for _, t in SPARK_DOCS])
    with pytest.raises(InputDataError, match="only in"):  # a list can say [], a missing row is
        run("multilabel", df.filter(pl.col("id") != 3).select("id", "prediction"), ["f1"],
            truth=df.select("id", "label"), options={"layout": "list"})


def test_prediction_id_without_truth_rows_stays_unmatched() -> None:
    from evalcli.errors import InputDataError

    docs = [*SPARK_DOCS, ([1], [])]  # doc 7: predictions only
    pred, true = long_sides([p for p, _ in docs], [t for _, t in docs])
    with pytest.raises(InputDataError, match=r"1 row\(s\) only in .*id=7"):
        run("multilabel", pred, ["f1"], truth=true, fmt="csv", options={"layout": "long"})
    result = run("multilabel", pred, list(spark_expected()), truth=true, fmt="csv",
                 options={"layout": "long"}, alignment={"unmatched": "drop"})
    a = result.alignment
    assert (a.matched, a.only_in_predictions, a.only_in_truth, a.evaluated) == (6, 1, 1, 7)
    got = values(result)
    for mid, v in spark_expected().items():
        assert got[mid] == pytest.approx(v, rel=1e-12), mid


# --------------------------------------------------------------------------- scikit-learn

@st.composite
def set_data(draw: Any) -> dict[str, Any]:
    n = draw(st.integers(1, 25))
    k = draw(st.integers(2, 5))
    names = draw(st.sampled_from([list(range(k)), [f"t{i}" for i in range(k)]]))
    sets = st.lists(st.sampled_from(names), max_size=k, unique=True)
    true = draw(st.lists(sets, min_size=n, max_size=n))
    pred = draw(st.lists(sets, min_size=n, max_size=n))
    w = draw(st.lists(st.sampled_from([0.0, 0.5, 1.0, 3.0]), min_size=n, max_size=n)) \
        if draw(st.booleans()) else None
    assume(w is None or sum(w) > 0)
    union = {str(x) for s in true + pred for x in s}
    assume(len(union) >= 2)  # scikit-learn reads one indicator column as a binary target
    layout = draw(st.sampled_from(["list", "delimited", "long"]))
    return {"true": true, "pred": pred, "w": w, "layout": layout}


AVERAGES = ("samples", "micro", "macro", "weighted")
SET_METRICS = [
    *[f"{m}[average={a}]" for m in ("precision", "recall", "f1", "accuracy") for a in AVERAGES
      if a != "samples"],
    "precision", "recall", "f1", "accuracy", "fbeta[beta=2]", "fbeta[average=macro,beta=0.5]",
    "precision[zero_division=1]", "recall[zero_division=1]", "f1[zero_division=1]",
    "accuracy[zero_division=1]", "recall[average=macro,zero_division=1]",
    "precision[zero_division=nan]", "recall[zero_division=nan]",
    "f1[average=weighted,zero_division=nan]",
    "subset_accuracy", "hamming_loss",
]


@SETTINGS
@given(set_data())
def test_set_metrics_match_scikit_learn_on_indicator_matrices(d: dict[str, Any]) -> None:
    true = [[str(x) for x in s] for s in d["true"]]
    pred = [[str(x) for x in s] for s in d["pred"]]
    w = d["w"]
    r = run_layout(d["layout"], d["pred"], d["true"], SET_METRICS, w)
    got = values(r)
    classes = sorted({x for s in true + pred for x in s})
    mlb = MultiLabelBinarizer(classes=classes)
    yt, yp = mlb.fit_transform(true), mlb.transform(pred)
    sw = np.array(w) if w is not None else None

    def ref(fn: Any, **kw: Any) -> float:
        return float(quiet(fn, yt, yp, sample_weight=sw, **kw))

    for a in AVERAGES:
        sfx = "" if a == "samples" else f"[average={a}]"
        assert close(got[f"precision{sfx}"], ref(skm.precision_score, average=a,
                                                 zero_division=0)), a
        assert close(got[f"recall{sfx}"], ref(skm.recall_score, average=a, zero_division=0)), a
        assert close(got[f"f1{sfx}"], ref(skm.f1_score, average=a, zero_division=0)), a
        assert close(got[f"accuracy{sfx}"], ref(skm.jaccard_score, average=a,
                                                zero_division=0)), a
    assert close(got["fbeta[beta=2]"], ref(skm.fbeta_score, beta=2, average="samples",
                                           zero_division=0))
    assert close(got["fbeta[average=macro,beta=0.5]"],
                 ref(skm.fbeta_score, beta=0.5, average="macro", zero_division=0))
    for m, fn in (("precision", skm.precision_score), ("recall", skm.recall_score),
                  ("f1", skm.f1_score), ("accuracy", skm.jaccard_score)):
        assert close(got[f"{m}[zero_division=1]"], ref(fn, average="samples",
                                                        zero_division=1)), m
    assert close(got["recall[average=macro,zero_division=1]"],
                 ref(skm.recall_score, average="macro", zero_division=1))
    assert close(got["precision[zero_division=nan]"],
                 ref(skm.precision_score, average="samples", zero_division=np.nan))
    assert close(got["recall[zero_division=nan]"],
                 ref(skm.recall_score, average="samples", zero_division=np.nan))
    assert close(got["f1[average=weighted,zero_division=nan]"],
                 ref(skm.f1_score, average="weighted", zero_division=np.nan))
    assert close(got["subset_accuracy"], ref(skm.accuracy_score))
    assert close(got["hamming_loss"], ref(skm.hamming_loss))

    # per-label values (macro's details) match average=None
    by = by_id(r)["precision[average=macro]"].details["by_label"]
    assert sorted(x["label"] for x in by) == classes
    per = dict(zip(classes, quiet(skm.precision_score, yt, yp, average=None, sample_weight=sw,
                                  zero_division=0), strict=True))
    for x in by:
        assert close(x["value"], float(per[x["label"]]))


@settings(SETTINGS, max_examples=20)
@given(set_data())
def test_three_layouts_give_identical_reports(d: dict[str, Any]) -> None:
    ms = ["precision", "recall[average=micro]", "f1[average=macro]", "accuracy",
          "subset_accuracy", "hamming_loss"]
    seen = sorted({str(x) for rows in (d["true"], d["pred"]) for s in rows for x in s})
    if seen:  # a label the data has (one it lacks is an error: test_absent_label_...)
        ms.append(f"recall[label={seen[0]}]")
    reports = [to_dict(run_layout(lay, d["pred"], d["true"], ms, d["w"]))["metrics"]
               for lay in ("list", "delimited", "long")]
    assert same(reports[0], reports[1]) and same(reports[0], reports[2])


# --------------------------------------------------------------------------- conventions

def test_empty_sets_conventions() -> None:
    pred = [[], ["a"], [], ["b"]]
    true = [["a"], [], [], ["b"]]
    r = by_id(run_layout("list", pred, true, [
        "precision", "recall", "f1", "accuracy", "subset_accuracy",
        "precision[zero_division=nan]", "recall[zero_division=nan]", "f1[zero_division=1]"]))
    # example 0: |P| = 0; example 1: |L| = 0; example 2: both empty; example 3: perfect
    assert r["precision"].value == pytest.approx((0 + 0 + 0 + 1) / 4)
    assert "2 example(s) with an empty prediction set" in r["precision"].notes[0]
    assert r["recall"].value == pytest.approx((0 + 0 + 0 + 1) / 4)
    assert r["precision[zero_division=nan]"].value == pytest.approx((0 + 1) / 2)
    assert r["recall[zero_division=nan]"].value == pytest.approx((0 + 1) / 2)
    assert r["f1"].value == pytest.approx(1 / 4)
    assert r["f1[zero_division=1]"].value == pytest.approx(2 / 4)
    assert r["accuracy"].value == pytest.approx(1 / 4)
    assert r["subset_accuracy"].value == pytest.approx(2 / 4)  # two empty sets are equal


def test_every_set_empty() -> None:
    r = by_id(run_layout("list", [[], []], [[], []], [
        "precision", "f1[average=macro]", "subset_accuracy", "hamming_loss",
        "recall[average=micro]"]))
    assert r["subset_accuracy"].value == 1.0
    assert r["precision"].value == 0.0 and r["precision"].notes
    assert r["f1[average=macro]"].value is None
    assert r["hamming_loss"].value is None and "no labels" in r["hamming_loss"].notes[0]
    assert r["recall[average=micro]"].value == 0.0 and r["recall[average=micro]"].notes


def test_weighted_average_without_true_labels_is_the_plain_mean() -> None:
    # no example has a true label: every support is 0, so scikit-learn averages without weights
    pred, true = [["0", "1"], ["1"]], [[], []]
    yt, yp = np.zeros((2, 2), dtype=int), np.array([[1, 1], [0, 1]])
    r = by_id(run_layout("list", pred, true, [
        "f1[average=weighted,zero_division=nan]", "precision[average=weighted]"]))
    assert r["f1[average=weighted,zero_division=nan]"].value == pytest.approx(
        quiet(skm.f1_score, yt, yp, average="weighted", zero_division=np.nan))
    assert r["precision[average=weighted]"].value == pytest.approx(
        quiet(skm.precision_score, yt, yp, average="weighted", zero_division=0))
    assert "plain mean" in r["precision[average=weighted]"].notes[-1]


def test_single_label() -> None:
    got = values(run_layout("list", [["a"], []], [["a"], ["a"]], [
        "hamming_loss", "f1[average=macro]", "recall", "subset_accuracy"]))
    assert got["hamming_loss"] == pytest.approx(1 / 2)
    assert got["f1[average=macro]"] == pytest.approx(2 / 3)
    assert got["recall"] == pytest.approx(1 / 2)
    assert got["subset_accuracy"] == pytest.approx(1 / 2)


def test_hamming_label_space() -> None:
    # label c is only predicted: scikit-learn counts it in |L| (union), Spark does not (truth)
    pred, true = [["a", "c"], ["b"]], [["a"], ["a", "b"]]
    got = values(run_layout("list", pred, true, [
        "hamming_loss", "hamming_loss[label_space=truth]", "hamming_loss[n_labels=10]"]))
    assert got["hamming_loss"] == pytest.approx(2 / (2 * 3))
    assert got["hamming_loss[label_space=truth]"] == pytest.approx(2 / (2 * 2))
    assert got["hamming_loss[n_labels=10]"] == pytest.approx(2 / (2 * 10))


def test_long_layout_with_weights_and_segments() -> None:
    preds = pl.DataFrame({"id": [1, 1, 2, 3], "prediction": ["x", "y", "x", None]})
    truth = pl.DataFrame({"id": [1, 2, 2, 3], "label": ["x", "x", "y", "y"],
                          "w": [2.0, 1.0, 1.0, 0.5], "g": ["a", "b", "b", "b"]})
    r = run("multilabel", preds, ["recall", "precision[average=micro]"], truth=truth,
            fmt="csv", columns={"weight": "w"}, group_by=["g"])
    got = values(r)
    # examples: 1 -> P {x,y}, L {x}, w 2; 2 -> P {x}, L {x,y}, w 1; 3 -> P {}, L {y}, w 0.5
    assert got["recall"] == pytest.approx((2 * 1 + 1 * 0.5 + 0.5 * 0) / 3.5)
    assert got["precision[average=micro]"] == pytest.approx((2 * 1 + 1 * 1) / (2 * 2 + 1 * 1))
    seg = {s.key["g"]: {m.id: m.value for m in s.metrics} for s in r.segments}
    assert seg["a"]["recall"] == 1.0
    assert seg["b"]["recall"] == pytest.approx((1 * 0.5 + 0) / 1.5)


def test_custom_delimiter_and_whitespace() -> None:
    df = pl.DataFrame({"prediction": ["a; b", "", "c"], "label": ["b;a", "c", " c "]})
    got = values(run("multilabel", df, ["subset_accuracy"], fmt="csv",
                     options={"delimiter": ";"}))
    assert got["subset_accuracy"] == pytest.approx(2 / 3)


def test_auto_layout_reads_long_files_with_integer_labels() -> None:
    preds = pl.DataFrame({"id": [1, 1, 2], "prediction": [3, 4, 3]})
    truth = pl.DataFrame({"id": [1, 2, 2], "label": [3, 3, 4]})
    got = values(run("multilabel", preds, ["recall[average=micro]"], truth=truth))
    assert got["recall[average=micro]"] == pytest.approx(2 / 3)


def test_default_metric_set() -> None:
    ids = [m.id for m in run_layout("list", [["a"]], [["a", "b"]], []).metrics]
    assert ids == ["precision", "recall", "f1", "accuracy", "subset_accuracy", "hamming_loss"]


# --------------------------------------------------------------------------- bad input

def _config(tmp_path: Any, df: pl.DataFrame, fmt: str, **extra: Any) -> str:
    data = tmp_path / f"data.{fmt}"
    df.write_csv(data) if fmt == "csv" else df.write_parquet(data)
    path = tmp_path / "c.yaml"
    path.write_text(json.dumps({"task": "multilabel", "predictions": str(data), **extra}))
    return str(path)


@pytest.mark.parametrize(("df", "fmt", "extra", "needle"), [
    pytest.param(pl.DataFrame({"label": ["a"], "prediction": ["a"]}), "csv",
                 {"options": {"layout": "long"}}, "two files", id="long-needs-two-files"),
    pytest.param(pl.DataFrame({"label": ["a|b"], "prediction": ["a"]}), "csv",
                 {"options": {"layout": "list"}}, "layout: delimited", id="list-needs-lists"),
    pytest.param(pl.DataFrame({"label": [[1]], "prediction": [[1]]}), "parquet",
                 {"options": {"layout": "delimited"}}, "not text", id="delimited-needs-text"),
    pytest.param(pl.DataFrame({"label": [[0.5]], "prediction": [[1.0]]}), "parquet",
                 {}, "not whole", id="fractional-labels"),
    pytest.param(pl.DataFrame({"label": [["a"]], "prediction": [["a"]]}), "parquet",
                 {"options": {"layout": "rows"}}, "one of", id="unknown-layout"),
])
def test_bad_input_exits_2_with_one_message(cli: Any, tmp_path: Any, df: pl.DataFrame,
                                            fmt: str, extra: dict[str, Any],
                                            needle: str) -> None:
    r = cli("run", _config(tmp_path, df, fmt, **extra))
    assert r.exit_code == 2, r.stdout + r.stderr
    assert needle in r.stderr
    assert "Traceback" not in r.stderr


# --------------------------------------------------------------------------- CLI and configs

def test_quickstart_list_and_csv_agree(cli: Any, tmp_path: Any) -> None:
    r = cli("run", str(CONFIGS / "multilabel-quickstart.yaml"), "--format", "json")
    assert r.exit_code == 0, r.stderr
    parquet = json.loads(r.stdout)["metrics"]
    r = cli("run", str(CONFIGS / "multilabel-quickstart.yaml"), "--format", "json",
            "--predictions", str(CONFIGS.parent / "sample_data/multilabel_predictions.csv"),
            "--truth", str(CONFIGS.parent / "sample_data/multilabel_truth.csv"))
    assert r.exit_code == 0, r.stderr
    assert same(json.loads(r.stdout)["metrics"], parquet)
    macro = {m["id"]: m for m in parquet}["f1[average=macro]"]
    assert len(macro["details"]["by_label"]) == 6


def test_metrics_show_states_the_empty_set_conventions(cli: Any) -> None:
    r = cli("metrics", "show", "recall", "--family", "multilabel")
    assert r.exit_code == 0, r.stderr
    assert "|L_i|" in r.stdout and "Spark MLlib" in r.stdout and "empty label set" in r.stdout
    r = cli("metrics", "show", "hamming_loss")
    assert r.exit_code == 0 and "label_space" in r.stdout and "multilabel" in r.stdout


@pytest.mark.parametrize("ext", ["parquet", "csv"])
def test_compare_infers_multilabel_from_lists_and_delimited_text(cli: Any, ext: str) -> None:
    data = CONFIGS.parent / "sample_data"
    r = cli("compare", str(data / f"multilabel_predictions.{ext}"),
            str(data / f"multilabel_truth.{ext}"), "--format", "json")
    assert r.exit_code == 0, r.stderr
    report = json.loads(r.stdout)
    assert report["task"] == "multilabel"
    assert {m["id"] for m in report["metrics"]} >= {"precision", "hamming_loss"}


@pytest.mark.parametrize("layout", ["list", "delimited", "long"])
def test_streaming_engine_gives_the_same_values(layout: str) -> None:
    pred, true = [p for p, _ in SPARK_DOCS], [t for _, t in SPARK_DOCS]
    ms = ["precision", "f1[average=macro]", "hamming_loss", "subset_accuracy"]
    assert values(run_layout(layout, pred, true, ms, engine="streaming")) == pytest.approx(
        values(run_layout(layout, pred, true, ms, engine="polars")))
