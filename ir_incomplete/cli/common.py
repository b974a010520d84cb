"""The plumbing every ``ir_incomplete`` subcommand shares: the argument parser that reports instead of
exiting (:class:`Parser`), the one-line errors and exit codes (:class:`CliError`, :data:`EXIT_USAGE`,
:data:`EXIT_DATA`, :data:`EXIT_OUTPUT`), the readers of input files (:func:`read_input`,
:func:`check_input_file`), of runs and measures given as ``RUN ... MEASURE ...`` (:func:`runs_and_measures`)
and the writer of output lines (:func:`write_lines`); :func:`run_command` puts them together, and
:func:`dispatch` runs a whole command: an interrupt (Ctrl-C, exit 130) or output that cannot be written
(exit 1) is one line on stderr, never a traceback."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from ir_incomplete.grammar.errors import measure_error_message

if TYPE_CHECKING:
    import ir_measures

__all__ = [
    "PROG",
    "DEFAULT_PLACES",
    "SUMMARY_QID",
    "OUTPUT_FORMATS",
    "EXIT_DATA",
    "EXIT_USAGE",
    "EXIT_OUTPUT",
    "EXIT_INTERRUPTED",
    "CliError",
    "OutputError",
    "Parser",
    "Exit",
    "one_line",
    "INPUT_ERRORS",
    "MAX_MESSAGE",
    "as_cli_error",
    "report_error",
    "split_measure_args",
    "parse_measures",
    "places_format",
    "version",
    "collect_runs",
    "read_input",
    "write_lines",
    "check_input_file",
    "leading_paths",
    "runs_and_measures",
    "run_command",
    "output_error",
    "discard_stdout",
    "flush_stdout",
    "dispatch",
]

PROG = "ir_incomplete"
DEFAULT_PLACES = 4
SUMMARY_QID = "all"
OUTPUT_FORMATS = ("tsv", "jsonl")
EXIT_DATA = 2  # unreadable or malformed input: reported like a usage error (documented exit code 2)
EXIT_USAGE = 2
EXIT_OUTPUT = 1  # the output could not be written (e.g. a closed pipe, a full disk)
EXIT_INTERRUPTED = 130  # 128 + SIGINT, as shells report a command stopped by Ctrl-C


class CliError(Exception):
    """An error reported as one ``ir_incomplete: error: ...`` line (``usage`` also prints the usage)."""

    def __init__(self, message: str, code: int = EXIT_USAGE, usage: str | None = None):
        super().__init__(message)
        self.code = code
        self.usage = usage


class OutputError(Exception):
    """The output could not be written to stdout (exit :data:`EXIT_OUTPUT`): :func:`dispatch` reports it
    as one line. Not a :class:`CliError`, so that the commands' handlers of bad input let it through."""

    code = EXIT_OUTPUT


class Parser(argparse.ArgumentParser):
    """An ``ArgumentParser`` that raises :class:`CliError` instead of exiting, so that :func:`main`
    returns the exit code; its help and version text that cannot be written to stdout is an
    :class:`OutputError` (argparse itself ignores the error and exits 0)."""

    def error(self, message):
        raise CliError(message, EXIT_USAGE, usage=self.format_usage())

    def _print_message(self, message, file=None):
        if not message:
            return
        file = file or sys.stderr
        try:
            file.write(message)
            if file is sys.stdout:
                file.flush()
        except BrokenPipeError:  # `ir_incomplete --help | head`: stop quietly
            discard_stdout()
        except OSError as exc:
            if file is not sys.stdout:
                return  # stderr cannot be written either: nothing to report to
            discard_stdout()
            raise output_error(exc) from None

    def exit(self, status=0, message=None):
        if message:
            sys.stderr.write(message)
        raise Exit(status)


class Exit(Exception):
    def __init__(self, status: int):
        super().__init__(status)
        self.status = status


def one_line(text) -> str:
    return " ".join(str(text).split())


#: errors of bad input (the grammar's MeasureSyntaxError is a ValueError) reported as one line, exit 2
INPUT_ERRORS = (ValueError, TypeError, OSError, NameError, UnicodeDecodeError, RecursionError)
MAX_MESSAGE = 500  # characters of an error message printed at most


def as_cli_error(exc: BaseException) -> CliError:
    message = one_line(exc) or type(exc).__name__
    if len(message) > MAX_MESSAGE:
        message = message[: MAX_MESSAGE - 3] + "..."
    return CliError(message, EXIT_USAGE)


def report_error(error: CliError) -> int:
    if error.usage:
        sys.stderr.write(error.usage)
    sys.stderr.write(f"{PROG}: error: {one_line(error)}\n")
    return error.code


_OPEN = {"(": ")", "{": "}", "[": "]"}


def split_measure_args(args: Sequence[str]) -> list[str]:
    """Split measure arguments on whitespace that lies outside brackets and quotes.

    ``['AP P@5', 'infAP(c=1.5, eps=1e-4)']`` gives ``['AP', 'P@5', 'infAP(c=1.5, eps=1e-4)']`` (plain
    whitespace splitting, as ``ir_measures``' command line does, would cut the last one in two).
    """
    out: list[str] = []
    for arg in args:
        depth, quote, current = 0, None, []
        i = 0
        while i < len(arg):
            ch = arg[i]
            if quote:
                current.append(ch)
                if ch == "\\" and i + 1 < len(arg):
                    current.append(arg[i + 1])
                    i += 1
                elif ch == quote:
                    quote = None
            elif ch in "'\"":
                quote = ch
                current.append(ch)
            elif ch in _OPEN:
                depth += 1
                current.append(ch)
            elif ch in _OPEN.values():
                depth = max(depth - 1, 0)
                current.append(ch)
            elif ch.isspace() and depth == 0:
                if current:
                    out.append("".join(current))
                current = []
            else:
                current.append(ch)
            i += 1
        if current:
            out.append("".join(current))
    return out


def parse_measures(args: Sequence[str]) -> list:
    """Measure objects of the measure arguments, without duplicates, in order (``CliError`` code 2)."""
    from ir_incomplete.grammar import parse
    from ir_incomplete.trec_names import trec_eval_equivalent, trec_eval_note

    tokens = split_measure_args(args)
    if not tokens:
        raise CliError("no measures given (e.g. 'AP' 'infAP(c=1.5)@10'); see 'ir_incomplete measures'")
    measures: list[ir_measures.Measure] = []
    for token in tokens:
        try:
            measure = parse(token)
        except (ValueError, NameError) as exc:
            trec = trec_eval_equivalent(token)  # trec_eval's names (P_5, ndcg_cut_10, map) are accepted
            if trec:
                sys.stderr.write(f"{PROG}: {trec_eval_note(token, trec)}\n")
                measures.extend(m for m in dict.fromkeys(trec) if m not in measures)
                continue
            message = measure_error_message(token, exc)
            if ("/" in token or os.sep in token) and "(" not in token:
                message += " (no file or directory of that name exists either)"
            raise CliError(message, EXIT_USAGE) from None
        if measure not in measures:
            measures.append(measure)
    return measures


def places_format(places: int) -> str:
    """The format spec of the numbers the commands print with ``-p PLACES``: ``places`` decimals
    (``".4f"``), or ``""`` for -1, full precision (Python's shortest repr, which reads back to the same
    float); a ``CliError`` for anything below -1."""
    if places < -1:
        raise CliError(f"--places must be >= 0, or -1 for full precision (got {places})")
    return "" if places == -1 else f".{places}f"


def version() -> str:
    from ir_incomplete._version import __version__

    return __version__


def collect_runs(paths: Sequence[str], read_run: Callable[[str], Any] | None = None) -> dict[str, Any]:
    """``{run name: path}`` of run files and directories; two different files of one name are an error.
    A file read at once is there as its table: a parquet file with a ``run`` column (one run per value)
    or a file that can be read only once (a named pipe), read by ``read_run`` (default: the package's
    run reader)."""
    from ir_incomplete.data.runs import _run_mapping

    runs: dict[str, Any] = {}
    origins: dict[str, str] = {}  # the file (or argument) each run comes from
    for path in paths:
        try:
            found = _run_mapping(path, read_run)
        except (ValueError, OSError) as exc:  # e.g. two files of one name in a directory
            raise CliError(one_line(exc), EXIT_USAGE) from None
        if os.path.isdir(path) and not found:
            raise CliError(f"directory {path!r} holds no run files")
        for name, run in found.items():
            origin = run if isinstance(run, str) else path
            if name in runs:
                if isinstance(run, str) and isinstance(runs[name], str):
                    if os.path.realpath(runs[name]) == os.path.realpath(run):
                        continue
                raise CliError(
                    f"two runs are named {name!r} ({origins[name]!r} and {origin!r}); run names come from "
                    f"file names (or from the 'run' column of a parquet file), so rename one"
                )
            runs[name], origins[name] = run, origin
    return runs


def read_input(reader, path: Any, what: str):
    """``reader(path)`` with its errors as one line (exit 2); a run already read (not a path) as it is."""
    if not isinstance(path, (str, os.PathLike)):
        return path
    try:
        return reader(path)
    except (OSError, ValueError, UnicodeDecodeError) as exc:
        detail = one_line(exc) or type(exc).__name__
        message = detail if os.fspath(path) in detail else f"cannot read {what} file {path!r}: {detail}"
        raise CliError(message, EXIT_DATA) from None


def output_error(exc: OSError) -> OutputError:
    """The :class:`OutputError` of a failed write to stdout: ``cannot write output: <reason>``."""
    reason = exc.strerror or one_line(exc) or type(exc).__name__
    return OutputError(f"cannot write output: {reason}")


def discard_stdout() -> None:
    """Point stdout's file descriptor at the null device, after a write to it failed: what is still in
    Python's buffer then goes nowhere when the interpreter flushes it at exit, instead of failing again
    there (a second message and exit code 120)."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # no file descriptor (a replaced stream): nothing to do
        pass


def _to_stdout(action: Callable[[], object], missing_ok: bool = False) -> int:
    """Run ``action`` (a write or flush of stdout): 0, or :data:`EXIT_OUTPUT` quietly for a closed pipe
    (``ir_incomplete ... | head``); any other failure (a full disk, an I/O error) is an
    :class:`OutputError`. Either way stdout is then discarded (:func:`discard_stdout`). ``missing_ok``: no
    stdout (``None``) or a closed one is not an error (nothing was buffered for it)."""
    try:
        action()
    except BrokenPipeError:
        discard_stdout()
        return EXIT_OUTPUT
    except OSError as exc:
        discard_stdout()
        raise output_error(exc) from None
    except (ValueError, AttributeError):
        if not missing_ok:
            raise
    return 0


def flush_stdout() -> int:
    """Flush stdout: 0, or :data:`EXIT_OUTPUT` quietly for a closed pipe; any other failure is an
    :class:`OutputError` (see :func:`_to_stdout`); no stdout or a closed one is not an error."""
    return _to_stdout(lambda: sys.stdout.flush(), missing_ok=True)


def write_lines(lines: list[str]) -> int:
    """Write ``lines`` to stdout, each ending in a newline, and flush: 0; a closed pipe (e.g.
    ``ir_incomplete ... | head``) stops quietly with :data:`EXIT_OUTPUT`; any other write error (e.g. a
    full disk) raises :class:`OutputError`, which :func:`dispatch` reports as one line, exit 1."""
    if not lines:
        return 0
    text = "\n".join(lines) + "\n"
    status = _to_stdout(lambda: sys.stdout.write(text))
    return status or flush_stdout()


def check_input_file(path: str, what: str) -> None:
    """``CliError`` unless ``path`` names an existing file (``what``: the file's role, for the message)."""
    if not os.path.exists(path):
        raise CliError(f"{what} file {path!r} does not exist")
    if os.path.isdir(path):
        raise CliError(f"{what} {path!r} is a directory, not a file")


def leading_paths(items: Sequence[str]) -> list[str]:
    """The leading ``items`` that exist on disk: the runs of ``RUN ... MEASURE ...``."""
    n = 0
    while n < len(items) and os.path.exists(items[n]):
        n += 1
    return list(items[:n])


def runs_and_measures(
    items: Sequence[str], usage: str, read_run: Callable[[str], Any] | None = None
) -> tuple[dict[str, Any], list]:
    """The run files (``{name: path}``, or a table read at once: see :func:`collect_runs`) and measures of
    the positional arguments ``RUN ... MEASURE ...``: the leading arguments that exist on disk are runs
    (files or directories), the rest measures (``usage``: the command's positional arguments, for the
    messages)."""
    items = list(items)
    n_runs = len(leading_paths(items))
    if n_runs == 0:
        raise CliError(f"run file {items[0]!r} does not exist (give {usage})")
    if n_runs == len(items):
        raise CliError("no measures given after the runs (e.g. 'AP' 'infAP(c=1.5)@10'); see 'ir_incomplete measures'")
    return collect_runs(items[:n_runs], read_run), parse_measures(items[n_runs:])


def run_command(parser: argparse.ArgumentParser, body: Callable[[Any], list[str]], argv: Sequence[str]) -> int:
    """What every subcommand does with its arguments: parse ``argv``, run ``body(args)`` for the output
    lines and write them; a usage or input error is one line on stderr with its exit code, never a
    traceback. Returns the exit code."""
    try:
        args = parser.parse_intermixed_args(list(argv))
        lines = body(args)
    except Exit as done:
        return done.status
    except CliError as error:
        return report_error(error)
    except INPUT_ERRORS as exc:  # anything else that bad input can raise: one line, never a traceback
        return report_error(as_cli_error(exc))
    return write_lines(lines)


def dispatch(command: Callable[[list[str]], int], argv: Sequence[str], name: str | None = None) -> int:
    """Run the command ``command(argv)`` (``name``: the subcommand, ``None`` for the evaluation) and flush
    stdout; returns its exit code. What no command reports itself becomes one line on stderr, prefixed
    ``ir_incomplete <name>:``, never a traceback:

    - Ctrl-C (``KeyboardInterrupt``): ``interrupted``, exit :data:`EXIT_INTERRUPTED` (130);
    - output that cannot be written (:class:`OutputError`, also when the last buffered output is
      flushed here rather than by Python at exit): ``error: cannot write output: <reason>``, exit 1;
      a closed pipe stops quietly, exit 1."""
    prog = PROG if name is None else f"{PROG} {name}"
    try:
        status = command(list(argv))
        flushed = flush_stdout()  # what is still buffered is written (or fails) here, not at exit
    except KeyboardInterrupt:
        with contextlib.suppress(OutputError, KeyboardInterrupt):
            flush_stdout()  # the lines written before the interrupt, or nothing if they cannot be
        _say(f"{prog}: interrupted\n")
        return EXIT_INTERRUPTED
    except OutputError as error:
        _say(f"{prog}: error: {one_line(error)}\n")
        return error.code
    return status or flushed


def _say(text: str) -> None:
    """Write ``text`` to stderr, ignoring a stderr that cannot be written (nowhere left to report)."""
    try:
        sys.stderr.write(text)
        sys.stderr.flush()
    except (OSError, ValueError, AttributeError):
        pass
