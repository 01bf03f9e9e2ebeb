"""A real OpenID Connect provider on 127.0.0.1 for the sign-in tests: the npm registry's
``oidc-provider`` (certified by the OpenID Foundation), started by ``tests/oidc_provider``'s
``provider.mjs`` under Node.js. ``make test`` installs it (``npm ci --prefix
tests/oidc_provider``).

Its issuer is ``http://localhost:PORT`` while the service answers on ``http://127.0.0.1:PORT``:
two sites to the browser, as an organisation's provider is, so the state kept across the
provider's redirect back must survive a cross-site navigation.
"""

from __future__ import annotations

import shutil
import subprocess
import time
from pathlib import Path

import pytest

from service_helpers import free_port

PROVIDER = Path(__file__).parent / "oidc_provider"
NODE = shutil.which("node")
NEEDS_NODE = pytest.mark.skipif(NODE is None, reason="Node.js is not installed")


class Provider:
    """``provider.mjs`` in a subprocess for one client; stops by itself when the test ends.

    Parameters
    ----------
    directory : Path
        Where its client secret (mode 600) and log are written.
    redirect_uri, post_logout_uri : str
        The service's ``/auth/callback`` and ``/login``.
    """

    client_id = "cnb-assistant"

    def __init__(self, directory: Path, redirect_uri: str, post_logout_uri: str) -> None:
        if not (PROVIDER / "node_modules" / "oidc-provider").is_dir():
            pytest.fail(f"oidc-provider is not installed: npm ci --prefix {PROVIDER}")
        self.port = free_port()
        self.issuer = f"http://localhost:{self.port}"
        self.secret_file = directory / "client-secret"
        self.secret_file.write_text("a-client-secret-for-the-tests\n")
        self.secret_file.chmod(0o600)
        self.log = directory / "provider.log"
        self.arguments = [self.issuer, str(self.port), self.client_id, str(self.secret_file)]
        self.arguments += [redirect_uri, post_logout_uri]
        self.process: subprocess.Popen | None = None

    def __enter__(self) -> Provider:
        self.process = subprocess.Popen(
            [NODE, str(PROVIDER / "provider.mjs"), *self.arguments],
            stdout=self.log.open("ab"),
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"the provider exited: {self.log.read_text()[-2000:]}")
            if "listening" in self.log.read_text():
                return self
            time.sleep(0.1)
        raise RuntimeError("the provider did not start in time")

    def __exit__(self, *_: object) -> None:
        if self.process is not None:
            self.process.kill()
            self.process.wait()

    def options(self, admin_group: str | None = "cnb-admins") -> list[str]:
        """``cnb serve``'s flags for this provider."""
        flags = ["--oidc-issuer", self.issuer, "--oidc-client-id", self.client_id]
        flags += ["--oidc-client-secret-file", str(self.secret_file)]
        return [*flags, "--oidc-admin-group", admin_group] if admin_group else flags
