"""SciPy's L-BFGS-B with BLAS on one thread.

L-BFGS-B over a vocabulary of words (20 000 weights) makes dozens of level-1 BLAS calls on
vectors of that length per iteration. OpenBLAS spreads each over its threads, and waking them
costs more than the work: one Enron ``cnb-logistic`` split took 175 s with OpenBLAS's two
threads and 37 s with one, on an idle two-core machine (the same iterations, the same
answer). Every large L-BFGS-B fit of the package goes through :func:`minimize_lbfgs`, which
limits BLAS to one thread for the fit and restores the caller's limit after it.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
from scipy.optimize import OptimizeResult, minimize
from threadpoolctl import threadpool_limits


def minimize_lbfgs(
    loss_and_gradient: Callable[[np.ndarray], tuple[float, np.ndarray]],
    start: np.ndarray,
    gtol: float,
    ftol: float,
    maxiter: int = 2000,
) -> OptimizeResult:
    """Minimise a smooth function by L-BFGS-B from ``start``, BLAS on one thread.

    Parameters
    ----------
    loss_and_gradient : callable
        ``x ↦ (f(x), ∇f(x))`` for ``x`` of shape (n,).
    start : ndarray of shape (n,)
    gtol, ftol : float
        SciPy's stopping tolerances on the projected gradient and the relative decrease.
    maxiter : int, default=2000

    Returns
    -------
    scipy.optimize.OptimizeResult
        ``x`` of shape (n,) the minimiser.

    Examples
    --------
    >>> result = minimize_lbfgs(lambda x: (float(((x - 3.0) ** 2).sum()), 2 * (x - 3.0)),
    ...                         np.zeros(2), gtol=1e-10, ftol=1e-14)
    >>> result.x.round(6).tolist()
    [3.0, 3.0]
    """
    with threadpool_limits(1, user_api="blas"):
        return minimize(
            loss_and_gradient,
            start,
            jac=True,
            method="L-BFGS-B",
            options={"maxiter": maxiter, "gtol": gtol, "ftol": ftol},
        )
