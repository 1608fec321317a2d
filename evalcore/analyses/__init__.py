"""Layer 4, what an evaluation means: paired comparisons and all-k curves, failures and drill-downs, slices and
source gaps, the integrity checks (blindness, coverage, suspects, judging pools, the audit), tokens and the k budget.
Each reads an `Evaluation`; none writes anything."""
