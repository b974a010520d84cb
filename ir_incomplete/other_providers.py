"""Measures that ``ir_incomplete`` does not compute, handed to ``ir_measures``' other providers.

:func:`evaluate <ir_incomplete.evaluate>` (and so the command line and robustness studies) sends
measures such as ``ERR@10`` or ``SDCG(max_rel=3)@10`` to the provider that ``ir_measures``' default
pipeline picks for them (the first one in the pipeline that is available and supports the measure, as
``ir_measures.evaluator`` does). Each provider gets its own evaluator, so that anything a provider
raises while computing becomes a :class:`ProviderError`: one line naming the measures, the provider and
the reason, instead of the provider's traceback (gdeval's ``CalledProcessError``, an ``AssertionError``).
Input that a provider is known to refuse or to get wrong is refused before it runs, with the reason
spelt out: gdeval's Perl script fails with a ``CalledProcessError`` (after printing its own message to
stderr) on query ids that do not end in digits and on grades above 4, and reports ``topic-1`` as query
``1`` (whose values ``ir_measures`` then drops, giving 0 for ``topic-1``): only query ids made of
digits are given to it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any

__all__ = ["ProviderError", "provider_groups", "iter_metrics"]

_MAX_REASON = 300  # characters of a provider's own error message quoted at most


class ProviderError(ValueError):
    """Another ``ir_measures`` provider failed on measures handed to it.

    The message names the measures, the provider and the reason; ``measures`` and ``provider`` (the
    provider's ``NAME``) are attributes, and ``__cause__`` is the provider's own exception. A
    ``ValueError``, as bad input usually is the cause (the command line reports it with exit status 2).
    """

    def __init__(self, message: str, measures: Sequence[Any] = (), provider: str | None = None):
        super().__init__(message)
        self.measures = tuple(measures)
        self.provider = provider

    def __reduce__(self):
        return (type(self), (str(self), self.measures, self.provider))


def _one_line(text: Any, limit: int = _MAX_REASON) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _labels(measures: Iterable[Any]) -> str:
    return ", ".join(repr(m) for m in measures)


def provider_groups(measures: Sequence[Any]) -> list[tuple[Any, list[Any]]]:
    """``[(provider, its measures)]``: each measure with the first provider of ``ir_measures``' default
    pipeline that is available and supports it (the choice ``ir_measures.evaluator`` makes), in
    pipeline order; measures keep their given order within a group.

    A measure no available provider supports is a ``ValueError`` naming it (and the providers that would
    support it once installed); a provider that fails while being asked is a :class:`ProviderError`.
    """
    import ir_measures

    remaining = list(dict.fromkeys(measures))
    groups: list[tuple[Any, list[Any]]] = []
    would_support: list[Any] = []
    for provider in ir_measures.DefaultPipeline.providers:
        if not remaining:
            break
        name = getattr(provider, "NAME", type(provider).__name__)
        claimed = []
        for measure in remaining:
            try:
                supported = provider.supports(measure)
            except Exception as exc:  # e.g. an AssertionError of validate_params
                raise ProviderError(
                    f"{measure!r}: ir_measures' provider {name!r} cannot check this measure: "
                    f"{type(exc).__name__}: {_one_line(exc)}",
                    [measure],
                    name,
                ) from exc
            if supported:
                claimed.append(measure)
        if not claimed:
            continue
        if not provider.is_available():
            would_support.append(provider)
            continue
        groups.append((provider, claimed))
        remaining = [m for m in remaining if m not in claimed]
    if remaining:
        message = f"no available ir_measures provider computes {_labels(remaining)}"
        if would_support:
            hints = []
            for provider in would_support:
                instructions = provider.install_instructions()
                hints.append(f"{provider.NAME} ({_one_line(instructions)})" if instructions else provider.NAME)
            message += "; it needs one of these providers: " + "; ".join(hints)
        raise ValueError(message)
    return groups


def iter_metrics(
    groups: Sequence[tuple[Any, list[Any]]], qrels: Mapping[str, Mapping[str, int]], runs: Iterable[tuple[str, Any]]
) -> Iterator[tuple[str, Any]]:
    """``(run name, ir_measures Metric)`` of every measure of ``groups`` (:func:`provider_groups`) on
    each ``(name, run)`` of ``runs``, with one evaluator per provider built once for ``qrels``
    (``{query_id: {doc_id: grade}}``); runs are ``{query_id: {doc_id: score}}``.

    Anything a provider raises becomes a :class:`ProviderError` naming its measures and itself.
    """
    evaluators = []
    for provider, measures in groups:
        _check_input(provider, measures, qrels, None)
        try:
            evaluators.append((provider, measures, provider.evaluator(measures, qrels)))
        except Exception as exc:
            raise _failure(provider, measures, f"{type(exc).__name__}: {_one_line(exc) or 'no message'}") from exc
    for name, run in runs:
        for provider, measures, evaluator in evaluators:
            _check_input(provider, measures, None, run)
            try:
                for metric in evaluator.iter_calc(run):
                    yield name, metric
            except Exception as exc:
                raise _failure(provider, measures, f"{type(exc).__name__}: {_one_line(exc) or 'no message'}") from exc


def _provider_name(provider) -> str:
    return str(getattr(provider, "NAME", type(provider).__name__))


def _failure(provider, measures, reason: str) -> ProviderError:
    name = _provider_name(provider)
    return ProviderError(f"{_labels(measures)}: ir_measures' provider {name!r} failed: {reason}", measures, name)


def _check_input(provider, measures, qrels, run) -> None:
    """Refuse, before the provider runs, input that it is known to refuse (its own error would be
    unclear, or written to stderr by a subprocess)."""
    reason = _refusal(_provider_name(provider), qrels, run)
    if reason is not None:
        raise _failure(provider, measures, reason)


#: gdeval.pl allows grades up to 4, and reads a query id as the digits after its last '-' (so 'topic-1'
#: comes back as '1', which matches no query: only query ids of digits are safe)
_GDEVAL_MAX_GRADE = 4
_DIGITS = re.compile(r"[0-9]+")


def _refusal(provider: str, qrels, run) -> str | None:
    """Why ``provider`` refuses ``qrels`` or ``run`` (either may be ``None``), when that is known (gdeval
    checks each line with the rules of ``gdeval.pl``); else ``None``."""
    if provider != "gdeval":
        return None
    for what, table in (("qrels", qrels), ("run", run)):
        for query_id in table or ():
            if _DIGITS.fullmatch(str(query_id)) is None:
                message = f"gdeval requires numeric query ids (digits only); got {str(query_id)!r} in the {what}"
                tail = str(query_id).rsplit("-", 1)[-1]
                if "-" in str(query_id) and _DIGITS.fullmatch(tail):
                    message += f" (gdeval.pl would report it as {tail!r}, which matches no query)"
                return message
    for query_id, docs in (qrels or {}).items():
        for doc_id, grade in docs.items():
            if grade > _GDEVAL_MAX_GRADE:
                return (
                    f"gdeval allows relevance grades up to {_GDEVAL_MAX_GRADE}; got {grade!r} "
                    f"(query {str(query_id)!r}, document {str(doc_id)!r})"
                )
    return None
