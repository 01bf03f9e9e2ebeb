"""Count statistics and the special functions and compiled loops they are computed with."""
