"""Uncertainty: confidence intervals, paired tests and the random groups the bootstrap resamples.

A pure library on NumPy arrays and Polars expressions; it knows no metric, config or report.

- :mod:`evalcli.uncertainty.groups` -- each unit (row, query, user...) to one of ``G`` random
  groups by a seeded hash that is the same on every engine, format and Polars version; the
  ``R x G`` replicate weights that resample groups; sums of per-group statistics per replicate.
- :mod:`evalcli.uncertainty.intervals` -- :class:`~evalcli.uncertainty.intervals.Interval`;
  percentile and BCa bootstrap intervals from replicate values, normal and t intervals, the t
  interval for a mean of per-query values, Wilson (plain and clustered/weighted), DeLong for AUROC.
- :mod:`evalcli.uncertainty.paired` -- paired comparison of two systems on the same units:
  paired t, Wilcoxon signed-rank, sign-flip randomization, McNemar, paired DeLong, paired
  bootstrap; Holm, Bonferroni and Benjamini-Hochberg corrections.

The modules import NumPy and SciPy at their top, and nothing imports this package unless
uncertainty is asked for, so ``evalcli --help`` stays light. An undefined result (one class only,
one value, NaN) is a value with a ``reason``, never an exception; a caller's programming error
(a level outside (0, 1), arrays of different lengths) raises ``ValueError``.
"""
