"""Inference engines. Each consumes statistics and a model and returns a Posterior."""
