"""Servers that fail on purpose, for the fault tests: an SMTP sink with fault modes, an HTTP
proxy in front of Radicale that injects refusals and dropped responses, and a TCP proxy that
cuts a connection (IMAP) after a number of bytes. All listen on 127.0.0.1 only and stop with
the test."""

from __future__ import annotations

import email
import http.client
import http.server
import socket
import socketserver
import threading
from collections import Counter
from collections.abc import Callable

from service_helpers import free_port


class FaultySMTP:
    """An aiosmtpd sink whose ``mode`` says what it does with the next message: ``"ok"``
    (take it), ``"451"`` (refuse for now), ``"550"`` (refuse for good), ``"down"`` (not
    listening at all: connection refused). ``messages`` holds what it took."""

    def __init__(self) -> None:
        from aiosmtpd.controller import Controller

        sink = self

        class Handler:
            async def handle_DATA(self, server, session, envelope):
                if sink.mode == "451":
                    return "451 4.3.0 try again later"
                if sink.mode == "550":
                    return "550 5.7.1 not accepted"
                sink.messages.append(email.message_from_bytes(envelope.content))
                return "250 OK"

        self.mode = "ok"
        self.messages: list[email.message.Message] = []
        self.port = free_port()
        self._new = lambda: Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self._controller = self._new()
        self._controller.start()
        self._running = True

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def down(self) -> None:
        if self._running:
            self._controller.stop()
            self._running = False

    def up(self) -> None:
        if not self._running:
            self._controller = self._new()
            self._controller.start()
            self._running = True

    def stop(self) -> None:
        self.down()

    def replies_per_uid(self) -> Counter:
        """How many REPLYs each invitation (UID, RECURRENCE-ID) got."""
        return replies_per_uid(self.messages)


def replies_per_uid(messages: list[email.message.Message]) -> Counter:
    """How many REPLYs each invitation (UID, RECURRENCE-ID) got in ``messages``."""
    import icalendar

    found: Counter = Counter()
    for message in messages:
        for part in message.walk():
            if part.get_content_type() != "text/calendar":
                continue
            calendar = icalendar.Calendar.from_ical(part.get_payload(decode=True))
            for event in calendar.walk("VEVENT"):
                recurrence = event.get("RECURRENCE-ID")
                key = (str(event["UID"]), recurrence.to_ical().decode() if recurrence else "")
                found[key] += 1
    return found


HOP_BY_HOP = {"connection", "keep-alive", "transfer-encoding", "te", "upgrade", "trailer"}


class FaultyProxy:
    """An HTTP proxy to ``upstream`` (host, port); ``fault(method, path)`` chooses what
    happens to each request: None (forward it), an HTTP status (answer it without
    forwarding), ``"drop"`` (close the connection unanswered) or ``"apply-drop"`` (forward
    it, then close the connection without the response). ``before(method, path)`` runs
    before a request is forwarded (to change the upstream meanwhile)."""

    def __init__(
        self,
        upstream: tuple[str, int],
        fault: Callable[[str, str], object] = lambda method, path: None,
    ) -> None:
        self.upstream, self.fault = upstream, fault
        self.before: Callable[[str, str], None] = lambda method, path: None
        self.seen: list[tuple[str, str]] = []
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *_):
                pass

            def _any(self):
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length) if length else None
                proxy.seen.append((self.command, self.path))
                what = proxy.fault(self.command, self.path)
                if what == "drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                if isinstance(what, int):
                    data = f"injected {what}".encode()
                    self.send_response(what)
                    self.send_header("Content-Length", str(len(data)))
                    self.send_header("Content-Type", "text/plain")
                    self.end_headers()
                    self.wfile.write(data)
                    return
                proxy.before(self.command, self.path)
                upstream = http.client.HTTPConnection(*proxy.upstream, timeout=30)
                headers = {k: v for k, v in self.headers.items() if k.lower() not in HOP_BY_HOP}
                upstream.request(self.command, self.path, body=body, headers=headers)
                response = upstream.getresponse()
                data = response.read()
                upstream.close()
                if what == "apply-drop":
                    self.close_connection = True
                    self.connection.shutdown(socket.SHUT_RDWR)
                    return
                self.send_response(response.status, response.reason)
                for key, value in response.getheaders():
                    if key.lower() not in HOP_BY_HOP and key.lower() != "content-length":
                        self.send_header(key, value)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_PUT = do_POST = do_DELETE = do_HEAD = do_OPTIONS = _any
            do_PROPFIND = do_PROPPATCH = do_REPORT = do_MKCALENDAR = do_MKCOL = _any

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_port}/"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


class CuttingProxy:
    """A TCP proxy to ``upstream`` that cuts the ``cut_connection``-th connection (counting
    from 1) once ``cut_after`` bytes have gone from the client to the server (None: never)."""

    def __init__(self, upstream: tuple[str, int]) -> None:
        self.upstream = upstream
        self.cut_connection: int | None = None
        self.cut_after = 0
        self.connections = 0
        proxy = self

        class Handler(socketserver.BaseRequestHandler):
            def handle(self):
                proxy.connections += 1
                cut = proxy.cut_after if proxy.connections == proxy.cut_connection else None
                server = socket.create_connection(proxy.upstream, timeout=30)
                done = threading.Event()

                def pump(source, target, limit):
                    sent = 0
                    try:
                        while not done.is_set():
                            data = source.recv(65536)
                            if not data:
                                break
                            if limit is not None and sent + len(data) > limit:
                                target.sendall(data[: max(0, limit - sent)])
                                break
                            target.sendall(data)
                            sent += len(data)
                    except OSError:
                        pass
                    done.set()
                    for sock in (source, target):
                        try:
                            sock.shutdown(socket.SHUT_RDWR)
                        except OSError:
                            pass

                back = threading.Thread(target=pump, args=(server, self.request, None))
                back.start()
                pump(self.request, server, cut)
                back.join(timeout=30)
                server.close()

        self.server = socketserver.ThreadingTCPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
