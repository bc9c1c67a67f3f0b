"""Errors of the client: the server's REST error shape, refusals before
sending, an unreachable or silent server, rate limits."""

from __future__ import annotations

import http.server
import socket
import threading
import time
import unittest
from typing import Dict, Optional, Tuple

import engram_client as ec
from engram_client import Client, EpisodeInput, MemoryInput, MemoryPatch, Scope

from engram_server import Server, make_key

server: Optional[Server] = None
SCOPE = Scope("acme", "app", user="errors")


def setUpModule() -> None:
    global server
    server = Server(["--rate-limit", "0"])


def tearDownModule() -> None:
    if server is not None:
        server.stop()


class BadInputTest(unittest.TestCase):
    """Bad input raises InvalidError with code invalid and a message naming the field, and stores nothing."""

    def setUp(self) -> None:
        assert server is not None
        self.c = Client(server.url, server.key)

    def assertInvalid(self, field: str, fn, *args, **kw) -> ec.EngramError:  # type: ignore[no-untyped-def]
        with self.assertRaises(ec.InvalidError) as cm:
            fn(*args, **kw)
        e = cm.exception
        self.assertIsInstance(e, ec.EngramError)
        self.assertEqual((e.status, e.code), (400, ec.INVALID))
        self.assertIn(field, e.message)
        self.assertIn(field, str(e))
        return e

    def test_fields_named(self) -> None:
        self.assertInvalid("content", self.c.add_episodes, SCOPE, [EpisodeInput(content="ok"), EpisodeInput(content="")])
        self.assertEqual(self.c.list_episodes(SCOPE).items, [], "a refused add stored an episode")
        self.assertInvalid("kind", self.c.add_memories, SCOPE, [MemoryInput(value="x", kind="bogus")])
        self.assertInvalid("k", self.c.search, SCOPE, "x", k=-1)
        self.assertInvalid("limit", self.c.list_memories, SCOPE, {"limit": 5000})
        self.assertInvalid("role", self.c.create_key, SCOPE, "root")
        (m,) = self.c.add_memories(SCOPE, [MemoryInput(value="Olga spricht Russisch.", kind="semantic")])
        self.assertInvalid("confidence", self.c.update_memory, SCOPE, m.id, MemoryPatch(confidence=2))
        self.assertEqual(self.c.get_memory(SCOPE, m.id).version, 1, "a refused update changed the memory")
        self.assertInvalid("version", self.c.rollback, SCOPE, m.id, 0)
        self.assertInvalid("action", self.c.resolve_conflict, SCOPE, m.id, m.id, action="merge")
        self.assertInvalid("id", self.c.get_memory, SCOPE, "not-an-id")
        self.assertInvalid("occurred_after", self.c.list_episodes, SCOPE, occurred_after="yesterday")
        self.assertInvalid("input", self.c.embeddings, [])

    def test_refused_before_sending(self) -> None:
        for bad in ("", ".", ".."):
            with self.assertRaises(ec.InvalidError) as cm:
                self.c.get_memory(SCOPE, bad)
            self.assertEqual(cm.exception.status, 0)
            self.assertIn("memory id", cm.exception.message)
        with self.assertRaises(ec.InvalidError) as cm:
            self.c.add_memories(SCOPE, [{"value": "x", "confidence": float("nan")}])
        self.assertEqual(cm.exception.status, 0)
        with self.assertRaises(ec.InvalidError):
            Client("localhost:8080")

    def test_not_found(self) -> None:
        with self.assertRaises(ec.NotFoundError) as cm:
            self.c.get_memory(SCOPE, "01HZY3V7Q8X2M4N6P8R0S2T4V6")
        self.assertEqual((cm.exception.status, cm.exception.code), (404, ec.NOT_FOUND))
        self.assertIn("01HZY3V7Q8X2M4N6P8R0S2T4V6", cm.exception.message)


class AuthTest(unittest.TestCase):
    def test_missing_and_bad_key(self) -> None:
        assert server is not None
        for key in (None, "ek_nope_nope"):
            with self.assertRaises(ec.UnauthorizedError) as cm:
                Client(server.url, key).list_memories(SCOPE)
            self.assertEqual((cm.exception.status, cm.exception.code), (401, ec.UNAUTHORIZED))
        self.assertEqual(Client(server.url).health(), "ok")

    def test_read_key_cannot_write(self) -> None:
        assert server is not None
        admin = Client(server.url, server.key)
        reader = admin.create_key(SCOPE.namespace(), ec.ROLE_READ).secret
        c = Client(server.url, reader)
        c.list_memories(SCOPE)
        with self.assertRaises(ec.ForbiddenError) as cm:
            c.add_memories(SCOPE, [MemoryInput(value="x", kind="semantic")])
        self.assertEqual((cm.exception.status, cm.exception.code), (403, ec.FORBIDDEN))
        with self.assertRaises(ec.ForbiddenError):
            c.delete_scope(SCOPE)


class TransportTest(unittest.TestCase):
    def test_unreachable(self) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        with self.assertRaises(ec.UnavailableError) as cm:
            Client(f"http://127.0.0.1:{port}", timeout=5).health()
        self.assertEqual((cm.exception.status, cm.exception.code), (0, ec.UNAVAILABLE))

    def test_timeout(self) -> None:
        with socket.socket() as s:  # accepts connections, never answers
            s.bind(("127.0.0.1", 0))
            s.listen(4)
            port = s.getsockname()[1]
            start = time.monotonic()
            with self.assertRaises(ec.UnavailableError) as cm:
                Client(f"http://127.0.0.1:{port}", timeout=0.3).health()
            self.assertLess(time.monotonic() - start, 5)
        self.assertIn("did not answer", cm.exception.message)

    def test_not_our_error_body(self) -> None:
        # A proxy's answer is not the REST error shape: the code comes from the status.
        answers: Dict[str, Tuple[int, Dict[str, str], bytes]] = {"/healthz": (502, {}, b"<html>Bad Gateway</html>"), "/readyz": (429, {"Retry-After": "7"}, b"")}

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self) -> None:
                status, headers, body = answers[self.path]
                self.send_response(status)
                for k, v in headers.items():
                    self.send_header(k, v)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args: object) -> None:
                pass

        proxy = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=proxy.serve_forever, daemon=True).start()
        try:
            c = Client(f"http://127.0.0.1:{proxy.server_address[1]}", timeout=5)
            with self.assertRaises(ec.UnavailableError) as cm:
                c.health()
            self.assertEqual((cm.exception.status, cm.exception.code), (502, ec.UNAVAILABLE))
            self.assertIn("Bad Gateway", cm.exception.message)
            with self.assertRaises(ec.TooManyRequestsError) as cm2:
                c.ready()
            self.assertEqual(cm2.exception.retry_after, 7.0)
        finally:
            proxy.shutdown()
            proxy.server_close()


class RateLimitTest(unittest.TestCase):
    def test_too_many_requests(self) -> None:
        s = Server(["--rate-limit", "1", "--rate-burst", "2"])
        try:
            c = Client(s.url, s.key)
            with self.assertRaises(ec.TooManyRequestsError) as cm:
                for _ in range(20):
                    c.list_memories(SCOPE)
            e = cm.exception
            self.assertEqual((e.status, e.code), (429, ec.TOO_MANY_REQUESTS))
            self.assertIsNotNone(e.retry_after)
            self.assertGreater(e.retry_after or 0, 0)
        finally:
            s.stop()


if __name__ == "__main__":
    unittest.main()
