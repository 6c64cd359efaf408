"""Planning and running an evaluation: shared statistics, one pass, Polars (or Spark) engines."""
