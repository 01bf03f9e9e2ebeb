"""The clustered logistic regression fitted shard by shard (engine-agnostic shard functions,
a driver, and the Dask adapter)."""
