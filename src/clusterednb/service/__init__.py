"""The meeting assistant as a service: accounts, an HTTP API, a review page, learning for all.

Install with the ``[service]`` extra; start with ``cnb serve --store STORE.db``.
"""
