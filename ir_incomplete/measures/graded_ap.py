"""Graded average precision: GAP, xGAP and eGAP with a user-threshold distribution ``g`` (definitions;
the kernels are in :mod:`ir_incomplete.kernels.graded_ap`).

GAP: Robertson, Kanoulas & Yilmaz, "Extending average precision to graded relevance judgments", SIGIR
2010. xGAP and eGAP: Ferrante, Ferro & Maistro, "Rethinking how to extend average precision to graded
relevance", CLEF 2014 (5th International Conference of the CLEF Initiative, Sheffield; Springer LNCS,
pp. 19–30, doi:10.1007/978-3-319-11382-1_3), equations (4)–(6).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
from ir_measures.measures import ParamInfo

from ir_incomplete.kernels import graded_ap as kernels
from ir_incomplete.measures.ap_family import CUTOFF_PARAM
from ir_incomplete.measures.base import IncompleteMeasure, Param

__all__ = ["GradedAP", "ExtendedGradedAP", "ExpectedGradedAP", "GAP", "xGAP", "eGAP", "G_PARAM", "UNJUDGED_PARAM"]

G_PARAM = Param(
    tuple,
    kind="distribution",
    required=True,
    desc="g_1..g_c: probability that the user's relevance threshold is grade k; len(g) is the highest grade",
)
UNJUDGED_PARAM = Param(
    str,
    default="nonrelevant",
    choices=("nonrelevant", "condensed"),
    desc="nonrelevant: unjudged documents count as grade 0; condensed: they are "
    "removed from the ranking before the cut-off",
)

_CONVENTIONS = """
    Conventions (all three measures):

    * ``g = (g_1, …, g_c)``, each g_k ≥ 0, Σ g_k = 1 (± 1e-6); grades are used **by value**: len(g) = c
      is the highest grade, g_k belongs to grade value k (MATTERS indexes g by the ordinal position of
      the grades present in the pool instead, which differs when a grade value never occurs). A qrels
      grade above c raises ``ValueError`` naming the grade, the query and len(g).
    * ``unjudged=nonrelevant`` (default; MATTERS ``NotAssessed=NotRelevant``): unjudged documents, pooled
      but unjudged (negative qrels grade) or unpooled (absent from the qrels), count as grade 0.
      ``unjudged=condensed`` removes them from the whole ranking first (condense, then cut).
    * ``@k`` truncates the ranking after rank k; R(j), RB(k) and the normalisers are unchanged.
    * The value is 0 when nothing relevant is retrieved and when ν = min{k : g_k > 0} > τ = max{j : R(j) > 0}
      (MATTERS ``gradedAveragePrecision.m``); a query with R = 0 gives 0.
    * Negative qrels grades are pooled but unjudged (trec_eval; ``negative="zero"`` makes them grade 0).
      Ties in score: document id descending, scores compared in single precision (trec_eval 9).
    * One-hot g = e_k: GAP = xGAP = eGAP = binary AP at relevance level k (trec_eval ``map -l k``).
"""


if TYPE_CHECKING:
    from typing import Protocol

    class _Kernel(Protocol):
        """``kernels.graded_ap`` and its siblings: ``(codes, grade_counts per row, g) -> values``."""

        def __call__(self, codes: np.ndarray, grade_counts: np.ndarray, g: Any, /) -> np.ndarray: ...


class _GradedFamily(IncompleteMeasure):
    """Shared parameters, validation and computation of GAP, xGAP and eGAP."""

    SUPPORTED_PARAMS: dict[str, ParamInfo] = {"g": G_PARAM, "unjudged": UNJUDGED_PARAM, "cutoff": CUTOFF_PARAM}
    EXTENSION_PARAMS = None
    EXAMPLE = ""
    _KERNEL: ClassVar[_Kernel]  # set by each measure

    def __init__(self, **params):
        if params.get("g") is None:
            raise ValueError(self._needs_g())
        super().__init__(**params)

    def _needs_g(self) -> str:
        return (
            f"{self.NAME} needs g, e.g. {self.EXAMPLE} (g: {G_PARAM.describe_allowed()}; "
            f"g_k is the probability that the user's relevance threshold is grade k)"
        )

    def compute(self, ranked, qrels):
        g = self.params.get("g")
        if g is None:
            raise ValueError(self._needs_g())
        counts = _grade_counts(qrels, len(g), repr(self))
        codes = ranked.codes
        if self.get("unjudged") == "condensed":
            codes = kernels.condense(codes)
        cutoff = self.get("cutoff")
        if cutoff is not None:
            codes = codes[:, :cutoff]
        return type(self)._KERNEL(codes, ranked.per_topic(counts), g)


def _grade_counts(qrels, c: int, owner: str) -> np.ndarray:
    """R(0..c) per topic; ``ValueError`` when a qrels grade exceeds c = len(g) (g is indexed by grade value)."""
    if qrels.max_grade > c:  # checked on the distinct grades: never a table as wide as the grade values
        grade = qrels.max_grade
        topic = qrels.topic_ids[int(np.flatnonzero(qrels.level_counts[:, -1])[0])]
        raise ValueError(
            f"{owner}: qrels grade {grade} (query {topic!r}) exceeds len(g) = {c}; "
            f"grades are used by value, so g needs one probability per grade 1..{grade}"
        )
    counts = qrels.grade_counts
    out = np.zeros((counts.shape[0], c + 1), dtype=np.int64)
    out[:, : counts.shape[1]] = counts
    return out


class GradedAP(_GradedFamily):
    __doc__ = (
        """Graded average precision, GAP (Robertson, Kanoulas & Yilmaz, SIGIR 2010; eq. 4 of
    Ferrante, Ferro & Maistro, "Rethinking how to extend average precision to graded relevance", CLEF 2014).

    A user has relevance threshold k with probability g_k: documents of grade ≥ k are relevant to them.
    With G(j) = Σ_{h≤j} g_h (G(0) = 0), R(j) the judged documents of grade j and r_n the grade of the
    document at rank n::

        GAP = [ Σ_{n=1}^{N} (1/n) Σ_{m=1}^{n} Δ_{m,n} ] / Σ_{j=1}^{c} R(j)·G(j)
        Δ_{m,n} = G(min(r_m, r_n))

    GAP selects the relevant document n with probability G(r_n) / Σ_j R(j)G(j), which over-weights the
    many low-grade documents when few highly relevant ones exist.
    """
        + _CONVENTIONS
    )

    __name__ = "GAP"
    NAME = "GAP"
    PRETTY_NAME = "Graded Average Precision"
    SHORT_DESC = "AP over a distribution g of user relevance thresholds (Robertson et al. 2010)."
    EXAMPLE = "GAP(g=0.1,0.9)"
    _KERNEL = staticmethod(kernels.graded_ap)


class ExtendedGradedAP(_GradedFamily):
    __doc__ = (
        """Extended graded average precision, xGAP (Ferrante, Ferro & Maistro, "Rethinking how to
    extend average precision to graded relevance", CLEF 2014, eq. 5; MATTERS ``extendedGradedAveragePrecision.m``).

    With RB(k) = Σ_{i≥k} R(i) the judged documents of grade ≥ k and A(j) = Σ_{k=1}^{j} g_k / RB(k)::

        xGAP = Σ_{n=1}^{N} (1/n) · [A(r_n) / G(r_n)] · Σ_{m=1}^{n} Δ_{m,n},   Δ_{m,n} = G(min(r_m, r_n))

    A document with G(r_n) = 0 contributes 0. xGAP selects document n with probability A(r_n): a user
    k ~ g picks a document uniformly among the RB(k) documents relevant to them, so rare highly relevant
    documents are not swamped. Limit (n grade-1 documents then one grade-2 document, n → ∞): 1 − g_2².
    """
        + _CONVENTIONS
    )

    __name__ = "xGAP"
    NAME = "xGAP"
    PRETTY_NAME = "Extended Graded Average Precision"
    SHORT_DESC = "Graded AP whose document selection follows the user-threshold distribution g (Ferrante et al.)."
    EXAMPLE = "xGAP(g=0.1,0.9)"
    _KERNEL = staticmethod(kernels.extended_graded_ap)


class ExpectedGradedAP(_GradedFamily):
    __doc__ = (
        """Expected graded average precision, eGAP (Ferrante, Ferro & Maistro, "Rethinking how to
    extend average precision to graded relevance", CLEF 2014, eq. 6; MATTERS ``expectedGradedAveragePrecision.m``).

    With τ = max{j : R(j) > 0} and RB(k) = Σ_{i≥k} R(i)::

        eGAP = Σ_{n=1}^{N} (1/n) Σ_{k=1}^{τ} (g_k / RB(k)) · #{m ≤ n : r_m ≥ k, r_n ≥ k}
             = Σ_{k=1}^{τ} g_k · AP_k

    where AP_k is binary AP with relevance level k (trec_eval ``map -l k``): the expected AP of a user
    whose threshold is drawn from g. Limit (n grade-1 documents then one grade-2 document, n → ∞): g_1.
    """
        + _CONVENTIONS
    )

    __name__ = "eGAP"
    NAME = "eGAP"
    PRETTY_NAME = "Expected Graded Average Precision"
    SHORT_DESC = "Expected binary AP over user relevance thresholds k ~ g: sum of g_k * AP at level k."
    EXAMPLE = "eGAP(g=0.1,0.9)"
    _KERNEL = staticmethod(kernels.expected_graded_ap)


GAP = GradedAP._family()
xGAP = ExtendedGradedAP._family()
eGAP = ExpectedGradedAP._family()
