"""Layer 6, renderers: an evaluation as a text table, JSON, CSV or Markdown; every analysis in words (amounts,
p-values and money; the verdicts of comparisons, index sizes and source gaps; the planner's and the k budget's
sentences; the text and JSON of ``compare``, ``budget`` and ``vectors``); and the meeting report (Markdown,
self-contained HTML, failures CSV)."""
