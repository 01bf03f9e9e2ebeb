"""The clustered logistic model's cluster scores: the joint feature-and-label score of a set of
tasks from their Laplace expansions (sampled by :mod:`clusterednb.inference.blocks`)."""
