"""Metric families (plugins) and the registry that holds them."""
