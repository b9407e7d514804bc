"""Benchmarks: the developer loop, the hot path, Kconfig costs, step times."""
