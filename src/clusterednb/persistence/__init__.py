"""Model files: plain JSON and NPZ in a zip, never pickle; what each estimator writes and
restores."""
