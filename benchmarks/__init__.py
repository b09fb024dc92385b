"""Runnable benchmarks; each writes JSON results and a short report under benchmarks/results/."""
