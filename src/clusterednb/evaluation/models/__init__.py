"""Models by name for the protocols: the library's models and practitioners' baselines."""
