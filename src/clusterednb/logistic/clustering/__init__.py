"""The partition posterior of the clustered logistic model: joint feature-and-label cluster scores
and their samplers."""
