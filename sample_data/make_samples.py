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


def regression() -> None:
    X, y = load_diabetes(return_X_y=True)
    Xtr, Xte, ytr, yte = train_test_split(X, y, test_size=0.3, random_state=SEED)
    model = Ridge(alpha=0.5).fit(Xtr, ytr)
    pred = model.predict(Xte)
    sex = np.where(Xte[:, 1] > 0, "a", "b")
    df = pl.DataFrame({"id": np.arange(len(yte)), "label": yte, "prediction": np.round(pred, 3),
                       "sex": sex})
    write_all(df, "regression")


if __name__ == "__main__":
    binary()
    regression()
