"""Starts many short ``tiny-agent`` processes cheaply: import once, then fork one child per run.

Importing the CLI (click, both provider SDKs) takes seconds; a fork of a process that already did
takes milliseconds. Each child is a fresh process from the fork on: it gets its own stdin
(/dev/null), stdout, stderr, working folder and environment, installs the kill points from that
environment, and runs the CLI's real ``main(argv)``. Nothing was opened before the fork (no store,
no client, no socket), so the child shares nothing with its siblings.

Protocol on stdin/stdout, one JSON object a line: the parent sends
``{"argv", "env", "cwd", "stdout", "stderr"}`` and gets ``{"pid"}`` at once, then ``{"pid", "code"}``
when that child ends (``code`` as ``subprocess`` gives it: -9 for SIGKILL).
"""

from __future__ import annotations

import contextlib
import gc
import json
import os
import select
import sys
import threading
import traceback
from http.server import BaseHTTPRequestHandler, HTTPServer
from typing import Any

import killpoints

import tiny_agent.cli.app
from tiny_agent.providers.anthropic.adapter import AnthropicProvider
from tiny_agent.types import Message, Prompt

with contextlib.suppress(ImportError):  # the PostgreSQL store (psycopg, its pool), for cases against a server
    import tiny_agent.store.postgres


def _warm_up() -> None:
    """Do once what every run would do first, and a long-lived process does once too: the SDK's
    lazy imports, its response models, the price table. One round trip to a throwaway local
    server; nothing of it (thread, socket, client) is left when the first child is forked."""
    reply = {
        "id": "msg_warm",
        "type": "message",
        "role": "assistant",
        "model": "claude-sonnet-4-6",
        "content": [{"type": "text", "text": "hi"}, {"type": "tool_use", "id": "toolu_w", "name": "t", "input": {}}],
        "stop_reason": "tool_use",
        "stop_sequence": None,
        "usage": {
            "input_tokens": 1,
            "output_tokens": 1,
            "cache_creation_input_tokens": 0,
            "cache_read_input_tokens": 0,
        },
    }

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            self.rfile.read(int(self.headers["content-length"]))
            data = json.dumps(reply).encode()
            self.send_response(200)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    with HTTPServer(("127.0.0.1", 0), Handler) as server:
        thread = threading.Thread(target=server.handle_request)
        thread.start()
        provider = AnthropicProvider(
            model="claude-sonnet-4-6", api_key="warm-up", base_url=f"http://127.0.0.1:{server.server_address[1]}"
        )
        response = provider.send(provider.render(Prompt(("s",), (), (Message.user("hi"),))))
        provider.profile.price(response.usage)
        provider._client.close()
        thread.join()


def _say(message: dict[str, Any]) -> None:
    os.write(1, (json.dumps(message) + "\n").encode())


def _child(command: dict[str, Any]) -> None:
    code = 70
    try:
        os.dup2(os.open(os.devnull, os.O_RDONLY), 0)
        os.dup2(os.open(command["stdout"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 1)
        os.dup2(os.open(command["stderr"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), 2)
        sys.stdin = open(0, closefd=False)  # noqa: SIM115
        sys.stdout = open(1, "w", closefd=False)  # noqa: SIM115
        sys.stderr = open(2, "w", closefd=False)  # noqa: SIM115
        os.chdir(command["cwd"])
        os.environ.clear()
        os.environ.update(command["env"])
        killpoints.install()
        code = tiny_agent.cli.app.main(command["argv"])
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 1
    except BaseException:
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


def serve() -> None:
    _warm_up()
    gc.freeze()  # keep the collector off the inherited objects: fewer copied pages in each child
    _say({"ready": os.getpid()})
    pending = b""
    while True:
        readable, _, _ = select.select([0], [], [], 0.01)
        if readable:
            chunk = os.read(0, 1 << 16)
            if not chunk:
                return
            pending += chunk
            while b"\n" in pending:
                line, pending = pending.split(b"\n", 1)
                command = json.loads(line)
                pid = os.fork()
                if pid == 0:
                    _child(command)
                _say({"pid": pid})
        while True:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            _say({"pid": pid, "code": os.waitstatus_to_exitcode(status)})


if __name__ == "__main__":
    serve()
