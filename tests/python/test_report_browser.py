"""`aiccsim report` pages in a real browser: headless Chromium loads each page from disk, with no
network, and every plot on it must have been decoded and laid out; a screenshot of the page
must show more than a blank page.

Chromium is Debian's package (`make chromium`). `make test` passes its path in AICCSIM_CHROMIUM,
so there a missing browser fails the test; elsewhere the test is skipped without one.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from matplotlib import image
from test_report import SMALL_PLOTS, plots

import aiccsim

from conftest import SMALL

# Appended to a copy of the page: once everything has loaded, it lists each image's state in
# an element that --dump-dom then prints.
CHECK = """<script>
window.addEventListener("load", () => {
  const images = [...document.images].map(i => {
    const box = i.getBoundingClientRect();
    return {alt: i.alt, complete: i.complete, width: i.naturalWidth, height: i.naturalHeight,
            shown: box.width * box.height};
  });
  const out = document.createElement("pre");
  out.id = "aiccsim-check";
  out.textContent = JSON.stringify(images);
  document.body.appendChild(out);
});
</script>"""


@pytest.fixture(scope="module")
def chromium() -> str:
    path = os.environ.get("AICCSIM_CHROMIUM") or shutil.which("chromium")
    if "AICCSIM_CHROMIUM" in os.environ:
        assert path and Path(path).is_file(), "AICCSIM_CHROMIUM is set but names no browser: run `make chromium`"
    if not path:
        pytest.skip("no chromium: `make chromium` installs it")
    return path


def headless(chromium: str, profile: Path, *args: str) -> subprocess.CompletedProcess[str]:
    # As root (CI) Chromium runs only without its sandbox; a profile of its own per test, so
    # that browsers started at the same time do not share one.
    command = [chromium, "--headless", "--no-sandbox", "--disable-gpu", f"--user-data-dir={profile}", *args]
    done = subprocess.run(command, capture_output=True, text=True, timeout=180)
    assert done.returncode == 0, done.stderr
    return done


def images_as_shown(chromium: str, page: Path, tmp_path: Path) -> list[dict]:
    """What Chromium made of each <img> of the page, once loaded."""
    probe = tmp_path / f"{page.stem}-check.html"
    probe.write_text(page.read_text().replace("</body>", CHECK + "</body>"))
    dom = headless(chromium, tmp_path / "profile", "--virtual-time-budget=20000", "--dump-dom", probe.as_uri()).stdout
    found = re.search(r'<pre id="aiccsim-check">(.*?)</pre>', dom, re.S)
    assert found, f"the page did not finish loading: {dom[-500:]}"
    return json.loads(found.group(1).replace("&amp;", "&").replace("&lt;", "<").replace("&gt;", ">"))


def assert_every_plot_shown(chromium: str, page: Path, expected: list[str], tmp_path: Path) -> None:
    assert plots(page.read_text()) == expected
    shown = images_as_shown(chromium, page, tmp_path)
    assert [i["alt"] for i in shown] == expected
    for i in shown:
        assert i["complete"] and i["width"] > 0 and i["height"] > 0 and i["shown"] > 0, i


def test_every_plot_of_a_run_page_renders(chromium: str, tmp_path: Path) -> None:
    run = tmp_path / "incast"
    r = aiccsim.run(SMALL)
    assert r.summary["pause_frames"] > 0 and r.queues is not None
    r.write(run)
    [page] = aiccsim.report(run)
    assert_every_plot_shown(chromium, page, SMALL_PLOTS, tmp_path)

    shot = tmp_path / "report.png"
    headless(
        chromium,
        tmp_path / "profile",
        "--hide-scrollbars",
        "--window-size=1000,2400",
        f"--screenshot={shot}",
        page.as_uri(),
    )
    pixels = image.imread(shot)
    assert pixels.shape[:2] == (2400, 1000)
    # Not a blank page: text and plots cover some of it, and the plots' first colour (C0,
    # #1f77b4: a line or bar of every plot) shows.
    rgb = pixels[:, :, :3]
    assert np.mean(rgb.min(axis=2) < 0.9) > 0.01
    assert np.sum(np.all(np.abs(rgb - [0x1F / 255, 0x77 / 255, 0xB4 / 255]) < 0.05, axis=2)) > 2000


def test_every_plot_of_an_experiment_index_renders(chromium: str, experiment_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "exp"
    shutil.copytree(experiment_dir, out)
    index = aiccsim.report(out)[0]
    expected = [
        "The experiment's plot (plot.svg)",
        "FCT CDF",
        "Busiest switch queue",
        "PFC pauses",
    ]
    assert_every_plot_shown(chromium, index, expected, tmp_path)


def test_the_check_sees_a_broken_image(chromium: str, tmp_path: Path) -> None:
    """The check above can fail: an image that does not decode has no width."""
    page = tmp_path / "broken.html"
    page.write_text('<html><body><img class="plot" alt="broken" src="data:image/png;base64,AAAA"></body></html>')
    [broken] = images_as_shown(chromium, page, tmp_path)
    assert broken["complete"] and broken["width"] == 0
