"""nDCG with unjudged documents: bootstrapped nDCG (``BootNDCG``) and the comparable naive upper bound
(``NDCGUpper``). Definitions; the kernels are in :mod:`ir_incomplete.kernels.ndcg`.

How these sit next to the measures that ``ir_measures`` already has (all at cut-off k, linear gain,
the same ideal DCG from the qrels):

==================================  ==========================================================
``nDCG@k``                          naive **lower** bound: unjudged documents count as grade 0
``nDCG(judged_only=True)@k``        condensed list (Sakai 2007): unjudged documents removed from
                                    the whole ranking, then cut at k (trec_eval ``-J``)
``NDCGUpper@k``                     naive **upper** bound, comparable (greedy, ideal DCG unchanged)
``BootNDCG@k``                      bootstrapped estimate (most likely value of b replicates)
``BootNDCG(stat=p95)@k``            a percentile of the replicates: the upper end of the range
                                    [naive lower, p95] of [FGPH]
==================================  ==========================================================

[FGPH]: Fröbe, Gienapp, Potthast & Hagen, "Bootstrapped nDCG estimation in the presence of unjudged
documents", ECIR 2023; their code is github.com/webis-de/ECIR-23 (the "reference code" below).
"""

from __future__ import annotations

import hashlib
import re
from typing import TYPE_CHECKING, Any, NamedTuple

import numpy as np
from ir_measures.measures import ParamInfo

from ir_incomplete._progress import advance
from ir_incomplete.data import POOLED_UNJUDGED
from ir_incomplete.kernels import bootstrap as completion_kernels
from ir_incomplete.kernels import ndcg as kernels
from ir_incomplete.measures._completion import (
    PREDICTIONS_PARAM,
    check_predictions_param,
    completion_setup,
    grade_priors,
    levels_of,
    modelled_levels,
)
from ir_incomplete.measures.base import IncompleteMeasure, Param
from ir_incomplete.predictions import DEFAULT_ALPHA, DEFAULT_MIN_COUNT

__all__ = [
    "BootstrappedNDCG",
    "NaiveUpperNDCG",
    "BootNDCG",
    "NDCGUpper",
    "BootstrapMetric",
    "StatParam",
    "canonical_stat",
    "topic_streams",
    "PRIORS",
    "ECIR23_LEVELS",
    "MAX_B",
    "MAX_REPLICATE_CELLS",
]

PRIORS = ("pool+run", "pool", "run", "predicted")
ORDERS = ("rank", "docid")
POOL_SCOPES = ("topic", "collection")
#: grade levels the ECIR-23 code models (``probability_estimation.py``)
ECIR23_LEVELS = 4
#: what ``compat=ecir23`` changes in the defaults of the other parameters
_COMPAT_DEFAULTS = {"ecir23": {"order": "docid", "pool_scope": "collection"}}
#: numbers that summarise a bootstrap distribution in :class:`BootstrapMetric`
DETAIL_FIELDS = ("mode", "mean", "median", "p5", "p95", "naive_lower", "naive_upper")

#: the largest number of replicates ``BootNDCG`` accepts (time grows with b, memory does not)
MAX_B = 10_000_000
#: replicate values (rows × b) computed and summarised at once when only summaries are needed
ROW_BLOCK_CELLS = 1 << 22
#: the most replicate values returned in one array (:meth:`BootstrappedNDCG.replicates`,
#: :func:`ir_incomplete.bootstrap_ndcg`): 2^25 float64 values are 256 MiB
MAX_REPLICATE_CELLS = 1 << 25

_STAT_RE = re.compile(r"p(\d+(?:\.\d+)?)\Z")


def canonical_stat(value: Any) -> str | None:
    """The canonical form of a ``stat`` value (``'mode'``, ``'mean'``, ``'median'`` or ``'pNN'`` with
    0 ≤ NN ≤ 100, e.g. ``'p95'``, ``'p97.5'``; ``'p95.0'`` → ``'p95'``), or ``None`` when invalid."""
    if not isinstance(value, str):
        return None
    if value in ("mode", "mean", "median"):
        return value
    match = _STAT_RE.match(value)
    if not match:
        return None
    q = float(match.group(1))
    if not (0.0 <= q <= 100.0):
        return None
    return f"p{int(q)}" if q.is_integer() else f"p{q!r}"


class _StatChoices(tuple):
    """Example values of ``stat``; membership accepts every valid statistic (any percentile)."""

    def __contains__(self, value) -> bool:
        return canonical_stat(value) is not None


class StatParam(Param):
    """The ``stat`` parameter: ``mode`` | ``mean`` | ``median`` | ``pNN`` (a percentile, 0 ≤ NN ≤ 100)."""

    def __init__(self, default: str = "mode", desc: str = ""):
        super().__init__(
            str, default=default, desc=desc, choices=_StatChoices(("mode", "mean", "median", "p5", "p75", "p90", "p95"))
        )

    def describe_allowed(self) -> str:
        return (
            "mode, mean, median, or pNN: the NN-th percentile, 0 <= NN <= 100 (e.g. p95; quote decimals: stat='p97.5')"
        )

    def coerce(self, owner: str, name: str, value: Any) -> Any:
        canonical = canonical_stat(value)
        if canonical is None:
            raise ValueError(
                f"{owner}: invalid value {value!r} for parameter {name!r}; expected {self.describe_allowed()}"
            )
        return canonical


class BootstrapMetric(NamedTuple):
    """Per-query result of :class:`BootstrappedNDCG` (the ``ir_measures.CwlMetric`` pattern).

    ``value`` is the point estimate chosen by ``stat`` (what ``pt.Experiment`` and every aggregate
    use); the other fields describe the distribution of the b replicates: the most likely value, mean,
    median, 5th and 95th percentiles, and the naive lower (``nDCG@k``) and upper (``NDCGUpper@k``) bounds.
    """

    query_id: str
    measure: Any
    value: float
    mode: float
    mean: float
    median: float
    p5: float
    p95: float
    naive_lower: float
    naive_upper: float


CUTOFF_PARAM = Param(
    int, default=10, minimum=1, desc="cut-off k (default 10, as in the paper; always shown in the measure string)"
)
MIN_COUNT_PARAM = Param(
    int,
    default=DEFAULT_MIN_COUNT,
    minimum=0,
    desc="prior=predicted: judged docs of a query with a predicted grade needed to use that query's own "
    "confusion row (else the pooled, smoothed row)",
)
ALPHA_PARAM = Param(
    float,
    default=DEFAULT_ALPHA,
    minimum=0,
    min_inclusive=False,
    desc="prior=predicted: additive smoothing of the pooled confusion rows",
)
GAIN_PARAM = Param(
    str,
    default="linear",
    choices=kernels.GAINS,
    desc="gain of grade g: linear = g (trec_eval, ECIR code), exp = 2^g - 1 (Fröbe et al. 2023)",
)


class _CutoffAlwaysShown(IncompleteMeasure):
    """The cut-off has a default (10) but is always part of the canonical string (``BootNDCG@10``)."""

    EXTENSION_PARAMS = None
    NAME: str  # every concrete subclass names itself

    def _default(self, name: str) -> Any:
        return self.SUPPORTED_PARAMS[name].default

    def __getitem__(self, key):
        return self.params.get(key, self._default(key))

    def non_default_params(self) -> dict[str, Any]:
        return {k: v for k, v in self.params.items() if v != self._default(k)}

    def __repr__(self):
        from ir_incomplete.grammar import format_measure

        items = [(k, v) for k, v in self.non_default_params().items() if k != self.AT_PARAM]
        return format_measure(self.NAME, items, self.get(self.AT_PARAM))

    # -- shared per-row inputs -------------------------------------------------------------------------
    def _inputs(self, ranked, qrels, negative_is_judged: bool = False):
        """``(codes, unjudged, topic_counts, judged_counts, gains, idcg)`` at this measure's cut-off."""
        codes = ranked.truncated(self.get("cutoff"))
        if negative_is_judged:
            codes = np.where(codes == POOLED_UNJUDGED, 0, codes)
        unjudged = kernels.unjudged_mask(codes)
        topic_counts = qrels.grade_counts
        if negative_is_judged and qrels.n_unjudged.any():
            topic_counts = topic_counts.copy()
            topic_counts[:, 0] += qrels.n_unjudged
        n_grades = topic_counts.shape[1]
        judged = codes >= 0
        rows = np.nonzero(judged)[0]
        judged_counts = np.bincount(rows * n_grades + codes[judged], minlength=codes.shape[0] * n_grades).reshape(
            codes.shape[0], n_grades
        )
        gains: np.ndarray | kernels.RowGains
        gains = kernels.topic_gain_table(qrels.grade_counts, max(n_grades, ECIR23_LEVELS), self.get("gain"))
        idcg = ranked.per_topic(kernels.ideal_dcg(qrels.grade_counts, self.get("cutoff"), gains))
        if gains.ndim == 2:  # exp gain of grades > 960: one scaled table per topic, see topic_gain_table
            gains = kernels.RowGains(gains, ranked.topic_of_row)
        return codes, unjudged, topic_counts, judged_counts, gains, idcg

    @staticmethod
    def _upper(codes, unjudged, reservoir, gains, idcg):
        return kernels.ndcg(codes, idcg, gains, kernels.greedy_fill(unjudged, reservoir))


class NaiveUpperNDCG(_CutoffAlwaysShown):
    """Comparable naive upper bound of nDCG@k, ``NDCGUpper@k`` (Fröbe, Gienapp, Potthast & Hagen,
    "Bootstrapped nDCG estimation in the presence of unjudged documents", ECIR 2023, §3.3, as the
    authors' code computes it).

    The unjudged documents of the top k get the best grades that the judgments could still give them::

        reservoir   = multiset of the grades > 0 of judged documents NOT in the top k
        for each unjudged document of the top k, in rank order:
            grade   = largest grade left in the reservoir (0 once it is empty); remove it
        NDCGUpper@k = DCG@k(judged grades + assigned grades) / IDCG@k

    IDCG@k is the ideal DCG of the topic's judgments, unchanged, so the bound is comparable with nDCG@k
    and never exceeds 1 (the assigned grades come from other judged documents, without replacement).
    Judged documents retrieved below k stay in the reservoir.

    Conventions: ``DCG@k = Σ_{i≤k} gain(g_i)/log2(i+1)``, gain linear (``gain=exp``: 2^g − 1, computed
    without overflow for any grade: see :func:`~ir_incomplete.kernels.ndcg.topic_gain_table`); unjudged
    = unpooled (absent from the qrels) or pooled but unjudged (negative qrels grade, trec_eval; build
    the qrels with ``negative="zero"`` to treat such documents as judged nonrelevant); IDCG = 0 (no
    relevant judgment) gives 0; ties in score are broken by document id descending, scores compared in
    single precision (trec_eval 9). The cut-off defaults to 10 and always appears in the string.

    Companions: the naive lower bound is ``nDCG@k`` (unjudged = grade 0); the condensed list is
    ``nDCG(judged_only=True)@k``. The naive bounds do not guarantee to enclose the true value. The
    "RBP-inspired" upper bound (unjudged documents get the maximum grade and IDCG is recomputed) is not
    comparable across systems and is not offered.
    """

    __name__ = "NDCGUpper"
    NAME = "NDCGUpper"
    PRETTY_NAME = "nDCG naive upper bound"
    SHORT_DESC = (
        "Comparable naive upper bound of nDCG@k: unjudged top-k documents take the best "
        "remaining judged grades (Frobe et al. 2023)."
    )
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {"gain": GAIN_PARAM, "cutoff": CUTOFF_PARAM}

    def compute(self, ranked, qrels):
        codes, unjudged, topic_counts, judged_counts, gains, idcg = self._inputs(ranked, qrels)
        reservoir = ranked.per_topic(topic_counts) - judged_counts
        return self._upper(codes, unjudged, reservoir, gains, idcg)


class Replicated:
    """The machinery every bootstrapped measure shares (``BootNDCG`` and the measures of
    :mod:`ir_incomplete.measures.bootstrap`): replicates computed a few rows at a time, the value as a
    statistic of them, and per-row summaries. A subclass defines ``setup(ranked, qrels, predictions)``,
    ``_replicates(ranked, qrels, setup, rows)`` (``[len(rows) × b]``) and ``_summary_extras(setup)`` (the
    per-row columns that accompany the summaries)."""

    if TYPE_CHECKING:  # provided by the measure class the machinery is mixed into

        def get(self, name: str) -> Any: ...

    def __init__(self, **params):
        super().__init__(**params)
        check_predictions_param(self)  # predictions= only with prior=predicted

    def setup(self, ranked, qrels, predictions: Any = None) -> dict[str, Any]:
        raise NotImplementedError

    def _replicates(self, ranked, qrels, setup: dict[str, Any], rows: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def _summary_extras(self, setup: dict[str, Any]) -> dict[str, np.ndarray]:
        raise NotImplementedError

    # -- the distribution --------------------------------------------------------------------------------
    def replicates(self, ranked, qrels, _setup: dict | None = None, predictions: Any = None) -> np.ndarray:
        """``[rows × b]`` replicates, one row per row of ``ranked``.

        Refused with a ``ValueError`` when ``rows × b`` exceeds :data:`MAX_REPLICATE_CELLS` (256 MiB of
        values); :meth:`replicate_blocks` gives the same values a few rows at a time.
        """
        b = self.get("b")
        if ranked.n_rows * b > MAX_REPLICATE_CELLS:
            raise ValueError(
                f"{self!r}: {ranked.n_rows} rankings × b={b} replicates is more than {MAX_REPLICATE_CELLS} values "
                f"to return at once; use a smaller b or fewer runs/queries (values and summaries are computed "
                f"in blocks and need no such limit)"
            )
        setup = _setup if _setup is not None else self.setup(ranked, qrels, predictions)
        return self._replicates(ranked, qrels, setup, np.arange(ranked.n_rows))

    def replicate_blocks(
        self, ranked, qrels, _setup: dict | None = None, rows: np.ndarray | None = None, predictions: Any = None
    ):
        """Yield ``(row_indices, block)`` with ``block`` the ``[len(row_indices) × b]`` replicates of those
        rows of ``ranked`` (``rows``: which rows, default all), a few rows at a time: blocks hold about
        :data:`ROW_BLOCK_CELLS` values (at least one row), rows of a topic together. The values equal
        the corresponding rows of :meth:`replicates` bit for bit."""
        setup = _setup if _setup is not None else self.setup(ranked, qrels, predictions)
        rows = np.arange(ranked.n_rows) if rows is None else np.asarray(rows, dtype=np.intp)
        rows = rows[np.argsort(ranked.topic_of_row[rows], kind="stable")]
        step = max(1, ROW_BLOCK_CELLS // self.get("b"))
        for lo in range(0, len(rows), step):
            part = rows[lo : lo + step]
            yield part, self._replicates(ranked, qrels, setup, part)
            advance(len(part))  # a progress bar, if a caller shows one (rankings done)

    # -- values -----------------------------------------------------------------------------------------
    def compute(self, ranked, qrels, predictions: Any = None):
        setup = self.setup(ranked, qrels, predictions)
        out = np.zeros(ranked.n_rows, dtype=np.float64)
        for rows, block in self.replicate_blocks(ranked, qrels, setup):
            out[rows] = statistic(block, self.get("stat"))
        return out

    def compute_details(self, ranked, qrels, predictions: Any = None) -> dict[str, np.ndarray]:
        """``value`` and every summary per row (the fields of the measure's ``METRIC_TYPE``)."""
        setup = self.setup(ranked, qrels, predictions)
        stat = self.get("stat")
        percentiles = (5, 95) if not stat.startswith("p") else (5, 95, float(stat[1:]))
        out = self.summaries(ranked, qrels, percentiles, setup)
        out["value"] = out[stat]
        return out

    def summaries(
        self, ranked, qrels, percentiles=(5, 95), _setup: dict | None = None, predictions: Any = None
    ) -> dict[str, np.ndarray]:
        """:func:`summarize` of every row's replicates plus the measure's ``_summary_extras``, computed
        block by block (memory independent of b and of the number of rows)."""
        setup = _setup if _setup is not None else self.setup(ranked, qrels, predictions)
        out: dict[str, np.ndarray] = {}
        for rows, block in self.replicate_blocks(ranked, qrels, setup):
            for name, values in summarize(block, percentiles=percentiles).items():
                out.setdefault(name, np.zeros(ranked.n_rows, dtype=np.float64))[rows] = values
        if not out:
            out = {name: np.zeros(0) for name in summarize(np.zeros((0, 1)), percentiles=percentiles)}
        out.update(self._summary_extras(setup))
        return out


class BootstrappedNDCG(Replicated, _CutoffAlwaysShown):
    """Bootstrapped nDCG@k, ``BootNDCG@k`` (Fröbe, Gienapp, Potthast & Hagen, "Bootstrapped nDCG
    estimation in the presence of unjudged documents", ECIR 2023, §3 and Alg. 1; the authors' code is
    github.com/webis-de/ECIR-23).

    Each of ``b`` replicates gives every unjudged document of the top k a grade drawn from a prior π and
    taken, without replacement, from the judged documents outside the top k::

        reservoir[ℓ] = judged documents of grade ℓ that are not in the top k
        for each unjudged document of the top k (in rank order, or docid order with order=docid):
            ℓ* ~ π          (inverse CDF: u ~ U[0,1), ℓ* = min{ℓ : u < Σ_{j≤ℓ} π(j)})
            grade = max{ℓ ≤ ℓ* : reservoir[ℓ] > 0}, or 0 when there is none; reservoir[grade] −= 1
        replicate = DCG@k(judged grades + sampled grades) / IDCG@k

    The value is a statistic of the replicates (``stat``): ``mode`` (default) is the reference code's
    "most likely" value — a 20-bin histogram of the min-max normalised replicates, all fullest bins
    kept, repeated once on what is left, the largest remaining value returned;
    ``mean``; ``median``; ``pNN`` the NN-th percentile with linear interpolation (numpy's default).
    The paper reports the range [naive lower, p75/p90/p95]. Every replicate lies between the naive lower
    bound ``nDCG@k`` and the naive upper bound ``NDCGUpper@k`` (≤ 1), and IDCG@k is that of the
    judgments, unchanged.

    Priors over the grade levels ``0 .. L−1`` (each component floored at 1e−6, then renormalised):

    * ``run``: the grades of the judged documents in the run's top k;
    * ``pool``: the grades of all judged documents of the topic (``pool_scope=topic``, the paper) or of
      every topic in the qrels (``pool_scope=collection``, what the reference code computes — then a
      topic's value depends on which other topics are evaluated with it);
    * ``pool+run`` (default): the average of the two floored distributions.

    * ``predicted``: predicted grades of an automatic labeler, calibrated on the judged documents
      (:mod:`ir_incomplete.predictions`; parameters ``min_count``, ``alpha``; pass them as
      ``evaluate(..., predictions=...)``). Then a replicate *completes the judgments* instead of drawing
      from the reservoir: every predicted unjudged document of the topic (retrieved or not) draws a grade
      from its calibrated prior, unjudged top-k documents without a prediction from the pool+run prior,
      and the replicate is nDCG@k with the ideal DCG of the human plus drawn grades
      (:class:`ir_incomplete.measures.bootstrap.BootstrapMeasure` describes that sampler and its random
      streams). The calibrated prior is used without the 1e−6 floor (a grade it gives probability 0 is
      never drawn; see there). Not combinable with ``compat=ecir23``.

    Levels: 0 .. the highest judged grade of the topic (``pool_scope=collection``: of the qrels; the
    reference code models 0..3). When no top-k document is judged the run prior is undefined and the
    pool prior is used instead. The reference code's "P" and "R" labels are swapped; the names here
    follow the paper's formulas.

    Parameters: ``prior`` (pool+run | pool | run), ``b`` replicates (1000; at most :data:`MAX_B`,
    10 000 000, refused above; memory does not grow with b, time does), ``stat`` (above), ``seed``
    (42; ``seed=none`` draws fresh entropy, so results are then **not reproducible**), ``gain``
    (linear | exp: 2^g − 1, the paper's equation and its Table 1; grades above 960 are computed with the
    topic's gains scaled by a power of two, which cancels in the ratio, so there is no overflow),
    ``order`` (rank | docid: the order in which unjudged documents are processed; it matters only when
    the reservoir runs out — rank order is the default so that a document's id never changes its
    sampled grade; the paper does not say),
    ``pool_scope`` (topic | collection) and ``compat=ecir23``. The cut-off defaults to 10 (the paper's
    k) and always appears in the string: ``BootNDCG@10``.

    ``compat=ecir23`` reproduces the published code: collection-wide pool prior and docid order (these
    two become the defaults; an explicit ``order=``/``pool_scope=`` still overrides them), grade levels
    0..3 only (grade 4 is never sampled), the prior δ₀ (every draw grade 0) for every kind when all
    top-k documents are unjudged, negative qrels grades as judged grade 0, linear gain (the default).
    Its experiments ran with ``seed=None``, so its numbers are not reproducible bit for bit.

    Its intervals (percentiles of the replicates: ``evaluate(..., interval=0.9)``, ``--interval``) are the
    spread of nDCG *under the prior*, not error bars for the complete-judgment value: on TREC-COVID round
    1, 90 % intervals of ``BootNDCG@10`` contained it for 12 % of the runs with the pool+run prior and 27 %
    with ``prior=predicted`` (the manual, docs/measured.rst). For error bars, judge a
    probability sample: :func:`ir_incomplete.judging.sample` and :func:`ir_incomplete.estimate`
    (``ir_incomplete sample`` / ``estimate``).

    Random numbers: with seed s, the uniforms of topic t come from
    ``numpy.random.default_rng(SeedSequence(s, spawn_key=blake2b(t)))``, drawn as a
    ``[rank × replicate]`` array, and the unjudged document at rank i uses row i. Rankings of the same
    topic share their uniforms (common random numbers: comparisons between systems carry less Monte
    Carlo noise). With ``pool_scope=topic`` a ranking's replicates depend only on itself, its topic's
    judgments and the parameters — never on which runs or topics are evaluated with it, on run names,
    or on batching (``pt.Experiment(batch_size=...)`` gives the same values). The draws of rank i do
    not depend on k, so ``@5`` and ``@10`` share the draws of their first five ranks.

    Conventions: unjudged = unpooled or pooled but unjudged (negative qrels grade, trec_eval);
    gain linear by default (trec_eval and the reference code); IDCG = 0 gives 0 for every replicate;
    replicates are clipped at 1 (only rounding can exceed it); a topic without unjudged top-k
    documents has b identical replicates (its nDCG@k); ties in score are broken by document id
    descending, scores compared in single precision (trec_eval 9). Per-query results from the
    ``ir_incomplete`` provider are :class:`BootstrapMetric` records carrying the interval.
    """

    __name__ = "BootNDCG"
    NAME = "BootNDCG"
    PRETTY_NAME = "Bootstrapped nDCG"
    SHORT_DESC = (
        "nDCG@k with unjudged top-k grades bootstrapped from pool/run priors (Frobe et al. "
        "2023); value = most likely replicate or a percentile."
    )
    EXAMPLE = "BootNDCG(prior=pool,stat=p95)@10"
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        "prior": Param(
            str,
            default="pool+run",
            choices=PRIORS,
            desc="prior over grades: run (judged top-k docs), pool (all judged docs), their average, or "
            "predicted (calibrated predicted grades, given as predictions=)",
        ),
        "b": Param(
            int, default=1000, minimum=1, maximum=MAX_B, desc=f"number of bootstrap replicates (at most {MAX_B})"
        ),
        "stat": StatParam(desc="statistic of the replicates that is the value"),
        "seed": Param(
            int,
            default=42,
            minimum=0,
            allow_none=True,
            desc="random seed; none draws fresh entropy (results then not reproducible)",
        ),
        "gain": GAIN_PARAM,
        "order": Param(
            str, default="rank", choices=ORDERS, desc="processing order of unjudged docs (docid under compat=ecir23)"
        ),
        "pool_scope": Param(
            str,
            default="topic",
            choices=POOL_SCOPES,
            desc="pool prior from the topic's judgments or the whole qrels (collection under compat=ecir23)",
        ),
        "compat": Param(
            str,
            default=None,
            choices=tuple(_COMPAT_DEFAULTS),
            allow_none=True,
            desc="ecir23: behave like the published ECIR-23 code",
        ),
        "min_count": MIN_COUNT_PARAM,
        "alpha": ALPHA_PARAM,
        "predictions": PREDICTIONS_PARAM,
        "cutoff": CUTOFF_PARAM,
    }
    METRIC_TYPE = BootstrapMetric

    def _default(self, name: str) -> Any:
        compat = self.params.get("compat")
        if compat is not None and name in _COMPAT_DEFAULTS[compat]:
            return _COMPAT_DEFAULTS[compat][name]
        return self.SUPPORTED_PARAMS[name].default

    def _replicates(self, ranked, qrels, setup: dict[str, Any], rows: np.ndarray) -> np.ndarray:
        completion = setup.get("completion")
        if completion is not None:  # prior=predicted: the sampler that completes the judgments
            gains = setup["gains"]
            cutoff = self.get("cutoff")
            return completion_kernels.bootstrap_replicates(
                completion,
                rows,
                lambda grades, counts: completion_kernels.ndcg(grades, counts, gains, cutoff),
                topic_streams(qrels.topic_ids, self.get("seed"), self.get("b")),
                topic_streams(qrels.topic_ids, self.get("seed"), self.get("b"), stream=1),
                self.get("b"),
            )

        def take(name):
            value = setup[name]
            return None if value is None else value[rows]

        return kernels.bootstrap_replicates(
            take("unjudged"),
            take("sequence"),
            take("base_dcg"),
            take("idcg"),
            take("prior"),
            take("reservoir"),
            setup["gains"] if setup["gains"].ndim == 1 else setup["gains"][rows],
            ranked.topic_of_row[rows],
            topic_streams(qrels.topic_ids, self.get("seed"), self.get("b")),
            self.get("b"),
        )

    def setup(self, ranked, qrels, predictions: Any = None) -> dict[str, Any]:
        """Per-row inputs of the sampler: unjudged cells, processing order, judged DCG, ideal DCG,
        prior ``[rows × levels]``, reservoir ``[rows × levels]``, gains, and the full-grade reservoir.
        With ``prior=predicted`` also the inputs of the completing sampler (``"completion"``)."""
        compat = self.get("compat") == "ecir23"
        kind = self.get("prior")
        if kind == "predicted" and compat:
            raise ValueError(
                f"{self!r}: prior=predicted cannot be combined with compat=ecir23 (the published code has "
                f"no predicted grades); drop compat or choose another prior"
            )
        codes, unjudged, topic_counts, judged_counts, gains, idcg = self._inputs(
            ranked, qrels, negative_is_judged=compat
        )
        n_grades = topic_counts.shape[1]
        full_reservoir = ranked.per_topic(topic_counts) - judged_counts
        levels = ECIR23_LEVELS if compat else n_grades
        reservoir = _levels(full_reservoir, levels)
        collection = self.get("pool_scope") == "collection"
        modelled_topic = modelled_levels(topic_counts, levels, compat or collection)
        prior, n_judged = grade_priors(
            ranked,
            topic_counts,
            judged_counts,
            levels,
            "pool+run" if kind == "predicted" else kind,
            collection,
            modelled_topic,
        )
        if compat:  # the reference code: δ0 when every top-k document is unjudged
            none_judged = (n_judged == 0) & unjudged.any(axis=1)
            prior = np.where(none_judged[:, None], np.eye(levels)[0][None, :], prior)

        sequence = _docid_sequence(ranked, unjudged) if self.get("order") == "docid" else None
        out = {
            "codes": codes,
            "unjudged": unjudged,
            "sequence": sequence,
            "base_dcg": kernels.dcg(codes, gains),
            "idcg": idcg,
            "prior": prior,
            "reservoir": reservoir,
            "full_reservoir": full_reservoir,
            "gains": gains,
            "completion": None,
        }
        if kind == "predicted":
            if gains.ndim != 1:
                raise ValueError(
                    f"{self!r}: prior=predicted supports exponential gain up to grade "
                    f"{kernels.EXP_GAIN_SCALE_GRADE} only; use gain=linear"
                )
            out["completion"] = completion_setup(
                self,
                ranked,
                qrels,
                self.get("cutoff"),
                kind,
                collection,
                predictions,
                self.get("min_count"),
                self.get("alpha"),
            )
        return out

    def _summary_extras(self, setup: dict[str, Any]) -> dict[str, np.ndarray]:
        """The naive bounds per row: unjudged top-k documents as nonrelevant and as the best grades left."""
        return {
            "naive_lower": kernels.ndcg(setup["codes"], setup["idcg"], setup["gains"]),
            "naive_upper": self._upper(
                setup["codes"], setup["unjudged"], setup["full_reservoir"], setup["gains"], setup["idcg"]
            ),
        }


_levels = levels_of


def _docid_sequence(ranked, unjudged: np.ndarray) -> np.ndarray:
    """A ``[rows × k]`` key whose ascending order is the code-point order of the unjudged documents' ids
    (Python ``sorted``, as in the reference code)."""
    if ranked.doc_ids is None or ranked.row_starts is None:
        raise ValueError(
            "BootNDCG(order=docid) needs the document ids of the rankings; these "
            "RankedLists were built without them (use ir_incomplete.data.rank_runs)"
        )
    row, col = np.nonzero(unjudged)
    sequence = np.zeros(unjudged.shape, dtype=np.int64)
    if len(row):
        ids = ranked.doc_ids[ranked.row_starts[row] + col]
        _, rank = np.unique(ids, return_inverse=True)
        sequence[row, col] = rank.reshape(-1)
    return sequence


def statistic(replicates: np.ndarray, stat: str, presorted: bool = False) -> np.ndarray:
    """One statistic (``mode``, ``mean``, ``median`` or ``pNN``) of ``[rows × b]`` replicates per row."""
    canonical = canonical_stat(stat)
    if canonical is None:
        raise ValueError(f"invalid stat {stat!r}; expected {StatParam().describe_allowed()}")
    if replicates.shape[0] == 0:
        return np.zeros(0, dtype=np.float64)
    if canonical == "mean":
        return replicates.mean(axis=1)
    ordered = replicates if presorted else np.sort(replicates, axis=1)
    if canonical == "mode":
        return kernels.most_likely(ordered, presorted=True)
    if canonical == "median":
        return kernels.median(ordered, presorted=True)
    return kernels.percentile(ordered, float(canonical[1:]), presorted=True)


def summarize(replicates: np.ndarray, percentiles=(5, 95)) -> dict[str, np.ndarray]:
    """``mode``, ``mean``, ``median`` and ``pNN`` for each percentile, per row of the replicates
    (rows sorted once)."""
    names = []
    for q in percentiles:
        name = canonical_stat(f"p{float(q)!r}")
        if name is None:
            raise ValueError(f"percentile {q!r} is outside 0..100")
        names.append(name)
    ordered = np.sort(replicates, axis=1)
    out = {"mean": statistic(replicates, "mean")}
    for name in ("mode", "median", *names):
        out[name] = statistic(ordered, name, presorted=True)
    return out


def topic_streams(topic_ids, seed: int | None, b: int, stream: int = 0):
    """``draws(topic_code, n_positions) -> [n_positions × b]`` uniforms of one topic;
    ``draws(topic_code, n_positions, first, stop)`` returns only the columns ``first .. stop-1`` of that
    array (the same numbers, without the memory of the whole array).

    Topic ``t`` (its id text) gets ``default_rng(SeedSequence(seed, spawn_key=key(t)))`` with ``key``
    the four 32-bit words of ``blake2b(t, digest_size=16)``; row i of its ``[rank × replicate]`` array
    serves the document at rank i + 1. ``seed=None`` draws the entropy once per call (fresh, not
    reproducible). ``stream > 0`` gives another family of streams, for the same topics and seed, whose
    spawn key has ``stream`` appended (the predicted documents of ``prior=predicted`` use stream 1, one
    row per predicted unjudged document); stream 0 is the one described above.
    """
    entropy = np.random.SeedSequence().entropy if seed is None else int(seed)
    extra = (int(stream),) if stream else ()

    def draws(topic_code, n_positions: int, first: int = 0, stop: int | None = None) -> np.ndarray:
        digest = hashlib.blake2b(str(topic_ids[int(topic_code)]).encode("utf-8"), digest_size=16).digest()
        key = tuple(int.from_bytes(digest[i : i + 4], "little") for i in range(0, 16, 4)) + extra
        bits = np.random.PCG64(np.random.SeedSequence(entropy, spawn_key=key))  # what default_rng uses
        rng = np.random.Generator(bits)
        stop = int(b) if stop is None else int(stop)
        if first == 0 and stop == b:
            return rng.random((int(n_positions), int(b)))
        # columns first .. stop-1 of the [n_positions × b] array: each double is one 64-bit draw, so
        # skipping ahead in the stream gives the same numbers as drawing the whole array
        out = np.empty((int(n_positions), stop - int(first)), dtype=np.float64)
        bits.advance(int(first))
        for i in range(int(n_positions)):
            if i:
                bits.advance(int(b) - out.shape[1])
            rng.random(out=out[i])
        return out

    return draws


BootNDCG = BootstrappedNDCG()
NDCGUpper = NaiveUpperNDCG()
