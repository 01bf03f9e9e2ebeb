"""Any classifier inside the clusters: the clustering of the clustered logistic regression
decides how much each task's rows weigh in each cluster's learner
(:class:`~clusterednb.learners.estimator.ClusteredLearner`)."""
