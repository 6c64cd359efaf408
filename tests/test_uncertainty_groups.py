"""Units to random groups, replicate weights: the hash against a pure-Python reference written
here from its definition (evalcli/uncertainty/groups.py's docstring), pinned values that a Polars
or NumPy upgrade must not move, the same groups across types, formats, engines, partitions and
processes, and the weights' distribution."""

from __future__ import annotations

import datetime as dt
import json
import os
import re
import subprocess
import sys

import numpy as np
import polars as pl
import pytest

from evalcli.uncertainty.groups import (
    CHUNK,
    SEED,
    TEXT,
    group_count,
    jackknife_sums,
    replicate_sums,
    replicate_weights,
    unit_group,
    unit_key,
)

MASK = (1 << 64) - 1


# --- the reference: the definition, in plain Python integers ---------------------------------

def ref_mix(x: int) -> int:
    z = (x + 0x9E3779B97F4A7C15) & MASK
    z = ((z ^ (z >> 30)) * 0xBF58476D1CE4E5B9) & MASK
    z = ((z ^ (z >> 27)) * 0x94D049BB133111EB) & MASK
    return z ^ (z >> 31)


def ref_key(text: str | bytes) -> int:
    if isinstance(text, str) and re.fullmatch(r"0|-?[1-9][0-9]*", text) and (
            -(2**63) <= int(text) < 2**63):
        return ref_mix(int(text) & MASK)
    data = text.encode() if isinstance(text, str) else text
    total = 0
    for k, start in enumerate(range(0, len(data), 8)):
        chunk = int.from_bytes(data[start:start + 8], "big")
        total = (total + ref_mix((chunk + ref_mix(k ^ CHUNK)) & MASK)) & MASK
    return ref_mix((ref_mix(len(data) ^ TEXT) + total) & MASK)


def ref_group(text: str | bytes, groups: int, seed: int) -> int:
    return ref_mix(ref_key(text) ^ ref_mix((seed & MASK) ^ SEED)) % groups


def test_the_reference_is_splitmix64():
    # SplitMix64 seeded with 0 (Steele, Lea & Flood 2014; Vigna's splitmix64.c): its first
    # outputs are mix(0), mix(golden), mix(2 golden)...
    golden = 0x9E3779B97F4A7C15
    outputs = [ref_mix((i * golden) & MASK) for i in range(3)]
    assert outputs == [0xE220A8397B1DCDAF, 0x6E789E6AA1B965F4, 0x06C45D188009454F]


TEXTS = [
    "", "a", "user-1", "query_000123", "42", "0", "-7", "042", "+7", "-0", "42.0", " 42",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808",
    "-9223372036854775809", "12345678", "123456789012345678901234567890",
    "exactly 8", "exactly 16 bytes", "thirty-two bytes of text, padded", "x" * 33, "y" * 100,
    "héllo wörld", "日本語のクエリ", "emoji 🙂 id", "\x00", "\x00\x00", "tab\tand\nnewline",
]


def test_text_keys_equal_the_reference():
    got = pl.DataFrame({"u": TEXTS}).select(unit_key(pl.col("u"), pl.String))["u"].to_list()
    assert got == [ref_key(t) for t in TEXTS]


@pytest.mark.parametrize("seed", [0, 1, 2**40 + 3, -1])
@pytest.mark.parametrize("groups", [1, 7, 1000])
def test_groups_equal_the_reference(seed, groups):
    got = pl.DataFrame({"u": TEXTS}).select(unit_group(pl.col("u"), pl.String, groups, seed))
    assert got["u"].to_list() == [ref_group(t, groups, seed) for t in TEXTS]
    assert got["u"].dtype == pl.UInt32


def test_pinned_values():
    """Fixed numbers: if a Polars or NumPy release changes integer wrapping, string slicing or
    PCG64's stream, stored baselines would silently regroup; this test says so first."""
    frame = pl.DataFrame({"u": ["q1", "user-1", "42", "日本"]})
    keys = frame.select(unit_key(pl.col("u"), pl.String))["u"].to_list()
    assert keys == [ref_key(t) for t in ["q1", "user-1", "42", "日本"]]
    assert keys == [1399916556842615356, 12450814784178761541, 13679457532755275413,
                    9836451578399508446]
    groups = frame.select(unit_group(pl.col("u"), pl.String, 1000, seed=0))["u"].to_list()
    assert groups == [575, 923, 721, 546]
    assert replicate_weights(4, 2, seed=0).tolist() == [[2, 1, 1, 0], [0, 0, 2, 2]]
    assert replicate_weights(4, 2, seed=0, scheme="poisson").tolist() == [
        [1, 0, 0, 0], [2, 2, 1, 1]]


def group_of(values: list[object], dtype: pl.DataType | type[pl.DataType], groups: int = 1000,
             seed: int = 5) -> list[int | None]:
    frame = pl.DataFrame({"u": pl.Series(values, dtype=dtype)})
    return frame.select(unit_group(pl.col("u"), frame.schema["u"], groups, seed))["u"].to_list()


@pytest.mark.parametrize("dtype", [pl.Int8, pl.Int16, pl.Int32, pl.Int64, pl.UInt8, pl.UInt16,
                                   pl.UInt32, pl.UInt64, pl.Float32, pl.Float64])
def test_a_number_is_the_unit_its_text_is(dtype):
    values = [0, 1, 7, 100, 127] if dtype != pl.Int8 else [0, 1, 7, 100, -128]
    assert group_of(values, dtype) == group_of([str(v) for v in values], pl.String)


def test_beyond_int64_and_fractions_are_text():
    big = [2**63, 2**64 - 1, 2**63 - 1]
    assert group_of(big, pl.UInt64) == group_of([str(v) for v in big], pl.String)
    assert group_of([0.5, -2.25, float("inf")], pl.Float64) == group_of(
        ["0.5", "-2.25", "inf"], pl.String)
    assert group_of([-0.0, 3.0], pl.Float64) == group_of(["0", "3"], pl.String)


def test_other_types_are_their_text():
    assert group_of([dt.date(2024, 1, 31)], pl.Date) == group_of(["2024-01-31"], pl.String)
    assert group_of([True, False], pl.Boolean) == group_of(["true", "false"], pl.String)
    assert group_of(["a", "b"], pl.Categorical) == group_of(["a", "b"], pl.String)
    assert group_of([b"abc", "é".encode()], pl.Binary) == group_of(["abc", "é"], pl.String)


def test_null_units_have_no_group():
    assert group_of([None, "a"], pl.String)[0] is None
    assert group_of([None, 3], pl.Int64)[0] is None
    frame = pl.DataFrame({"u": [None, None]})
    assert frame.select(unit_group(pl.col("u"), pl.Null, 10))["u"].to_list() == [None, None]


def test_the_same_ids_from_csv_and_json_land_in_the_same_groups(tmp_path):
    ids = [3, 17, 123456789, 42]
    (tmp_path / "a.csv").write_text("user\n" + "\n".join(map(str, ids)) + "\n")
    (tmp_path / "b.jsonl").write_text("".join(json.dumps({"user": str(i)}) + "\n" for i in ids))
    out, dtypes = [], []
    for path in (tmp_path / "a.csv", tmp_path / "b.jsonl"):
        lf = pl.scan_csv(path) if path.suffix == ".csv" else pl.scan_ndjson(path)
        dtypes.append(lf.collect_schema()["user"])
        out.append(lf.select(unit_group(pl.col("user"), dtypes[-1], 100, seed=3)).collect())
    assert dtypes == [pl.Int64, pl.String]
    assert out[0]["user"].to_list() == out[1]["user"].to_list()


def test_engines_and_partitions_agree():
    n = 20_000
    frame = pl.DataFrame({"q": [f"query-{i * 7919 % 100_003}" for i in range(n)],
                          "u": np.arange(n) * 31 - 5000})
    expr = [unit_group(pl.col("q"), pl.String, 1000, 9), unit_group(pl.col("u"), pl.Int64, 1000, 9)]
    whole = frame.select(expr)
    streaming = frame.lazy().select(expr).collect(engine="streaming")
    parts = pl.concat([part.select(expr) for part in frame.iter_slices(3_333)])
    assert whole.equals(streaming) and whole.equals(parts)


def test_another_process_finds_the_same_groups():
    code = ("import polars as pl, json\n"
            "from evalcli.uncertainty.groups import unit_group\n"
            f"f = pl.DataFrame({{'u': {TEXTS!r}}})\n"
            "groups = f.select(unit_group(pl.col('u'), pl.String, 97, 11))['u']\n"
            "print(json.dumps(groups.to_list()))")
    env = {**os.environ, "PYTHONHASHSEED": "12345", "POLARS_MAX_THREADS": "1"}
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env,
                          check=True)
    assert json.loads(proc.stdout) == [ref_group(t, 97, 11) for t in TEXTS]


def test_groups_are_balanced_and_the_seed_reshuffles_them():
    n, groups = 200_000, 200
    frame = pl.DataFrame({"u": [f"u{i}" for i in range(n)]})
    counts = (frame.select(unit_group(pl.col("u"), pl.String, groups, 0))["u"]
              .value_counts()["count"].to_numpy())
    expected = n / groups
    chi2 = float(((counts - expected) ** 2 / expected).sum())
    # chi-square on 199 df: mean 199, sd 20; 300 is 5 sd out
    assert counts.size == groups and chi2 < 300
    a = frame.select(unit_group(pl.col("u"), pl.String, groups, 0))["u"].to_numpy()
    b = frame.select(unit_group(pl.col("u"), pl.String, groups, 1))["u"].to_numpy()
    assert np.mean(a == b) < 0.02  # independent partitions agree on 1/200 of units


def test_group_count():
    assert group_count(10**6) == 1000 and group_count(12) == 12 and group_count(0) == 1
    assert group_count(50, target=20) == 20
    with pytest.raises(ValueError):
        group_count(5, target=0)


@pytest.mark.parametrize("scheme", ["multinomial", "poisson"])
def test_weights_are_deterministic_and_resample_as_they_should(scheme):
    groups, reps = 300, 4000
    w = replicate_weights(groups, reps, seed=13, scheme=scheme)
    assert w.shape == (reps, groups) and w.dtype == np.int64 and (w >= 0).all()
    assert np.array_equal(w, replicate_weights(groups, reps, seed=13, scheme=scheme))
    assert not np.array_equal(w, replicate_weights(groups, reps, seed=14, scheme=scheme))
    # each count: mean 1; variance 1 - 1/G (multinomial) or 1 (Poisson); standard errors of
    # the mean and variance over 1.2 million counts are about 0.001 and 0.002
    assert abs(w.mean() - 1.0) < 0.005
    variance = 1.0 - 1.0 / groups if scheme == "multinomial" else 1.0
    assert abs(w.var() - variance) < 0.01
    if scheme == "multinomial":
        assert (w.sum(axis=1) == groups).all()
        # two groups' counts in one replicate are negatively correlated: cov = -1/G
        assert abs(np.cov(w[:, 0], w[:, 1])[0, 1] + 1.0 / groups) < 0.05
    else:
        share_zero = float((w == 0).mean())
        assert abs(share_zero - np.exp(-1.0)) < 0.003  # P(Poisson(1) = 0) = 1/e


def test_weights_refuse_nonsense():
    with pytest.raises(ValueError):
        replicate_weights(0, 10)
    with pytest.raises(ValueError):
        replicate_weights(10, 10, scheme="jackknife")  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        unit_group(pl.col("u"), pl.String, 0)


def test_sums_equal_loops():
    rng = np.random.default_rng(0)
    stats = rng.random((50, 3))
    w = replicate_weights(50, 20, seed=1)
    sums = replicate_sums(w, stats)
    for r in range(20):
        assert np.allclose(sums[r], sum(w[r, g] * stats[g] for g in range(50)), atol=1e-12)
    jack = jackknife_sums(stats)
    for g in range(50):
        assert np.allclose(jack[g], np.delete(stats, g, axis=0).sum(axis=0), atol=1e-12)
    with pytest.raises(ValueError):
        replicate_sums(w, stats[:10])
