"""The probability models: observation models, document event models, partition and label priors."""
