"""``ir_incomplete ppi``: prediction-powered estimates and intervals from the command line.

::

    ir_incomplete ppi QRELS PREDICTIONS RUN [RUN ...] MEASURE [MEASURE ...]
                      [--interval 0.9 | --alpha 0.1] [--power-tuning] [--labelled-queries Q1,Q2,...]
                      [-p PLACES] [-o tsv|jsonl] [--negative ...] [--score-precision ...]

``QRELS``: the human judgments (they define the truth on the labelled queries: by default every query
they judge); ``PREDICTIONS``: predicted grades in the TREC qrels format (``query_id 0 doc_id grade``),
scored on every query. Runs and measures as in the evaluation command. One line per run and measure:
``run, measure, value, lo, hi, lam, n_labelled, n_unlabelled`` (tsv with a header line, or jsonl); see
:func:`ir_incomplete.ppi.ppi_evaluate`. Errors and exit codes as the evaluation command.
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from ir_incomplete.cli.common import (
    DEFAULT_PLACES,
    EXIT_DATA,
    OUTPUT_FORMATS,
    PROG,
    CliError,
    Parser,
    check_input_file,
    one_line,
    read_input,
    run_command,
    runs_and_measures,
)
from ir_incomplete.data import NEGATIVE_POLICIES, SCORE_PRECISIONS

__all__ = ["main"]


def _parser() -> Parser:
    parser = Parser(
        prog=f"{PROG} ppi",
        usage=f"{PROG} ppi [options] QRELS PREDICTIONS RUN [RUN ...] MEASURE [MEASURE ...]",
        description="Prediction-powered inference (Angelopoulos et al., Science 2023; PPI++ with "
        "--power-tuning): each run's mean measure estimated from human judgments on the labelled queries "
        "and predicted grades on every query, with a confidence interval (--interval 0.9, or --alpha 0.1: "
        "the default).",
        epilog="Output: run, measure, value, lo, hi, lam, n_labelled, n_unlabelled (tsv with a header "
        "line, or jsonl). Exit codes: 0 success; 2 usage or data error; 1 output not written.",
    )
    parser.add_argument("qrels", metavar="QRELS", help="human judgments (TREC qrels; .gz allowed)")
    parser.add_argument(
        "predictions",
        metavar="PREDICTIONS",
        help="predicted grades: a qrels file, a table with a header line (query_id doc_id relevance) or parquet",
    )
    parser.add_argument(
        "items", nargs="+", metavar="RUN... MEASURE", help="run files or directories of run files, then measure strings"
    )
    parser.add_argument(
        "--interval",
        type=float,
        default=None,
        metavar="LEVEL",
        help="level of the confidence intervals, e.g. 0.9 (default; as --interval of the evaluation)",
    )
    parser.add_argument(
        "--alpha", type=float, default=None, help="the same as an error level: --alpha 0.1 = --interval 0.9"
    )
    parser.add_argument(
        "--power-tuning", dest="power_tuning", action="store_true", help="tune lambda (PPI++) instead of lambda=1"
    )
    parser.add_argument(
        "--labelled-queries",
        dest="labelled",
        default=None,
        metavar="Q1,Q2,...",
        help="comma-separated labelled query ids (default: every query of QRELS)",
    )
    parser.add_argument(
        "-p", "--places", type=int, default=DEFAULT_PLACES, help="decimal places of tsv output (default 4; -1: full)"
    )
    parser.add_argument("-o", "--output_format", choices=OUTPUT_FORMATS, default="tsv", help="output format")
    parser.add_argument(
        "--negative", choices=NEGATIVE_POLICIES, default="pooled_unjudged", help="meaning of negative QRELS grades"
    )
    parser.add_argument(
        "--score-precision", dest="score_precision", choices=SCORE_PRECISIONS, default="float32", help="run scores"
    )
    return parser


def _lines(table, args) -> list[str]:
    columns = list(table.columns)
    records = table.to_dict("records")
    if args.output_format == "jsonl":
        return [json.dumps({c: (r[c].item() if hasattr(r[c], "item") else r[c]) for c in columns}) for r in records]
    spec = "" if args.places == -1 else f".{args.places}f"
    out = ["\t".join(columns)]
    for record in records:
        cells = []
        for c in columns:
            value = record[c]
            cells.append(format(float(value), spec) if isinstance(value, float) else str(value))
        out.append("\t".join(cells))
    return out


def _run(args) -> list[str]:
    from ir_incomplete.data import read_trec_qrels, read_trec_run
    from ir_incomplete.ppi import ppi_evaluate
    from ir_incomplete.predictions import read_predictions

    if args.places < -1:
        raise CliError(f"--places must be >= 0, or -1 for full precision (got {args.places})")
    alpha = _alpha(args.interval, args.alpha)
    check_input_file(args.qrels, "qrels")
    check_input_file(args.predictions, "predictions")
    run_files, measures = runs_and_measures(args.items, "QRELS PREDICTIONS RUN [RUN ...] MEASURE ...")
    labelled = None
    if args.labelled is not None:
        labelled = [q.strip() for q in args.labelled.split(",") if q.strip()]
    qrels = read_input(read_trec_qrels, args.qrels, "qrels")
    predictions = read_input(read_predictions, args.predictions, "predictions")
    runs = {name: read_input(read_trec_run, path, "run") for name, path in run_files.items()}
    try:
        table = ppi_evaluate(
            runs,
            qrels,
            predictions,
            measures,
            labelled_queries=labelled,
            alpha=alpha,
            power_tuning=args.power_tuning,
            negative=args.negative,
            score_precision=args.score_precision,
        )
    except (ValueError, TypeError) as exc:
        raise CliError(one_line(exc), EXIT_DATA) from None
    return _lines(table, args)


def _alpha(interval: float | None, alpha: float | None) -> float | None:
    """The error level of ``--interval`` or ``--alpha`` (``None``: neither, the default); both given and
    disagreeing, or an interval outside (0, 1), is a ``CliError`` naming the options."""
    from ir_incomplete.bootstrap import interval_or_alpha

    if interval is None:
        return alpha
    if not 0.0 < interval < 1.0:
        raise CliError(f"--interval must be strictly between 0 and 1, e.g. 0.9 (got {interval})")
    try:
        return interval_or_alpha(interval, alpha)
    except ValueError:
        raise CliError(
            f"--interval {interval} and --alpha {alpha} disagree: --interval {interval} means --alpha "
            f"{round(1.0 - interval, 12):g}; give only one of them"
        ) from None


def main(argv: Sequence[str]) -> int:
    """``ir_incomplete ppi ...``; returns the exit code."""
    return run_command(_parser(), _run, argv)


if __name__ == "__main__":  # pragma: no cover
    import sys

    sys.exit(main(sys.argv[1:]))
