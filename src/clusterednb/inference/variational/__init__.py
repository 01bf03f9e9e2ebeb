"""Truncated stick-breaking mean-field variational inference, in memory and streamed."""
