"""The naive-Bayes estimators: the shell, the sharing models, Clustered NB and what it uses."""
