#!/usr/bin/env bash
# The main job: evaluate the sample data (the dashboard replaces this when it lands).
source "$(dirname "$0")/_env.sh" dashboard
exec .venv/bin/evalcore evaluate --labels sample_data/labels.tsv \
  --run sample_data/base.trec --run sample_data/tuned.trec --run sample_data/tuned-256d.trec --k 1,5,10 "$@"
