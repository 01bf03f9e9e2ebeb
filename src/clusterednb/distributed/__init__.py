"""Scale-out: engine-agnostic shard functions, and adapters for distributed engines (Dask)."""

from clusterednb.distributed.shards import ShardCounts, combine_shards, shard_counts

__all__ = ["ShardCounts", "combine_shards", "shard_counts"]
