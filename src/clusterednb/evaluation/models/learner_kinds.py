"""The harness kinds of the learners around the clustering: a learner inside each cluster
(:class:`~clusterednb.ClusteredLearner`) and one booster started from the clusters'
regressions (:class:`~clusterednb.ClusteredBoosting`)."""

from __future__ import annotations

from typing import Any

from clusterednb.learners.boosted import ClusteredBoosting
from clusterednb.learners.estimator import ClusteredLearner

CLUSTERED_LEARNERS = {
    "cnb-hgb": ("hgb", False, 0.0),
    "cnb-hgb+task": ("hgb", True, 0.0),
    "cnb-lgbm": ("lightgbm", False, 0.0),
    "cnb-lgbm+task": ("lightgbm", True, 0.0),
    "cnb-blend": ("lightgbm", False, "auto"),
}
"""The :class:`~clusterednb.learners.estimator.ClusteredLearner` kinds: (learner, with_task,
regression_share); ``cnb-blend`` blends the clusters' regressions and LightGBM inside them,
the share chosen on held-out rows of the training tasks."""
BOOSTED = "cnb-boost"
"""The :class:`~clusterednb.ClusteredBoosting` kind: LightGBM's defaults, started from the
clusters' regressions."""
BOOSTED_STOPPING = "cnb-boost+stop"
"""``cnb-boost`` with its number of trees chosen on a fifth of the rows held out
(``stop_share=0.2``)."""
BOOSTED_CHOOSING = "cnb-boost+auto"
"""``cnb-boost`` that starts from nothing when trees alone beat the regressions on the rows the
clustering's tuning held out (``start="auto"``)."""
LEARNER_KINDS = (*CLUSTERED_LEARNERS, BOOSTED, BOOSTED_STOPPING, BOOSTED_CHOOSING)
"""Every kind of this module."""


def learner_model(name: str, clustering: dict[str, Any], seed: int) -> Any:
    """The unfitted estimator of kind ``name`` (one of :data:`LEARNER_KINDS`) whose clustering
    takes ``clustering`` as its parameters.

    Examples
    --------
    >>> type(learner_model("cnb-boost", {}, 0)).__name__
    'ClusteredBoosting'
    >>> learner_model("cnb-blend", {}, 0).regression_share
    'auto'
    """
    if name == BOOSTED:
        return ClusteredBoosting(clustering_params=clustering, random_state=seed)
    if name == BOOSTED_STOPPING:
        return ClusteredBoosting(clustering_params=clustering, stop_share=0.2, random_state=seed)
    if name == BOOSTED_CHOOSING:
        return ClusteredBoosting(clustering_params=clustering, start="auto", random_state=seed)
    learner, with_task, share = CLUSTERED_LEARNERS[name]
    return ClusteredLearner(
        learner,
        with_task=with_task,
        clustering_params=clustering,
        regression_share=share,
        random_state=seed,
    )
