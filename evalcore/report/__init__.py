"""Layer 6, renderers: an evaluation as a text table, JSON, CSV or Markdown, and the meeting report (Markdown,
self-contained HTML, failures CSV)."""
