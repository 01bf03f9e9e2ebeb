"""Logistic-regression solvers of the clustered logistic model: Newton, L-BFGS, Laplace, task
deviations."""
