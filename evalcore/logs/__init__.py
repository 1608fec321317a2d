"""Query logs in: the queries customers typed, read out of core with DuckDB, normalised, masked, merged and sampled.

One concept per module: `detect` (which log a file is, from its content), `engine` (DuckDB within a memory budget,
its errors as plain messages), `ubi`, `spans`, `plain` (each log format as one SQL relation of the same columns),
`id_lists` (the doc ids a log line lists), `scan` (the counts of every distinct query text, out of core),
`normalise`, `personal_data`, `near_duplicates`, `strata` (strata, allocation, the seeded draw), `logged_docs` (what
the log gave each sampled query: its latest results, the docs clicked), `sampling` (all of it, `sample_log`),
`queries_out` (the queries file the judging commands and the Data page read) and `production_run` (the logged
results as a run).
"""
