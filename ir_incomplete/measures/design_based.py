"""Design-based estimates by name: ``StatAP@k``, ``StatNDCG@k``, ``StatP@k``, ``StatRBP(p=0.8)@k`` and
``StatR`` (definitions; the estimators are in :mod:`ir_incomplete.estimation` and
:mod:`ir_incomplete.kernels.design`).

Each measure names a *design* (``design='design.tsv'``: the probability sample of judgments that
:func:`ir_incomplete.judging.sample` drew and :func:`ir_incomplete.judging.write_design` wrote); the
judgments are the qrels given to the evaluation, which must grade every pair of the design. The value of
a (run, query) is the design-based estimate of the measure that complete judgments of the design's
universe (the top ``depth`` of the runs the design was drawn from, plus the pairs judged already: the
design's certainty pairs, so every known relevant document counts in R) would give, from the sampled
pairs and their inclusion probabilities π. With ``predictions='FILE'`` automatic labels enter as a
control variate (``control``), never as judgments.

The control variate defaults to ``none`` (``labels`` with ``predictions=``), so that every front door,
``ir_measures`` one run at a time included, gives the same number: ``StatAP(design=...)@k`` equals
``estimate(..., control="none")``, not :func:`ir_incomplete.estimate`'s own default ``control="auto"``
(the fitted relevance model), which gives a (nearly) unbiased estimate of the same quantity with
another value and usually a narrower interval; ``StatAP(design=...,control=model)@k`` gives that one.

:func:`ir_incomplete.evaluate`, the ``ir_incomplete`` command line and :func:`ir_incomplete.compare` see
every run at once and call :func:`ir_incomplete.estimate` with all of them (``universe="runs"``), so that
every control variate works and ``interval=`` gives each run mean its design-based interval.
``ir_measures`` (``calc_aggregate``, ``iter_calc``, its command) and ``pt.Experiment`` give one run at a
time: there the estimate is Horvitz–Thompson from the design alone (``universe="design"``, control
``none``), and ``predictions=``/``control=`` are refused with ``estimate()``'s error. They see the run
without its name, and the design does not list the documents of its universe, so they cannot tell a run
the design was drawn from from another one: a run that retrieves documents outside the universe (which
could never be sampled and count as nonrelevant) is flagged only where every run is estimated together
(column ``outside`` of :func:`ir_incomplete.estimate` and a warning, at the other front doors).

**Default control variate.** Without ``control=`` a measure uses ``none`` (``labels`` with
``predictions=``), so that every front door gives the same number: ``StatAP(design='d.tsv')@k`` is
``estimate(runs, qrels, 'd.tsv', 'AP@k', control="none")``. :func:`ir_incomplete.estimate` and the
``ir_incomplete estimate`` command default to the fitted relevance model instead (``control="auto"``:
``model``, ``labels+model`` with predictions; the same target, usually a narrower interval), so their
values differ from the measures' unless ``control="none"`` (``--control none``) is given there or
``control=model`` here; the command says on stderr which control variate it used.

A query of the design where no pair was sampled (a Poisson design records its queries,
``attrs["topics"]``) is estimated as :func:`ir_incomplete.estimate` does it (Horvitz–Thompson: 0) and
counts in the run means at every front door, also when the qrels, the judgments of the design's pairs,
hold no line of it.

The design file (and a ``predictions=`` file) named in a measure is read once per evaluation, so a named
pipe works.
"""

from __future__ import annotations

from typing import Any

from ir_measures.measures import ParamInfo

from ir_incomplete.measures.base import NOT_PROVIDED, IncompleteMeasure, Param

__all__ = [
    "DesignMeasure",
    "DesignAP",
    "DesignNDCG",
    "DesignP",
    "DesignRBP",
    "DesignR",
    "StatAP",
    "StatNDCG",
    "StatP",
    "StatRBP",
    "StatR",
    "DESIGN_CONTROLS",
]

#: the control variates a Stat* measure takes (its default: ``labels`` with ``predictions=``, else ``none``,
#: not :func:`ir_incomplete.estimate`'s ``auto``: see :meth:`DesignMeasure.control`)
DESIGN_CONTROLS = ("none", "labels", "model", "labels+model")

_COMMON: dict[str, ParamInfo] = {
    "design": Param(
        str,
        required=True,
        desc="the design file that ir_incomplete.judging.write_design wrote (pairs judged and their inclusion "
        "probabilities pi), quoted: design='design.tsv'; a relative path from the working directory",
    ),
    "predictions": Param(
        str,
        default=None,
        allow_none=True,
        desc="automatic labels used as a control variate (never as judgments), quoted: predictions='labels.tsv'; "
        "only where every run is estimated together (ir_incomplete.evaluate, the ir_incomplete command, compare)",
    ),
    "control": Param(
        str,
        default=NOT_PROVIDED,
        choices=DESIGN_CONTROLS,
        desc="control variate of the difference estimator: none (Horvitz-Thompson; the default without "
        "predictions=), labels (the default with predictions=), model, labels+model; other than none only where "
        "every run is estimated together. Not the default of ir_incomplete.estimate and of the estimate command "
        "(the fitted model, labels+model with predictions): none is the one every front door can compute, "
        "ir_measures and pt.Experiment one run at a time included, so each gives the same number, that of "
        "estimate(..., control='none')",
    ),
}
_REL = Param(int, default=1, minimum=1, desc="minimum grade that counts as relevant (inclusive)")
_CUTOFF_OPTIONAL = Param(int, default=NOT_PROVIDED, minimum=1, desc="cut-off k (default: the design's depth)")


class DesignMeasure(IncompleteMeasure):
    """Base of the design-based measures (``StatAP``, ``StatNDCG``, ``StatP``, ``StatRBP``, ``StatR``).

    Not computed one block of rankings at a time as the other measures are: the estimate needs the
    design and, for control variates, every run of its universe. :func:`ir_incomplete.evaluate` and the
    ``ir_measures`` provider call :func:`ir_incomplete.estimate` with :meth:`estimand` (see the module
    docstring of :mod:`ir_incomplete.measures.design_based`).
    """

    EXTENSION_PARAMS = None
    NAME: str
    #: the measure :func:`ir_incomplete.estimate` estimates (``AP``, ``nDCG``, ``P``, ``RBP``, ``NumRel``)
    ESTIMAND: str

    def __init__(self, **params):
        super().__init__(**params)
        owner = self.NAME
        design = self.params.get("design")
        if design is None or not design.strip():
            raise ValueError(f"{owner}: design= names no file (an empty path); e.g. {self.EXAMPLE}")
        path = self.params.get("predictions")
        if path is not None and not path.strip():
            raise ValueError(f"{owner}: predictions= names no file (an empty path); e.g. predictions='labels.tsv'")
        control = self.params.get("control")
        if control is not None and "labels" in control and path is None:
            raise ValueError(
                f"{owner}: control={control} needs automatic labels: add predictions='labels.tsv' or choose "
                f"control=none or control=model"
            )

    def control(self) -> str:
        """The control variate: the one given, else ``labels`` with predictions and ``none`` without.

        Not :func:`ir_incomplete.estimate`'s default (``control="auto"``: the fitted relevance model,
        ``labels+model`` with predictions, which the ``estimate`` command uses too): ``none`` is the one
        control variate that ``ir_measures`` and ``pt.Experiment``, which see one run at a time, can
        compute, so ``StatAP(design='d.tsv')@k`` gives the same number at every front door, that of
        ``estimate(runs, qrels, 'd.tsv', 'AP@k', control="none")``; ``control=model`` asks for the
        fitted model where every run is estimated together."""
        given = self.get("control")
        if given is not None:
            return given
        return "labels" if self.get("predictions") is not None else "none"

    def estimand(self) -> str:
        """The measure string :func:`ir_incomplete.estimate` reads (``AP(rel=2)@10``, ``RBP(p=0.9)@100``, ``R``)."""
        params = [
            f"{name}={value!r}"
            for name, value in self.params.items()
            if name in ("p", "rel") and value != self.SUPPORTED_PARAMS[name].default
        ]
        text = self.ESTIMAND + (f"({','.join(params)})" if params else "")
        cutoff = self.params.get("cutoff")
        return text + (f"@{cutoff}" if cutoff is not None else "")

    def compute(self, ranked: Any, qrels: Any):
        raise ValueError(
            f"{self!r} is estimated from its design over whole runs (ir_incomplete.evaluate, ir_measures), not "
            f"from a block of rankings"
        )


class DesignAP(DesignMeasure):
    """Design-based estimate of AP@k, ``StatAP(design='design.tsv')@k``: statAP (Aslam, Pavlu & Yilmaz,
    "A statistical method for system evaluation using incomplete judgments", SIGIR 2006) written with
    pseudo-judgments ``ŷ_u = f_u + S_u (y_u − f_u)/π_u`` (the difference estimator with control variate
    f; Särndal, Swensson & Wretman, *Model Assisted Survey Sampling*, 1992, ch. 6; f = 0: Horvitz–Thompson)::

        AP@k ≈ N̂ / R̂,   N̂ = Σ_{i ≤ k} (ŷ_i / i)(1 + Σ_{j < i} ŷ_j),   R̂ = Σ_{u ∈ universe of the topic} ŷ_u

    y = [grade ≥ rel]. It estimates the AP@k that complete judgments of the design's universe would
    give (documents outside it nonrelevant); without ``@k`` the cut-off is the design's depth. Run means
    have design-based intervals (``evaluate(..., interval=0.9)``); details, the bias correction of the
    ratio and the variance: :mod:`ir_incomplete.estimation`, :mod:`ir_incomplete.kernels.design`.
    """

    __name__ = "StatAP"
    NAME = "StatAP"
    ESTIMAND = "AP"
    PRETTY_NAME = "Design-based AP"
    SHORT_DESC = "statAP: AP@k estimated from a probability sample of judgments (design=), with design-based intervals."
    EXAMPLE = "StatAP(design='design.tsv')@100"
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {**_COMMON, "rel": _REL, "cutoff": _CUTOFF_OPTIONAL}


class DesignNDCG(DesignMeasure):
    """Design-based estimate of nDCG@k, ``StatNDCG(design='design.tsv')@k`` (pseudo-judgments as
    :class:`DesignAP`: Aslam, Pavlu & Yilmaz, SIGIR 2006; Särndal, Swensson & Wretman 1992)::

        nDCG@k ≈ DCĜ / IDCĜ,   DCĜ = Σ_{i ≤ k} ĝ_i / log2(i + 1)

    gain = the grade; the ideal DCG from the estimated number of documents of each grade in the
    universe, placed in grade order (a fractional count fills its last position in proportion). It
    estimates the nDCG@k that complete judgments of the design's universe would give; without ``@k``
    the cut-off is the design's depth. See :mod:`ir_incomplete.estimation`.
    """

    __name__ = "StatNDCG"
    NAME = "StatNDCG"
    ESTIMAND = "nDCG"
    PRETTY_NAME = "Design-based nDCG"
    SHORT_DESC = "nDCG@k estimated from a probability sample of judgments (design=), with design-based intervals."
    EXAMPLE = "StatNDCG(design='design.tsv')@10"
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {**_COMMON, "cutoff": _CUTOFF_OPTIONAL}


class DesignP(DesignMeasure):
    """Design-based estimate of P@k, ``StatP(design='design.tsv')@k`` (Horvitz–Thompson, or the
    difference estimator with a control variate: Särndal, Swensson & Wretman 1992; pseudo-judgments as
    statAP, Aslam, Pavlu & Yilmaz, SIGIR 2006)::

        P@k ≈ (1/k) Σ_{i ≤ k} ŷ_i          (unbiased: linear in ŷ)

    It estimates the P@k that complete judgments of the design's universe would give. ``@k`` is
    required, at most the design's depth. See :mod:`ir_incomplete.estimation`.
    """

    __name__ = "StatP"
    NAME = "StatP"
    ESTIMAND = "P"
    PRETTY_NAME = "Design-based P@k"
    SHORT_DESC = "P@k estimated from a probability sample of judgments (design=), with design-based intervals."
    EXAMPLE = "StatP(design='design.tsv')@10"
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        **_COMMON,
        "rel": _REL,
        "cutoff": Param(int, minimum=1, required=True, desc="cut-off k (at most the design's depth)"),
    }


class DesignRBP(DesignMeasure):
    """Design-based estimate of rank-biased precision, ``StatRBP(design='design.tsv',p=0.8)@k`` (RBP:
    Moffat & Zobel, TOIS 2008; estimator: Särndal, Swensson & Wretman 1992; pseudo-judgments as statAP,
    Aslam, Pavlu & Yilmaz, SIGIR 2006)::

        RBP(p)@k ≈ (1 − p) Σ_{i ≤ k} p^{i−1} ŷ_i          (unbiased: linear in ŷ)

    y = [grade ≥ rel]. It estimates the RBP that complete judgments of the design's universe would
    give; without ``@k`` the sum stops at the design's depth. See :mod:`ir_incomplete.estimation`.
    """

    __name__ = "StatRBP"
    NAME = "StatRBP"
    ESTIMAND = "RBP"
    PRETTY_NAME = "Design-based RBP"
    SHORT_DESC = "Rank-biased precision estimated from a probability sample of judgments (design=)."
    EXAMPLE = "StatRBP(design='design.tsv',p=0.9)@100"
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {
        **_COMMON,
        "p": Param(
            float, default=0.8, minimum=0, maximum=1, min_inclusive=False, max_inclusive=False, desc="persistence p"
        ),
        "rel": _REL,
        "cutoff": _CUTOFF_OPTIONAL,
    }


class DesignR(DesignMeasure):
    """Design-based estimate of the number of relevant documents, ``StatR(design='design.tsv')``
    (Horvitz–Thompson total, or the difference estimator with a control variate: Särndal, Swensson &
    Wretman 1992; as statAP's R̂, Aslam, Pavlu & Yilmaz, SIGIR 2006)::

        R ≈ Σ_{u ∈ universe of the topic} ŷ_u

    y = [grade ≥ rel]. It estimates the number of relevant documents among the design's universe (the
    runs' top ``depth`` plus the pairs judged already) that complete judgments would find, whatever the
    run: the same value for every run. See :mod:`ir_incomplete.estimation`.
    """

    __name__ = "StatR"
    NAME = "StatR"
    ESTIMAND = "NumRel"
    PRETTY_NAME = "Design-based R"
    SHORT_DESC = "Relevant documents in the design's universe, estimated from a probability sample of judgments."
    EXAMPLE = "StatR(design='design.tsv')"
    SUPPORTED_PARAMS: dict[str, ParamInfo] = {**_COMMON, "rel": _REL}

    def estimand(self) -> str:
        rel = self.get("rel")
        return "R" if rel == 1 else f"NumRel(rel={rel})"


StatAP = DesignAP._family()
StatNDCG = DesignNDCG._family()
StatP = DesignP._family()
StatRBP = DesignRBP._family()
StatR = DesignR._family()
