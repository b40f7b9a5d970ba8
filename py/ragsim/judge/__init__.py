"""Layer 4, judge: spans and verdicts, the pipeline, question sets, the map, facts, the audit."""
