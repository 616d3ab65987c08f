"""Synthesis: turning numbered passages into an answer with inline `[n]` citations, or a refusal."""
