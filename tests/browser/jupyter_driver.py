"""A local JupyterLab server and a headless Chromium driven over the DevTools protocol.

Used by ``test_jupyterlab_widgets.py``. Nothing here touches the network beyond 127.0.0.1:
the server listens on a free loopback port with a random token, Chromium resolves every other
host to NOTFOUND, and both processes are killed (with their process groups) on exit.

The DevTools websocket is spoken with ``websocket-client``, which ``jupyter_server`` itself
depends on, so it is present wherever JupyterLab is.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.browser.chromium import CHROMIUM, HEADLESS_FLAGS

CHROMIUM_FLAGS = (
    *HEADLESS_FLAGS,
    "--disable-dev-shm-usage",
    "--host-resolver-rules=MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
    "--remote-allow-origins=*",
    "--window-size=1400,2000",
    "--hide-scrollbars",
)


class DriverError(RuntimeError):
    """A process did not start, or the page did not reach the expected state in time."""


class ProcessExited(DriverError):
    """A process we started has exited: waiting longer is pointless."""


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _kill(proc: subprocess.Popen[Any] | None) -> None:
    """Stop one process we started (and its process group), escalating to SIGKILL."""
    if proc is None or proc.poll() is not None:
        return
    for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
        try:
            os.killpg(proc.pid, sig)
        except ProcessLookupError:
            return
        try:
            proc.wait(timeout=wait)
            return
        except subprocess.TimeoutExpired:
            continue


def wait_for(predicate: Callable[[], Any], *, timeout: float, interval: float = 0.25, what: str = "condition") -> Any:
    """Poll ``predicate`` until it returns something truthy; raise DriverError after ``timeout``."""
    deadline = time.monotonic() + timeout
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            value = predicate()
        except ProcessExited:
            raise
        except (OSError, DriverError) as exc:  # not up yet
            last_error = exc
            value = None
        if value:
            return value
        time.sleep(interval)
    raise DriverError(f"timed out after {timeout:.0f}s waiting for {what}" + (f" ({last_error})" if last_error else ""))


# ------------------------------------------------------------------ JupyterLab


class JupyterLab:
    """``jupyter lab --no-browser`` on a free 127.0.0.1 port, isolated from the user's config.

    Config, data-runtime, settings and workspace directories live under ``home``; the lab
    application object is exposed in the page as ``window.jupyterapp`` so the test can run
    commands; windowed (virtual) notebook rendering is off so every output stays in the DOM.
    """

    def __init__(self, root_dir: Path, home: Path, *, python: str = sys.executable) -> None:
        self.root_dir = root_dir
        self.home = home
        self.python = python
        self.token = secrets.token_hex(16)
        self.port = 0
        self.proc: subprocess.Popen[bytes] | None = None
        self.log_path = home / "jupyter.log"

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        sep = "&" if "?" in path else "?"
        return f"{self.base}/{path.lstrip('/')}{sep}token={self.token}"

    def _prepare(self) -> dict[str, str]:
        settings = self.home / "lab-settings"
        tracker = settings / "@jupyterlab" / "notebook-extension"
        tracker.mkdir(parents=True, exist_ok=True)
        (tracker / "tracker.jupyterlab-settings").write_text(json.dumps({"windowingMode": "none"}))
        # No "would you like news?" toast, nothing fetched from jupyter.org.
        apputils = settings / "@jupyterlab" / "apputils-extension"
        apputils.mkdir(parents=True, exist_ok=True)
        (apputils / "notification.jupyterlab-settings").write_text(
            json.dumps({"fetchNews": "false", "checkForUpdates": False, "doNotDisturbMode": True})
        )
        for sub in ("config", "data", "runtime", "workspaces", "ipython"):
            (self.home / sub).mkdir(exist_ok=True)
        env = dict(os.environ)
        env.update(
            JUPYTER_CONFIG_DIR=str(self.home / "config"),
            JUPYTER_RUNTIME_DIR=str(self.home / "runtime"),
            JUPYTER_DATA_DIR=str(self.home / "data"),
            IPYTHONDIR=str(self.home / "ipython"),
            JUPYTER_PLATFORM_DIRS="1",
            PATH=str(Path(self.python).parent) + os.pathsep + env.get("PATH", ""),
            PYTHONUNBUFFERED="1",
        )
        env.pop("JUPYTER_PATH", None)
        return env

    def start(self, *, attempts: int = 3, timeout: float = 45) -> JupyterLab:
        env = self._prepare()
        errors = []
        for _ in range(attempts):
            self.port = free_port()
            cmd = [
                self.python,
                "-m",
                "jupyterlab",
                "--no-browser",
                "--ServerApp.ip=127.0.0.1",
                f"--ServerApp.port={self.port}",
                "--ServerApp.port_retries=0",
                f"--IdentityProvider.token={self.token}",
                f"--ServerApp.root_dir={self.root_dir}",
                "--ServerApp.open_browser=False",
                "--LabApp.expose_app_in_browser=True",
                f"--LabApp.user_settings_dir={self.home / 'lab-settings'}",
                f"--LabApp.workspaces_dir={self.home / 'workspaces'}",
                "--LabApp.news_url=",
                "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
                "--LanguageServerManager.autodetect=False",
            ]
            if hasattr(os, "geteuid") and os.geteuid() == 0:
                cmd.append("--allow-root")  # CI containers run as root; the server still binds 127.0.0.1 only
            log = self.log_path.open("ab")
            self.proc = subprocess.Popen(
                cmd, cwd=self.root_dir, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True
            )
            log.close()
            try:
                wait_for(self._ready, timeout=timeout, interval=0.3, what="the JupyterLab server")
                return self
            except DriverError as exc:
                errors.append(str(exc))
                _kill(self.proc)
        raise DriverError(f"JupyterLab did not start after {attempts} attempts: {errors}\n{self.log()[-3000:]}")

    def _ready(self) -> bool:
        if self.proc is not None and self.proc.poll() is not None:
            raise ProcessExited(f"jupyter lab exited with {self.proc.returncode}")
        with urllib.request.urlopen(self.url("api/status"), timeout=3) as resp:
            return resp.status == 200

    def log(self) -> str:
        try:
            return self.log_path.read_text(errors="replace")
        except OSError:
            return ""

    def stop(self) -> None:
        _kill(self.proc)

    def __enter__(self) -> JupyterLab:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


# ------------------------------------------------------------------ Chromium over CDP


class Chromium:
    """Headless Chromium with ``--remote-debugging-port``; one page target, spoken to over CDP."""

    def __init__(self, profile: Path) -> None:
        self.profile = profile
        self.proc: subprocess.Popen[bytes] | None = None
        self.ws: Any = None
        self.next_id = 0
        self.events: list[dict[str, Any]] = []
        self.log_path = profile.parent / "chromium.log"

    def start(self, *, attempts: int = 3, timeout: float = 30) -> Chromium:
        import websocket  # websocket-client, a dependency of jupyter_server

        errors = []
        for attempt in range(attempts):
            profile = self.profile.with_name(f"{self.profile.name}-{attempt}")
            profile.mkdir(parents=True, exist_ok=True)
            active = profile / "DevToolsActivePort"
            log = self.log_path.open("ab")
            self.proc = subprocess.Popen(
                [CHROMIUM, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--remote-debugging-port=0", "about:blank"],
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
            log.close()
            try:
                port = wait_for(
                    lambda: active.exists() and active.read_text().split("\n", 1)[0].strip(),  # noqa: B023
                    timeout=timeout,
                    what="Chromium's DevTools port",
                )
                targets = wait_for(
                    lambda: [t for t in self._json(port, "json") if t.get("type") == "page"],  # noqa: B023
                    timeout=timeout,
                    what="a page target",
                )
                self.ws = websocket.create_connection(
                    targets[0]["webSocketDebuggerUrl"], timeout=timeout, suppress_origin=True
                )
                for domain in ("Page", "Runtime"):
                    self.send(f"{domain}.enable")
                return self
            except (DriverError, OSError, websocket.WebSocketException) as exc:
                errors.append(str(exc))
                self.stop()
        raise DriverError(f"Chromium did not start after {attempts} attempts: {errors}")

    @staticmethod
    def _json(port: str, path: str) -> Any:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/{path}", timeout=3) as resp:
            return json.load(resp)

    def send(self, method: str, params: dict[str, Any] | None = None, *, timeout: float = 30) -> dict[str, Any]:
        """One CDP command; events that arrive meanwhile are kept in ``events``."""
        self.next_id += 1
        msg_id = self.next_id
        self.ws.send(json.dumps({"id": msg_id, "method": method, "params": params or {}}))
        deadline = time.monotonic() + timeout
        while True:
            self.ws.settimeout(max(deadline - time.monotonic(), 0.1))
            reply = json.loads(self.ws.recv())
            if reply.get("id") == msg_id:
                if "error" in reply:
                    raise DriverError(f"{method}: {reply['error']}")
                return reply.get("result", {})
            if "method" in reply:
                self.events.append(reply)
            if time.monotonic() > deadline:
                raise DriverError(f"{method}: no reply in {timeout}s")

    def evaluate(self, expression: str, *, timeout: float = 30) -> Any:
        """Evaluate JS in the page (promises awaited) and return its JSON value."""
        result = self.send(
            "Runtime.evaluate",
            {"expression": expression, "awaitPromise": True, "returnByValue": True, "timeout": timeout * 1000},
            timeout=timeout + 5,
        )
        if "exceptionDetails" in result:
            details = result["exceptionDetails"]
            text = details.get("exception", {}).get("description") or details.get("text")
            raise DriverError(f"page exception: {text}")
        return result.get("result", {}).get("value")

    def navigate(self, url: str) -> None:
        self.send("Page.navigate", {"url": url})

    def screenshot(self, path: Path) -> Path:
        data = self.send("Page.captureScreenshot", {"format": "png"}, timeout=60)["data"]
        path.write_bytes(base64.b64decode(data))
        return path

    def console_errors(self) -> list[str]:
        """Console errors and uncaught exceptions seen so far (needs a ``send`` to have drained them)."""
        out = []
        for event in self.events:
            params = event.get("params", {})
            if event["method"] == "Runtime.consoleAPICalled" and params.get("type") in ("error", "assert"):
                out.append(" ".join(str(a.get("value", a.get("description", ""))) for a in params.get("args", [])))
            elif event["method"] == "Runtime.exceptionThrown":
                details = params.get("exceptionDetails", {})
                out.append(details.get("exception", {}).get("description") or details.get("text", ""))
        return out

    def stop(self) -> None:
        if self.ws is not None:
            try:
                self.ws.close()
            except Exception:  # noqa: BLE001 - closing a dead socket
                pass
            self.ws = None
        _kill(self.proc)

    def __enter__(self) -> Chromium:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def have_jupyterlab(python: str = sys.executable) -> str | None:
    """None when JupyterLab, ipywidgets' lab extension, ipykernel and websocket-client import; else why not."""
    for module in ("jupyterlab", "jupyterlab_widgets", "ipykernel", "ipywidgets", "websocket"):
        try:
            __import__(module)
        except ImportError:
            return (
                f"{module} is not installed (pip install 'cc_analytics[notebooks]'); widgets not checked in JupyterLab"
            )
    return None


__all__ = ["CHROMIUM", "Chromium", "DriverError", "JupyterLab", "free_port", "have_jupyterlab", "wait_for"]
