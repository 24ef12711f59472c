"""Benchmark tools and their data: the report (`flashcourse bench --report`), sweeps and probes, and the archive of
measurement runs that the course's quoted numbers and thresholds cite (docs/benchmarks.md)."""
