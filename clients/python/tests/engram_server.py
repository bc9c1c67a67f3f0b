"""Starts a real `engram serve` for the tests: its own data directory, a
free loopback port, API keys required.

The binary is $ENGRAM_BIN (integrations/run.sh builds it and exports it);
without it the binary is built once with `go build` into a temporary
directory.
"""

from __future__ import annotations

import atexit
import base64
import os
import re
import shutil
import subprocess
import tempfile
import threading
from typing import Dict, List, Optional

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))

_bin: Optional[str] = None


def engram_bin() -> str:
    """The path of the engram binary, building it when ENGRAM_BIN is unset."""
    global _bin
    if _bin:
        return _bin
    env_bin = os.environ.get("ENGRAM_BIN")
    if env_bin:
        _bin = env_bin
        return _bin
    d = tempfile.mkdtemp(prefix="engram-pybin-")
    atexit.register(shutil.rmtree, d, True)
    out = os.path.join(d, "engram")
    subprocess.run(["go", "build", "-o", out, "./cmd/engram"], cwd=ROOT, check=True)
    _bin = out
    return _bin


def make_key(data_dir: str, *, org: str = "acme", project: str = "app", user: str = "", role: str = "admin") -> str:
    """Creates an API key in data_dir with `engram keys create` and returns its secret."""
    args = [engram_bin(), "keys", "create", "--data", data_dir, "--org", org, "--project", project, "--role", role]
    if user:
        args += ["--user", user]
    res = subprocess.run(args, check=True, capture_output=True, text=True)
    return res.stdout.strip()


class Server:
    """A running `engram serve` with an admin key of org acme, project app."""

    def __init__(self, args: Optional[List[str]] = None, env: Optional[Dict[str, str]] = None) -> None:
        self.data_dir = tempfile.mkdtemp(prefix="engram-pytest-")
        self.key = make_key(self.data_dir)
        full_env = dict(os.environ)
        full_env.setdefault("ENGRAM_VAULT_KEY", base64.b64encode(os.urandom(32)).decode())
        full_env.update(env or {})
        cmd = [engram_bin(), "serve", "--addr", "127.0.0.1:0", "--data", self.data_dir] + list(args or [])
        self.proc = subprocess.Popen(
            cmd, env=full_env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
        )
        self._log: List[str] = []
        self._listening = threading.Event()
        self.url = ""
        self._reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._reader.start()
        if not self._listening.wait(60) or not self.url:
            self.stop()
            raise RuntimeError("engram serve did not listen within 60s:\n" + self.logs())

    def _read_stderr(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            self._log.append(line)
            if not self.url:
                m = re.search(r"listening on (https?://[^\s\"]+)", line)
                if m:
                    self.url = m.group(1)
                    self._listening.set()
        self._listening.set()  # exited before listening

    def logs(self) -> str:
        """What the server wrote to stderr so far."""
        return "".join(self._log)

    def stop(self) -> None:
        """Ends the server (SIGTERM, then SIGKILL after 10s) and removes its data directory."""
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._reader.join(5)
        if self.proc.stderr is not None and not self._reader.is_alive():
            self.proc.stderr.close()
        shutil.rmtree(self.data_dir, ignore_errors=True)
