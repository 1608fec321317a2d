"""Layer 2, numbers over arrays: confidence intervals (Wilson, BCa bootstrap), paired tests and the planner.
Works on per-query score matrices; knows nothing of runs, labels or files."""
