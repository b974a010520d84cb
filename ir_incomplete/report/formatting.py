"""Comparison tables as markdown, LaTeX or TSV: :func:`format_report` (runs × measures, the best value per
measure in bold, significance marks, notes)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from ir_incomplete.report.comparison import (
    _BASELINE_COLUMNS,
    _CORRECTION_NAMES,
    _PAIR_COLUMNS,
    _TEST_NAMES,
    BASELINE_MARK,
    FORMATS,
    _check_digits,
)

if TYPE_CHECKING:
    import pandas as pd
else:
    from ir_incomplete._lazy import pandas as pd

__all__ = ["format_report"]


# ---------------------------------------------------------------------------------------------------
# markdown, LaTeX and TSV
# ---------------------------------------------------------------------------------------------------
def _labels(n: int) -> tuple[list[str], str]:
    """The run labels of a pairwise report and the separator of several labels in one superscript:
    the letters a … z for at most 26 runs (written together, ``ace``), else the numbers 1 … n (written
    with commas, ``3,12,27``)."""
    if n <= 26:
        return [chr(ord("a") + k) for k in range(n)], ""
    return [str(k + 1) for k in range(n)], ","


_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
}


def _latex_escape(text: str) -> str:
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in str(text))


def _markdown_escape(text: str) -> str:
    out = str(text).replace("\n", " ")
    for ch in ("\\", "|", "*", "_", "`", "<", ">"):
        out = out.replace(ch, "\\" + ch)
    return out


def _order(attr, present: list[str]) -> list[str]:
    """``attr`` (the order recorded by compare) restricted to ``present``, then the rest of ``present``."""
    recorded = [x for x in (attr or []) if x in present]
    return recorded + [x for x in present if x not in recorded]


def _grid(table: pd.DataFrame):
    """``(mode, runs, measures, values, marks)``: values runs × measures; marks[r][m] a list of marks."""
    columns = set(table.columns)
    if set(_BASELINE_COLUMNS) <= columns:
        mode = "baseline"
        present = list(dict.fromkeys(table["run"].astype(str)))
    elif set(_PAIR_COLUMNS) <= columns:
        mode = "pairs"
        present = list(dict.fromkeys(list(table["run_a"].astype(str)) + list(table["run_b"].astype(str))))
    else:
        raise ValueError(
            "table is not a compare() result: expected the columns "
            f"{', '.join(_BASELINE_COLUMNS)} (with a baseline) or {', '.join(_PAIR_COLUMNS)} (pairs); "
            f"got {', '.join(map(str, table.columns))}"
        )
    if table.empty:
        raise ValueError("table is empty: nothing to report")
    runs = _order(table.attrs.get("runs"), present)
    measures = _order(table.attrs.get("measures"), list(dict.fromkeys(table["measure"].astype(str))))
    r_of = {r: k for k, r in enumerate(runs)}
    m_of = {m: k for k, m in enumerate(measures)}
    values = np.full((len(runs), len(measures)), np.nan)
    marks: list[list[list[int]]] = [[[] for _ in measures] for _ in runs]
    mi = table["measure"].astype(str).map(m_of).to_numpy()
    significant = table["significant"].to_numpy(dtype=bool)
    if mode == "baseline":
        ri = table["run"].astype(str).map(r_of).to_numpy()
        values[ri, mi] = table["value"].to_numpy(dtype=np.float64)
        for r, m in zip(ri[significant], mi[significant], strict=True):
            marks[r][m].append(-1)
        return mode, runs, measures, values, marks
    ai = table["run_a"].astype(str).map(r_of).to_numpy()
    bi = table["run_b"].astype(str).map(r_of).to_numpy()
    values[ai, mi] = table["value_a"].to_numpy(dtype=np.float64)
    values[bi, mi] = table["value_b"].to_numpy(dtype=np.float64)
    difference = table["difference"].to_numpy(dtype=np.float64)
    for a, b, m, d in zip(ai[significant], bi[significant], mi[significant], difference[significant], strict=True):
        if d > 0:
            marks[a][m].append(b)
        elif d < 0:
            marks[b][m].append(a)
    return mode, runs, measures, values, marks


def _note(table: pd.DataFrame, mode: str, baseline: str, latex: bool) -> str:
    """The sentence that explains the marks (from ``table.attrs``; generic when they are missing)."""
    attrs = table.attrs
    test = attrs.get("test")
    how = ""
    if test in _TEST_NAMES:
        how = f"two-sided {_TEST_NAMES[test]}"
        if attrs.get("B"):
            how += f" with B = {attrs['B']} resamples" + (
                f", seed {attrs['seed']}" if attrs.get("seed") is not None else ""
            )
        if "correction" in attrs:
            family = attrs.get("comparisons")
            how += f", {_CORRECTION_NAMES.get(attrs['correction'], str(attrs['correction']))}"
            if attrs["correction"] is not None and family:
                kind = "comparisons with the baseline" if mode == "baseline" else "pairs of runs"
                how += f" over the {family} {kind} per measure"
    alpha = attrs.get("alpha")
    # in LaTeX the inequality is mathematics ($p < 0.05$): a bare "<" in text mode is another glyph in
    # the OT1 encoding, and "p_adjusted" an error
    if not isinstance(alpha, float):
        level = "the table's significant column"
    elif "correction" in attrs and attrs["correction"] is None:
        level = f"$p < {alpha:g}$" if latex else f"p < {alpha:g}"
    elif "correction" in attrs:
        level = f"adjusted $p < {alpha:g}$" if latex else f"adjusted p < {alpha:g}"
    else:
        level = f"$p_{{\\mathrm{{adjusted}}}} < {alpha:g}$" if latex else f"p_adjusted < {alpha:g}"
    counts = sorted(set(table["topics"].astype(int)))
    topic_text = f"{counts[0]} topics" if len(counts) == 1 else f"{counts[0]}–{counts[-1]} topics per measure"
    if mode == "baseline":
        mark = r"$^{\dagger}$" if latex else BASELINE_MARK
        name = _latex_escape(baseline) if latex else _markdown_escape(baseline)
        what = f"{mark} significantly different from the baseline {name}"
    else:
        kind = "letters" if len(set(table["run_a"]) | set(table["run_b"])) <= 26 else "numbers"
        what = (
            f"superscript {kind}: significantly higher than the run of that {kind[:-1]}"
            if latex
            else f"<sup>{kind}</sup>: significantly higher than the run of that {kind[:-1]}"
        )
    detail = f" ({level}; {how})" if how else f" ({level})"
    design = attrs.get("design_measures")
    if design:  # their marks come from the design-based intervals of the differences
        names = ", ".join(_latex_escape(m) if latex else _markdown_escape(m) for m in design)
        detail += (
            f"; for {names}: the design-based interval of the difference at the level of the intervals "
            f"excludes 0 ({_latex_escape('ir_incomplete.estimate') if latex else 'ir_incomplete.estimate'})"
        )
    return f"{what}{detail}; bold: the highest value per measure; {topic_text}."


def _check_text(value, name: str, allow_none: bool) -> str | None:
    if value is None and allow_none:
        return None
    if not isinstance(value, str) or not value.strip() or "\n" in value:
        raise ValueError(f"{name}={value!r} is not valid; expected a non-empty text of one line")
    return value


def _signed(value: float, digits: int, minus: str) -> str:
    text = f"{value:+.{digits}f}"
    return text.replace("-", minus, 1) if text.startswith("-") else text


def _difference_rows(table: pd.DataFrame, mode: str, runs: list[str], measures: list[str], digits: int, latex: bool):
    """``(row labels, cells, levels)`` of the differences table: one row per comparison (with a baseline:
    each other run minus the baseline; else each pair run_a − run_b), one cell per measure reading
    ``+0.0123 [−0.0012, +0.0258], d_z 0.41``; ``levels`` the distinct CI levels."""
    if "ci_low" not in table.columns or "effect_size" not in table.columns:
        raise ValueError(
            "differences=True needs the columns ci_low, ci_high, ci_level and effect_size of compare(); "
            f"the table has {', '.join(map(str, table.columns))}"
        )
    escape = _latex_escape if latex else _markdown_escape
    minus = "$-$" if latex else "−"
    if mode == "baseline":
        rows = table[table["run"].astype(str) != str(table["baseline"].iloc[0])]
        keys = [str(r) for r in rows["run"]]
        order = [r for r in runs if r in set(keys)]
        label = {r: f"{escape(r)} {minus} {escape(str(table['baseline'].iloc[0]))}" for r in order}
    else:
        rows = table
        keys = [f"{a}\x00{b}" for a, b in zip(rows["run_a"].astype(str), rows["run_b"].astype(str), strict=True)]
        order = list(dict.fromkeys(keys))
        label = {k: f"{escape(k.split(chr(0))[0])} {minus} {escape(k.split(chr(0))[1])}" for k in order}
    cells = {k: {m: "—" for m in measures} for k in order}
    for key, measure, difference, low, high, effect in zip(
        keys,
        rows["measure"].astype(str),
        rows["difference"].to_numpy(dtype=np.float64),
        rows["ci_low"].to_numpy(dtype=np.float64),
        rows["ci_high"].to_numpy(dtype=np.float64),
        rows["effect_size"].to_numpy(dtype=np.float64),
        strict=True,
    ):
        if key in cells and measure in cells[key] and not np.isnan(difference):
            d = _signed(difference, digits, minus)
            lo, hi = _signed(low, digits, minus), _signed(high, digits, minus)
            dz = "$d_z$" if latex else "d_z"
            size = f"{effect:.2f}".replace("-", minus, 1) if np.isfinite(effect) else str(effect).replace("-", minus)
            cells[key][measure] = f"{d} [{lo}, {hi}], {dz} {size}"
    levels = sorted(set(table["ci_level"].dropna().astype(float)))
    return [label[k] for k in order], [[cells[k][m] for m in measures] for k in order], levels


def _difference_note(table: pd.DataFrame, levels: list[float], latex: bool) -> str:
    percent = "\\%" if latex else "%"
    if len(levels) == 1:
        level = f"{100 * levels[0]:.4g}{percent}"
    else:
        column = "ci\\_level" if latex else "ci_level"
        level = f"{100 * levels[0]:.4g}–{100 * levels[-1]:.4g}{percent} (per measure: the {column} column)"
    correction = table.attrs.get("correction")
    why = ""
    # LaTeX: the levels are mathematics (a text-mode "−" or "_" stops pdflatex)
    if correction in ("bonferroni", "holm"):
        m = table.attrs.get("comparisons", "m")
        why = (
            f", the Bonferroni level $1 - \\alpha/{m}$ of the family"
            if latex
            else f", the Bonferroni level 1 − alpha/{m} of the family"
        )
    elif correction == "fdr_bh":
        why = (
            ", the false-coverage-rate level $1 - R\\alpha/m$ of Benjamini \\& Yekutieli"
            if latex
            else ", the false-coverage-rate level 1 − R·alpha/m of Benjamini & Yekutieli"
        )
    dz = "$d_z$" if latex else "d_z"
    design = table.attrs.get("design_measures")
    interval = "paired t confidence interval"
    if design:
        escape = _latex_escape if latex else _markdown_escape
        interval += (
            f" (for {', '.join(escape(m) for m in design)}: the design-based interval of "
            f"{escape('ir_incomplete.estimate') if latex else 'ir_incomplete.estimate'})"
        )
    return (
        f"Difference of the means with its {level} {interval}{why}; "
        f"{dz}: Cohen's effect size, the mean per-topic difference divided by the standard deviation of the "
        "per-topic differences."
    )


def format_report(
    table: pd.DataFrame,
    fmt: str = "markdown",
    *,
    digits: int = 4,
    differences: bool = False,
    caption: str | None = None,
    label: str = "tab:compare",
) -> str:
    """A :func:`compare` table as text: ``"markdown"``, ``"latex"`` or ``"tsv"``.

    Markdown and LaTeX give one row per run and one column per measure (the given orders), values
    rounded to ``digits`` decimals, and a note stating the test, correction, level and number of
    topics (markdown: a paragraph under the table; LaTeX: a footnote-size paragraph under the tabular,
    inside the table). Marks:

    * **bold**: the highest value of each measure (every run that has it, compared unrounded);
    * with a baseline: ``†`` (LaTeX ``$^{\\dagger}$``) after a value significantly different from the
      baseline's (``significant``: p_adjusted < alpha), higher or lower: compare with the baseline's
      row, marked "(baseline)";
    * without a baseline: every run gets a label (column ``#``): the letters a … z for at most 26 runs,
      else the numbers 1 … n; a value carries as superscript (markdown ``<sup>…</sup>``, LaTeX
      ``$^{…}$``) the labels of the runs it is significantly higher than, letters written together
      (``ac``), numbers separated by commas (``3,12,27``); a significant pair with equal values marks
      neither run.

    The note reads "p < alpha" without a correction and "adjusted p < alpha" with one; in LaTeX the
    inequality is set in math mode (``$p < 0.05$``, ``adjusted $p < 0.05$``), as are the levels of the
    differences note (``$1 - \\alpha/m$``).

    ``differences=True`` adds a second table (markdown: under the note; LaTeX: a second ``table``
    labelled ``label + ":differences"``): one row per comparison (each run minus the baseline, or
    run_a − run_b for every pair), one cell per measure with the difference of the means, its
    confidence interval and Cohen's d_z (the ``difference``, ``ci_low``/``ci_high`` and
    ``effect_size`` columns of :func:`compare`), and a note giving the interval's level.

    LaTeX: ``caption`` (default: "Comparison of the runs with the baseline NAME." or "Pairwise
    comparison of the runs.", escaped; a given caption is used as it is) and ``\\label{label}``
    (default ``tab:compare``); the table uses ``booktabs`` rules (``\\usepackage{booktabs}``).
    ``"tsv"``: the table itself, tab-separated with a header line, values at full precision, NaN as an
    empty field (``differences``, ``caption`` and ``label`` do not apply). Run and measure names are
    escaped for markdown and LaTeX.
    """
    if not isinstance(fmt, str) or fmt not in FORMATS:
        raise ValueError(f"fmt={fmt!r} is not valid; choices: {', '.join(FORMATS)}")
    digits = _check_digits(digits)
    if not isinstance(differences, (bool, np.bool_)):
        raise ValueError(f"differences={differences!r} is not valid; expected True or False")
    caption = _check_text(caption, "caption", True)
    label = str(_check_text(label, "label", False))
    if not isinstance(table, pd.DataFrame):
        raise TypeError(f"table must be the DataFrame compare() returns, not {type(table).__name__}")
    mode, runs, measures, values, marks = _grid(table)
    if fmt == "tsv":
        return table.to_csv(sep="\t", index=False, na_rep="", lineterminator="\n")
    latex = fmt == "latex"
    baseline = str(table["baseline"].iloc[0]) if mode == "baseline" else ""
    letters, joiner = _labels(len(runs))
    with np.errstate(invalid="ignore"):
        best = values == np.nanmax(values, axis=0, keepdims=True)
    cells = []
    for r in range(len(runs)):
        row = []
        for m in range(len(measures)):
            value = values[r, m]
            text = "—" if np.isnan(value) else f"{value:.{digits}f}"
            if best[r, m]:
                text = rf"\textbf{{{text}}}" if latex else f"**{text}**"
            found = marks[r][m]
            if mode == "baseline" and found:
                text += r"$^{\dagger}$" if latex else BASELINE_MARK
            elif found:
                sup = joiner.join(letters[k] for k in sorted(found))
                text += f"$^{{{sup}}}$" if latex else f"<sup>{sup}</sup>"
            row.append(text)
        cells.append(row)
    escape = _latex_escape if latex else _markdown_escape
    names = [escape(r) + (" (baseline)" if mode == "baseline" and r == baseline else "") for r in runs]
    head = (["\\#"] if latex else ["#"]) if mode == "pairs" else []
    header = head + ["Run"] + [escape(m) for m in measures]
    body = [([letters[k]] if mode == "pairs" else []) + [names[k]] + cells[k] for k in range(len(runs))]
    note = _note(table, mode, baseline, latex)
    extra = _difference_rows(table, mode, runs, measures, digits, latex) if differences else None
    if not latex:
        lines = _markdown_table(header, body, len(measures))
        text = "\n".join(lines) + "\n\n" + note + "\n"
        if extra is not None:
            rows, diff_cells, levels = extra
            diff_header = ["Comparison"] + [escape(m) for m in measures]
            diff_lines = _markdown_table(
                diff_header, [[r, *c] for r, c in zip(rows, diff_cells, strict=True)], len(measures)
            )
            text += "\n" + "\n".join(diff_lines) + "\n\n" + _difference_note(table, levels, False) + "\n"
        return text
    if caption is None:
        caption = (
            f"Comparison of the runs with the baseline {escape(baseline)}."
            if mode == "baseline"
            else "Pairwise comparison of the runs."
        )
    lines = _latex_table(header, body, len(measures), caption, label, note)
    if extra is not None:
        rows, diff_cells, levels = extra
        diff_header = ["Comparison"] + [escape(m) for m in measures]
        lines += _latex_table(
            diff_header,
            [[r, *c] for r, c in zip(rows, diff_cells, strict=True)],
            len(measures),
            "Differences of the means, with confidence intervals and effect sizes.",
            f"{label}:differences",
            _difference_note(table, levels, True),
        )
    return "\n".join(lines) + "\n"


def _markdown_table(header: list[str], body: list[list[str]], n_values: int) -> list[str]:
    lines = [
        "| " + " | ".join(header) + " |",
        "|" + "|".join(["---"] * (len(header) - n_values) + ["---:"] * n_values) + "|",
    ]
    return lines + ["| " + " | ".join(row) + " |" for row in body]


def _latex_table(header: list[str], body: list[list[str]], n_values: int, caption: str, label: str, note: str):
    spec = "l" * (len(header) - n_values) + "r" * n_values
    lines = [
        "\\begin{table}",
        "\\centering",
        f"\\caption{{{caption}}}",
        f"\\label{{{label}}}",
        f"\\begin{{tabular}}{{{spec}}}",
        "\\toprule",
        " & ".join(header) + " \\\\",
        "\\midrule",
    ]
    lines += [" & ".join(row) + " \\\\" for row in body]
    lines += ["\\bottomrule", "\\end{tabular}", "", "\\smallskip", f"{{\\footnotesize {note}\\par}}", "\\end{table}"]
    return lines
