"""Synthetic benchmarks with known ground truth: the sample's scale-up and the lab profile."""
