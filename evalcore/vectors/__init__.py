"""Layer 1b, runs from vectors: exact nearest-neighbour search over a float32 doc matrix in blocks, and the smaller
indexes it measures (first-d truncation, scalar int8, binary sign bits), each giving a `Run` like an uploaded one.
Imports only the readers; knows nothing of metrics."""
