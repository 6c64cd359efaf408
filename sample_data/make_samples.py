"""Regenerate the bundled sample data (needs the test extras: scikit-learn).

    python sample_data/make_samples.py

Binary: a logistic regression on scikit-learn's breast-cancer data (test split), predictions
and truth in separate files joined on ``id``, plus a ``size`` segment column.
Regression: a ridge regression on the diabetes data, one file holding both target and prediction.
Every dataset is written as CSV, Parquet and JSONL with identical content.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.linear_model import LogisticRegression, Ridge
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

HERE = Path(__file__).parent
SEED = 7


def write_all(df: pl.DataFrame, stem: str) -> None:
    df.write_csv(HERE / f"{stem}.csv")
    df.write_parquet(HERE / f"{stem}.parquet")
    df.write_ndjson(HERE / f"{stem}.jsonl")


def binary() -> None:
    X, y = load_breast_cancer(return_X_y=True)
    # label 1 = malignant (scikit-learn codes malignant as 0)
    y = 1 - y
    idx = np.arange(len(y))
    Xtr, Xte, ytr, yte, _, ite = train_test_split(X, y, idx, test_size=0.4, random_state=SEED,
                                                  stratify=y)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.05, max_iter=1000))
    model.fit(Xtr, ytr)
    p = model.predict_proba(Xte)[:, 1]
    ids = [f"case-{i:04d}" for i in ite]
    size = np.where(Xte[:, 3] > np.median(X[:, 3]), "large", "small")  # mean area
    preds = pl.DataFrame({"id": ids, "score": np.round(p, 6), "prediction": (p >= 0.5).astype(int)})
    truth = pl.DataFrame({"id": ids, "label": yte.astype(int), "size": size})
    order = np.random.default_rng(SEED).permutation(len(ids))  # truth in another order
    write_all(preds.sort("id"), "binary_predictions")
    write_all(truth[order.tolist()], "binary_truth")


def binary_candidate() -> None:
    """A second system on the same test split and truth (issue 13's paired comparison): a
    less regularized model, ``binary_predictions_candidate``."""
    X, y = load_breast_cancer(return_X_y=True)
    y = 1 - y
    idx = np.arange(len(y))
    Xtr, Xte, ytr, _yte, _, ite = train_test_split(X, y, idx, test_size=0.4,
                                                   random_state=SEED, stratify=y)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=1.0, max_iter=5000))
    model.fit(Xtr, ytr)
    p = model.predict_proba(Xte)[:, 1]
    ids = [f"case-{i:04d}" for i in ite]
    preds = pl.DataFrame({"id": ids, "score": np.round(p, 6), "prediction": (p >= 0.5).astype(int)})
    write_all(preds.sort("id"), "binary_predictions_candidate")


def regression() -> None:
    X, y = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=SEED)
    model = Ridge(alpha=0.5).fit(Xtr, ytr)
    pred = model.predict(Xte)
    sex = np.where(Xte[:, 1] > 0, "a", "b")
    df = pl.DataFrame({"id": np.arange(len(yte)), "label": yte, "prediction": np.round(pred, 3),
                       "sex": sex})
    write_all(df, "regression")


def multiclass() -> None:
    """Digits (10 classes): a regularised logistic regression's class and per-class
    probabilities, one column per class (p_0 .. p_9); truth in another file joined on id."""
    from sklearn.datasets import load_digits

    X, y = load_digits(return_X_y=True)
    idx = np.arange(len(y))
    Xtr, Xte, ytr, yte, _, ite = train_test_split(X, y, idx, test_size=0.3, random_state=SEED,
                                                  stratify=y)
    model = make_pipeline(StandardScaler(), LogisticRegression(C=0.003, max_iter=2000))
    model.fit(Xtr, ytr)
    proba = model.predict_proba(Xte)
    ids = [f"img-{i:04d}" for i in ite]
    preds = pl.DataFrame({"id": ids, "prediction": model.classes_[proba.argmax(axis=1)],
                          **{f"p_{c}": np.round(proba[:, j], 6)
                             for j, c in enumerate(model.classes_)}})
    ink = np.where(Xte.sum(axis=1) > np.median(X.sum(axis=1)), "heavy", "light")
    truth = pl.DataFrame({"id": ids, "label": yte.astype(int), "ink": ink})
    order = np.random.default_rng(SEED).permutation(len(ids))
    write_all(preds.sort("id"), "multiclass_predictions")
    write_all(truth[order.tolist()], "multiclass_truth")


TOPICS = ["finance", "health", "politics", "sports", "tech", "travel"]


def _multilabel_model() -> tuple[np.ndarray, np.ndarray]:
    """The topic-tagging test split's indicator matrix and the model's probabilities."""
    from sklearn.datasets import make_multilabel_classification
    from sklearn.multiclass import OneVsRestClassifier

    X, Y = make_multilabel_classification(n_samples=1000, n_features=20, n_classes=6,
                                          n_labels=2, allow_unlabeled=True, random_state=SEED)
    Xtr, Xte, Ytr, Yte = train_test_split(X, Y, test_size=0.4, random_state=SEED)
    model = OneVsRestClassifier(LogisticRegression(C=0.1, max_iter=2000)).fit(Xtr, Ytr)
    return Yte, model.predict_proba(Xte)


def multilabel_scores() -> None:
    """The topic tagger's predictions with its probability per topic, one column each
    (p_finance .. p_travel, rounded to 3 decimals: some ties), the predicted set delimited by
    '|'; the truth is multilabel_truth.*."""
    _, P = _multilabel_model()
    names = np.array(TOPICS)
    df = pl.DataFrame({"id": [f"doc-{i:04d}" for i in range(len(P))],
                       "prediction": ["|".join(names[row >= 0.5]) for row in P],
                       **{f"p_{t}": np.round(P[:, j], 3) for j, t in enumerate(TOPICS)}})
    write_all(df, "multilabel_scores")


def multilabel() -> None:
    """Synthetic topic tagging (scikit-learn's make_multilabel_classification, six named
    topics) with one-vs-rest logistic regressions; a topic is predicted when p >= 0.5.
    Parquet and JSONL hold list columns; CSV holds the same sets joined by '|'."""
    Yte, P = _multilabel_model()
    Yhat = P >= 0.5
    names = np.array(TOPICS)
    ids = [f"doc-{i:04d}" for i in range(len(Yte))]
    truth = [list(names[row.astype(bool)]) for row in Yte]
    pred = [list(names[row]) for row in Yhat]
    ls = pl.List(pl.String)
    preds = pl.DataFrame({"id": ids, "prediction": pred}, schema={"id": pl.String,
                                                                  "prediction": ls})
    truth_df = pl.DataFrame({"id": ids, "label": truth}, schema={"id": pl.String, "label": ls})
    for df, stem in ((preds, "multilabel_predictions"), (truth_df, "multilabel_truth")):
        df.write_parquet(HERE / f"{stem}.parquet")
        df.write_ndjson(HERE / f"{stem}.jsonl")
        col = df.columns[1]
        df.with_columns(pl.col(col).list.join("|")).write_csv(HERE / f"{stem}.csv")


SPARK_DOCS = [  # (predictions, labels): the worked example of Spark MLlib's evaluation guide
    ([0, 1], [0, 2]), ([0, 2], [0, 1]), ([], [0]), ([2], [2]), ([2, 0], [2, 0]),
    ([0, 1, 2], [0, 1]), ([1], [1, 2]),
]


def multilabel_spark_docs() -> None:
    """Spark MLlib's seven-document multilabel example in all three layouts: list columns
    (JSONL, Parquet), delimited text (CSV), and one row per (doc, label) in two CSV files."""
    li = pl.List(pl.Int64)
    df = pl.DataFrame({"doc": list(range(len(SPARK_DOCS))),
                       "prediction": [p for p, _ in SPARK_DOCS],
                       "label": [lab for _, lab in SPARK_DOCS]},
                      schema={"doc": pl.Int64, "prediction": li, "label": li})
    df.write_ndjson(HERE / "multilabel_spark_docs.jsonl")
    df.write_parquet(HERE / "multilabel_spark_docs.parquet")
    df.with_columns(pl.col("prediction", "label").cast(pl.List(pl.String)).list.join("|")) \
        .write_csv(HERE / "multilabel_spark_docs.csv")
    for col, stem in (("prediction", "predictions"), ("label", "truth")):
        # an empty set is one row with an empty label, so the document is still there
        long = df.select("doc", pl.when(pl.col(col).list.len() > 0).then(pl.col(col))
                         .otherwise(pl.lit([None], dtype=li)).alias(col)).explode(col)
        long.write_csv(HERE / f"multilabel_spark_docs_{stem}_long.csv")


if __name__ == "__main__":
    binary()
    binary_candidate()
    regression()
    multiclass()
    multilabel()
    multilabel_scores()
    multilabel_spark_docs()
