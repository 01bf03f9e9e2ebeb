"""Collapsed Gibbs sampling over task assignments, and the evidence estimators built on its
moves."""
