"""Helpers of bench/bench_pack_quality.py: tasks, gold patches and scoring, baselines, runs."""
