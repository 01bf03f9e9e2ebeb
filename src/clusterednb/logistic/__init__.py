"""Clustered logistic regression: the estimator and everything only it uses."""
