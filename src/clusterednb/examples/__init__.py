"""Tiny ready-made fixtures that the package's docstrings start from, one module per folder
they serve (:mod:`~clusterednb.examples.models`, :mod:`~clusterednb.examples.inference`,
:mod:`~clusterednb.examples.naive_bayes`, :mod:`~clusterednb.examples.logistic`,
:mod:`~clusterednb.examples.evaluation`, :mod:`~clusterednb.examples.meeting`,
:mod:`~clusterednb.examples.service`).

A docstring imports the module that defines what it uses. The fixtures are one top layer of
the package: they may build on any module, and no module of the package imports them.
"""
