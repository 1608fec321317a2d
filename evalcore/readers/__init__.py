"""Layer 1, files in: open a source (gzip, BOM, line ends), detect its format, and read labels, runs and
documents into columnar values with integer-coded ids. Knows nothing of metrics."""
