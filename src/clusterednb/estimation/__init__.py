"""What every estimator of the package stands on, whichever its model family: reading a
training table, the tasks and labels checks, the decisions and scores under a loss, and the
not-fitted and ``sample_weight`` checks."""
