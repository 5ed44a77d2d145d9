"""Per-node launch-config tuning: search spaces, strategies and the re-measure loop."""
