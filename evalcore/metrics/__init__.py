"""Layer 3, scoring: metric names and the one check of k, the run-labels join, per-query kernels, the
`Evaluation` with its intervals, what "failed at k" means, and the tune/holdout split of a label set."""
