"""The view's web server: the standard library's ``ThreadingHTTPServer`` on 127.0.0.1, in a thread.

Every path needs the random token the URL carries (``?token=...``): another local user, or a web
page in the browser guessing ports, gets 403. The session is read from the store once, before the
server starts, so the store is only read, from the caller's thread (an SQLite connection stays on
the thread that opened it), and the page is served from memory.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import re
import secrets
import threading
import webbrowser
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import resources
from typing import Any
from urllib.parse import parse_qs, urlsplit

from tiny_agent.errors import ConfigError
from tiny_agent.observe.view.data import SessionView
from tiny_agent.store.base import Store

__all__ = ["ViewServer", "serve"]

_STATIC = {"view.js": "text/javascript", "view.css": "text/css"}
_CALL = re.compile(r"^/api/session/([^/]+)/call/(\d+)$")
_SESSION = re.compile(r"^/api/session/([^/]+)(/whatif)?$")
_DRAWN = re.compile(r"^/api/session/[^/]+/drawn$")
"""The page says it has drawn the timeline and the selected call (benchmarks/view_load.py times it)."""


class ViewServer:
    """A running view: ``url`` opens it, ``close()`` stops it."""

    def __init__(self, view: SessionView, host: str = "127.0.0.1", port: int = 0) -> None:
        self.view = view
        self.token = secrets.token_urlsafe(18)
        self._lock = threading.Lock()
        """The re-rendering engine and the replays are not made for two threads at once."""
        handler = type("Handler", (_Handler,), {"server_view": self})
        try:
            self._server = ThreadingHTTPServer((host, port), handler)
        except OSError as exc:
            raise ConfigError(
                f"cannot serve the view on {host}:{port}: {exc.strerror or exc}; choose another --port (0: a free one)"
            ) from exc
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, name="tiny-agent-view", daemon=True)
        self._thread.start()
        # The first call's redraw replays the whole log into an engine: done now, while the browser
        # loads the page and the timeline, not when the page asks for its selected call.
        threading.Thread(target=self._warm, name="tiny-agent-view-warm", daemon=True).start()

    def _warm(self) -> None:
        with self._lock, contextlib.suppress(Exception):  # a log it cannot replay says so on the call's page
            self.view.warm()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?token={self.token}"

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def __enter__(self) -> ViewServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def answer(self, path: str) -> tuple[int, str, bytes]:
        """(status, content type, body) for a path whose token was right."""
        sid = self.view.info.id
        if path in ("/", "/index.html"):
            page = _asset("index.html").replace("__TOKEN__", self.token).replace("__SESSION__", sid)
            return 200, "text/html; charset=utf-8", page.encode()
        if path.startswith("/static/") and path[8:] in _STATIC:
            return 200, _STATIC[path[8:]] + "; charset=utf-8", _asset(path[8:]).encode()
        if _DRAWN.match(path):
            return 204, "text/plain", b""
        # The session by its id or a prefix of it, as the CLI takes it (the view serves this one only).
        asked = _SESSION.match(path)
        if asked and sid.startswith(asked.group(1)) and not asked.group(2):
            return _json(self.view.session())
        if asked and sid.startswith(asked.group(1)):
            with self._lock:
                return _json({"rows": self.view.what_ifs()})
        found = _CALL.match(path)
        if found and sid.startswith(found.group(1)):
            try:
                with self._lock:
                    return _json(self.view.call(int(found.group(2))))
            except IndexError:
                return 404, "text/plain", f"no call {found.group(2)} in this session".encode()
        if asked or found:
            return 404, "text/plain", f"not found: this view serves session {sid} only".encode()
        return 404, "text/plain", b"not found"


def serve(store: Store, session_id: str | None = None, *, open_browser: bool = True, port: int = 0) -> ViewServer:
    """Serve the view of session ``session_id`` (an id or unique prefix; None: the newest session)
    on 127.0.0.1 and, with ``open_browser``, open it in the browser when there is one. The store is
    read here, once; the server runs in a thread until ``close()``."""
    if session_id is None:
        newest = store.sessions(limit=1)
        if not newest:
            raise ConfigError(f"no sessions in {store.location}: nothing to view")
        info = newest[0]
    else:
        info = store.get(session_id)
    view = SessionView.of(info, store.entries(info.id, lenient=True))
    server = ViewServer(view, port=port)
    if open_browser:
        # No browser here: the URL is printed, and the server waits all the same.
        with contextlib.suppress(webbrowser.Error):
            webbrowser.open(server.url)
    return server


def _asset(name: str) -> str:
    return resources.files("tiny_agent.observe.view").joinpath("static", name).read_text(encoding="utf-8")


def _json(value: Any) -> tuple[int, str, bytes]:
    return 200, "application/json", json.dumps(value, ensure_ascii=False, separators=(",", ":")).encode()


class _Handler(BaseHTTPRequestHandler):
    server_view: ViewServer

    def do_GET(self) -> None:
        parts = urlsplit(self.path)
        token = (parse_qs(parts.query).get("token") or [""])[0]
        if not hmac.compare_digest(token.encode(), self.server_view.token.encode()):
            self._send(403, "text/plain", b"forbidden: the URL's token is missing or wrong")
            return
        try:
            status, kind, body = self.server_view.answer(parts.path)
        except Exception as exc:  # one bad call must not take the page down: say what failed
            status, kind, body = 500, "text/plain", f"{type(exc).__name__}: {exc}".encode()
        self._send(status, kind, body)

    def _send(self, status: int, kind: str, body: bytes) -> None:
        self.send_response(status)
        self.send_header("Content-Type", kind)
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Cache-Control", "no-store")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        """Quiet: the terminal that started the view is the user's."""
