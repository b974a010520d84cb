"""A robustness study on a real ``dask.distributed`` cluster of worker processes (which hash strings
differently from this process) gives the same numbers, bit for bit, as the same study run here."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from ir_incomplete.robustness import robustness_study

distributed = pytest.importorskip("dask.distributed")


def _collection():
    rng = np.random.default_rng(21)
    qrels_rows, runs = [], {}
    for t in range(8):
        for d in range(50):
            qrels_rows.append((f"t{t}", f"doc{d:02d}", int(rng.choice([-1, 0, 0, 0, 1, 2]))))
    for r in range(6):
        rows = []
        for t in range(8):
            for rank, d in enumerate(rng.permutation(70)[:50]):
                rows.append((f"t{t}", f"doc{d:02d}", float(100 - rank - (r * d) % 3)))  # with score ties
        runs[f"run{r}"] = pd.DataFrame(rows, columns=["query_id", "doc_id", "score"])
    return runs, pd.DataFrame(qrels_rows, columns=["query_id", "doc_id", "relevance"])


def test_local_cluster_of_processes_matches_one_process():
    runs, qrels = _collection()
    kwargs = dict(levels=[0.2, 0.5], repeats=3, seed=9, reference="AP", progress=False)
    measures = ["AP", "infAP", "Bpref", "indAP"]
    local = robustness_study(runs, qrels, measures, n_jobs=1, **kwargs)
    with (
        distributed.LocalCluster(n_workers=2, processes=True, threads_per_worker=1, dashboard_address=None) as cluster,
        distributed.Client(cluster) as client,
    ):
        remote = robustness_study(runs, qrels, measures, client=client, **kwargs)
    pd.testing.assert_frame_equal(local.stats, remote.stats, check_exact=True)
    pd.testing.assert_frame_equal(local.scores, remote.scores, check_exact=True)
    pd.testing.assert_frame_equal(local.reference, remote.reference, check_exact=True)
    assert local.stats["tau"].notna().all()
