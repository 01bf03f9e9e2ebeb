"""Bayesian Hierarchical Clustering of tasks, and greedy merges of its cut."""
