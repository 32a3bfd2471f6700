"""The batch report in a real browser: headless Chromium, network blocked, every chart drawn.

Skipped (with the reason) when ``/usr/bin/chromium`` is absent; ``.ci/run`` installs Debian's
``chromium`` package so CI runs it.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.browser.chromium import CHROMIUM, HEADLESS_FLAGS

FLAGS = (
    *HEADLESS_FLAGS,
    "--host-resolver-rules=MAP * ~NOTFOUND",
    "--proxy-server=127.0.0.1:9",
    "--enable-logging=stderr",
    "--v=0",
)
# Injected before the report's own scripts: console errors, warnings and uncaught errors
# are written into the page, where --dump-dom can read them.
PROBE = """<script>
(() => {
  const seen = [];
  const keep = (kind) => (...args) => seen.push(kind + ": " + args.map(String).join(" "));
  console.error = keep("error");
  console.warn = keep("warn");
  window.addEventListener("error", (e) => seen.push("uncaught: " + e.message));
  window.addEventListener("unhandledrejection", (e) => seen.push("rejection: " + e.reason));
  window.addEventListener("load", () => setTimeout(() => {
    const out = document.createElement("pre");
    out.id = "probe-log";
    out.textContent = JSON.stringify(seen);
    document.body.appendChild(out);
  }, 500));
})();
</script>"""

pytestmark = pytest.mark.skipif(
    not Path(CHROMIUM).exists(),
    reason="chromium is not installed (apt-get install -y chromium); the report is not checked in a browser",
)


@pytest.fixture(scope="module")
def report_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from cc_analytics.report import load, write_report

    out = tmp_path_factory.mktemp("report") / "report"
    write_report(load(samples=True), out)
    return out


def dump_dom(page: Path, profile: Path) -> tuple[str, str]:
    result = subprocess.run(
        [CHROMIUM, *FLAGS, f"--user-data-dir={profile}", "--virtual-time-budget=15000", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    return result.stdout, result.stderr


def test_every_chart_renders_offline_without_errors(report_dir: Path, tmp_path: Path) -> None:
    from cc_analytics.report import load, report_charts

    source = (report_dir / "report.html").read_text(encoding="utf-8")
    assert "<script src=" not in source and "https://cdn" not in source
    page = tmp_path / "report.html"
    page.write_text(source.replace("<head>", "<head>" + PROBE, 1), encoding="utf-8")
    dom, log = dump_dom(page, tmp_path / "profile")

    chart_ids = [chart_id for chart_id, _, _ in report_charts(load(samples=True))]
    assert len(chart_ids) >= 7
    for chart_id in chart_ids:
        match = re.search(rf"<div[^>]*id=\"{chart_id}\"[^>]*>(.*?)</section>", dom, re.S)
        assert match, f"chart container {chart_id!r} missing"
        body = match.group(1)
        assert re.search(r'class="[^"]*\bmarks\b', body), f"chart {chart_id!r} drew no Vega marks"
        assert "chart failed to render" not in body

    probe = re.search(r'<pre id="probe-log">(.*?)</pre>', dom, re.S)
    assert probe, "the page's load handler never ran"
    assert probe.group(1) == "[]", f"console errors or warnings: {probe.group(1)}"
    network = [line for line in log.splitlines() if "ERR_NAME_NOT_RESOLVED" in line and "CONSOLE" in line]
    assert not network, f"the page tried to reach the network: {network}"
