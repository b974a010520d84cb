"""Every example listed in the manual (docs/measured.rst, "Examples"; the README's quick start until the
README became a five-minute read) runs its quick path (``--quick``: a subset of the data, no figure) and
prints its result; examples whose data in ``../shared/data`` is absent are skipped."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT.parent / "shared" / "data"

#: example → (data folder it needs or None, arguments of its quick path, a pattern its output holds)
QUICK = {
    "quickstart.py": (None, [], r"infAP \(incomplete\) +dense > .*Kendall tau"),
    "bootstrap_covid.py": ("trec-covid-round1", ["--quick"], r"BootNDCG pool\+run +BootNDCG@10"),
    "covid_round1.py": ("trec-covid-round1", ["--quick"], r"BootAP@10 "),
    "robust04_sampling.py": ("robust04", ["--quick", "--no-progress"], r"infAP +5%"),
    "depth_pooling.py": ("trec-covid-round1", ["--quick"], r"tau:\n"),
    "leave_one_group_out.py": ("trec-covid-round1", ["--quick"], r"`BootNDCG@10`"),
    "judging_covid.py": ("trec-covid-round1", ["--quick"], r"bandit \(MM\): "),
    "predicted_labels_covid.py": ("trec-covid-round1", ["--quick"], r"PPI, i\.i\.d\. topics"),
    "design_evidence.py": ("trec-covid-round1", ["--quick"], r"\| COVID 2,000 \| none \| AP@100 \| 3 \| 0\.\d\d / "),
    "side_by_side.py": (
        "trec-covid-round1",
        ["--quick"],
        r"\| COVID 2,000 \| nDCG@10 \| none \| hybrid 0\.5 \| 3 \| 0\.\d{3} ",
    ),
}


def test_every_listed_example_has_a_quick_path():
    page = (ROOT / "docs" / "measured.rst").read_text(encoding="utf-8")
    start = page.index("\nExamples\n--------\n")
    code = page.index(".. code-block:: bash\n", start)
    block = page[code : page.index("\n\n", page.index("\n   ", code))]
    listed = re.findall(r"python examples/(\w+\.py)", block)
    assert listed and sorted(listed) == sorted(QUICK)


@pytest.mark.parametrize("example", QUICK)
def test_quick_path_runs(example, tmp_path):
    folder, args, expected = QUICK[example]
    if folder is not None and not (DATA / folder).is_dir():
        pytest.skip(f"../shared/data/{folder} is absent")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    done = subprocess.run(
        [sys.executable, str(ROOT / "examples" / example), *args],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert re.search(expected, done.stdout), done.stdout[-2000:]
    assert list(tmp_path.iterdir()) == []  # the quick path writes no figure
