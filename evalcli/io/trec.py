"""TREC formats: qrels (``query iter doc rel``) and run files (``query Q0 doc rank score tag``).

Both are whitespace-separated text without a header, read as trec_eval 10 reads them: blank lines
are skipped; a line starting with ``#`` is a comment (in a run after leading blanks too, in qrels
only in the first column, as trec_eval's parsers do); a qrels line has exactly 4 fields; a run
line has at least 6, and anything after the run tag is ignored (trec_eval's ``results.trunc`` has
such lines, "reserved for future expansion"). Which one a file is follows from the number of fields
of its first line (4: qrels, 6 or more: run); every line is then held to that kind, by the same
rule in the check and in the lazy scan. Column names are the ranking task's roles, so a config
needs no ``columns:`` for them:

- qrels: ``query``, ``iteration``, ``item``, ``relevance`` (integer);
- run: ``query``, ``q0``, ``item``, ``rank`` (integer), ``score`` (float), ``tag``.

Query and document ids stay strings, as in trec_eval (``0012`` is not ``12``).

>>> import tempfile, os
>>> d = tempfile.mkdtemp()
>>> p = os.path.join(d, "a.qrels")
>>> _ = open(p, "w").write("# judged by A\\nq1 0 d1 2\\nq1 0 d2 0\\n")
>>> scan_trec(Source(p)).collect().rows()
[('q1', '0', 'd1', 2), ('q1', '0', 'd2', 0)]
>>> r = os.path.join(d, "a.run")
>>> _ = open(r, "w").write("q1 Q0 d1 1 2.5 bm25 reserved words\\n  # a comment\\n")
>>> scan_trec(Source(r)).collect().rows()
[('q1', 'Q0', 'd1', 1, 2.5, 'bm25')]
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from evalcli.errors import InputDataError, clip
from evalcli.io.readers import Source, content_compression, read_head

QRELS = ("query", "iteration", "item", "relevance")
RUN = ("query", "q0", "item", "rank", "score", "tag")
_INT = {"relevance", "rank"}
_FLOAT = {"score"}
_SNIFF_LINES = 50


def _first_lines(path: str) -> list[str]:
    """The first non-empty lines of a (possibly gzip- or zstd-compressed) text file: its head,
    compression told by the content, as :func:`~evalcli.io.readers.scan` reads it."""
    if not Path(path).is_file():
        raise InputDataError(f"cannot read {path}: not a file")
    head = read_head(path, content_compression(path))
    lines = head.data.decode("utf-8", "replace").split("\n")
    if not head.complete:
        lines = lines[:-1]  # cut by the head's size
    return [line for line in lines
            if line.strip() and not line.lstrip().startswith("#")][:_SNIFF_LINES]


def trec_kind(path: str) -> str:
    """``"qrels"`` or ``"run"``, from the number of fields of the first line (comments and blank
    lines skipped): 4 for qrels, 6 or more for a run. Every other line is then held to it (a
    line that is not is an error naming it, from :func:`locate_bad_line`)."""
    lines = _first_lines(path)
    if not lines:
        raise InputDataError(f"{path} is empty (no qrels or run lines)",
                             hint="check that the file was written completely")
    first = lines[0].rstrip("\n")
    count = len(first.split())
    if count == len(QRELS):
        return "qrels"
    if count >= len(RUN):
        return "run"
    raise InputDataError(
        f"{path}: not a TREC qrels (4 fields: query iter doc rel) or run file (6 fields: "
        f"query Q0 doc rank score tag, then anything); its first line has {count} fields: "
        f"{clip(first.strip(), 120)!r}",
        hint="fix the file, or name another format in the config (format: csv, ...)",
    )


def _lines(path: str) -> pl.LazyFrame:
    """The file's lines, one row each (a blank line too: row i is line i)."""
    return pl.scan_csv(
        path, has_header=False, separator="\x1f", quote_char=None,
        new_columns=["line"], schema_overrides={"line": pl.String}, comment_prefix=None,
    )


def _kept(kind: str) -> pl.Expr:
    """The lines trec_eval reads: not blank and not a comment (a run's comment may follow
    blanks; a qrels comment starts in the first column)."""
    line = pl.col("line")
    start = line if kind == "qrels" else line.str.strip_chars_start()
    return (line.str.strip_chars() != "") & ~start.str.starts_with("#")


def _count_ok(kind: str, count: pl.Expr) -> pl.Expr:
    """A line's number of fields is its kind's: exactly 4 for qrels, at least 6 for a run."""
    return count == len(QRELS) if kind == "qrels" else count >= len(RUN)


_LAYOUT = {"qrels": "query iteration doc relevance (an integer)",
           "run": "query Q0 doc rank (an integer) score (a number) tag"}


def locate_bad_line(source: Source, file: str) -> InputDataError | None:
    """The first line of a qrels or run file that :func:`scan_trec` cannot read: a number
    field that does not parse, or another number of fields than the first lines have. Reads
    the file again: call it only when reading it failed."""
    try:
        kind = trec_kind(file)
    except InputDataError:
        return None
    names = QRELS if kind == "qrels" else RUN
    fields = pl.col("line").str.extract_all(r"\S+")
    count = fields.list.len()
    bad = [~_count_ok(kind, count)]
    for i, name in enumerate(names):
        if name in _INT or name in _FLOAT:
            value = fields.list.get(i, null_on_oob=True)
            typed = value.cast(pl.Int64 if name in _INT else pl.Float64, strict=False)
            bad.append(value.is_not_null() & typed.is_null())
    first = (_lines(file).with_row_index("__line", offset=1).filter(_kept(kind))
             .filter(pl.any_horizontal(bad)).head(1).collect())
    if not first.height:
        return None
    number, line = int(first.item(0, "__line")), str(first.item(0, "line"))
    shown = clip(line.strip(), 120)
    got = line.split()
    fix = f"fix the line: a TREC {kind} line is '{_LAYOUT[kind]}'"
    if len(got) != len(names) and (kind == "qrels" or len(got) < len(names)):
        want = f"{len(names)}" if kind == "qrels" else f"at least {len(names)}"
        return InputDataError(
            f"{source.path}: line {number} has {len(got)} fields, not {want} as the "
            f"lines before it ({' '.join(names)}): {shown!r}", hint=fix)
    for i, name in enumerate(names):
        if name in _INT or name in _FLOAT:
            try:
                int(got[i]) if name in _INT else float(got[i])
            except ValueError:
                what = "an integer" if name in _INT else "a number"
                return InputDataError(
                    f"{source.path}: line {number}, field {i + 1} ({name}) holds "
                    f"{clip(got[i], 60)!r}, which is not {what}: {shown!r}", hint=fix)
    return None


def scan_trec(source: Source) -> pl.LazyFrame:
    """A LazyFrame over a qrels or run file, with the ranking roles as column names."""
    kind = trec_kind(source.path)
    names = QRELS if kind == "qrels" else RUN
    lines = _lines(source.path)
    fields = pl.col("__fields")
    ok = _count_ok(kind, fields.list.len())
    exprs = []
    for i, name in enumerate(names):
        col = fields.list.get(i, null_on_oob=True)
        if name in _INT or name in _FLOAT:
            # a line of the wrong length makes its number unreadable, so the scan fails and
            # locate_bad_line names the line (the check and the scan apply the same rule)
            col = pl.when(ok).then(col).otherwise(pl.lit("<wrong number of fields>"))
            col = col.cast(pl.Int64 if name in _INT else pl.Float64)
        exprs.append(col.alias(name))
    return (lines.filter(_kept(kind))
            .select(pl.col("line").str.extract_all(r"\S+").alias("__fields"))
            .select(exprs))


ZSCORES = ("query", "measure", "mean", "stddev")


def scan_zscores(source: Source) -> pl.LazyFrame:
    """trec_eval's z-scores file (``-Z``): ``qid measure mean stddev`` lines, whitespace
    separated (blank lines skipped), as ``query``, ``measure`` (strings), ``mean`` and
    ``stddev`` (floats). A line of another number of fields, or whose numbers do not parse, is
    an error naming it (trec_eval: "Malformed line").

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "zscores")
    >>> _ = open(p, "w").write("301 map 0.1212 0.1545\\n\\n301 P_5 0.4892 0.3703\\n")
    >>> scan_zscores(Source(p)).collect().rows()
    [('301', 'map', 0.1212, 0.1545), ('301', 'P_5', 0.4892, 0.3703)]
    """
    lines = (_lines(source.path).with_row_index("__line", offset=1)
             .filter(pl.col("line").str.strip_chars() != "")
             .with_columns(pl.col("line").str.extract_all(r"\S+").alias("__f")))
    typed = lines.with_columns(
        pl.col("__f").list.get(2, null_on_oob=True).cast(pl.Float64, strict=False).alias("m"),
        pl.col("__f").list.get(3, null_on_oob=True).cast(pl.Float64, strict=False).alias("s"))
    bad = typed.filter((pl.col("__f").list.len() != 4) | pl.col("m").is_null()
                       | pl.col("s").is_null()).head(1).collect()
    if bad.height:
        raise InputDataError(
            f"{source.path}: line {bad.item(0, '__line')} is not 'qid measure mean stddev' (a "
            f"z-scores file, trec_eval -Z): {clip(str(bad.item(0, 'line')).strip(), 120)!r}",
            hint="fix the line (mean and stddev are numbers)")
    return typed.select(*(pl.col("__f").list.get(i).alias(n) for i, n in enumerate(ZSCORES[:2])),
                        pl.col("m").alias("mean"), pl.col("s").alias("stddev"))


PREFS = ("query", "jg", "jsg", "item", "relevance")


def scan_prefs(source: Source, every_line: bool = False) -> pl.LazyFrame:
    """trec_eval's preferences file (``-R prefs``): ``qid jg jsg docno level`` lines (a
    judgment group, a sub-group, the document and its level, a number), whitespace separated;
    blank lines and lines starting with ``#`` are skipped. As a truth file: one row per query
    and document (``query``, ``item``, ``relevance``: its highest level), for the join with the
    run; the preference measures read every line (``every_line``: ``query``, ``jg``, ``jsg``,
    ``item``, ``relevance``) through the ranking task's ``prefs_file``.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "prefs")
    >>> _ = open(p, "w").write("# a user\\nq1 u1 s1 d1 2\\nq1 u1 s1 d2 0\\nq1 u2 s1 d2 3\\n")
    >>> scan_prefs(Source(p)).collect().rows()
    [('q1', 'd1', 2.0), ('q1', 'd2', 3.0)]
    >>> scan_prefs(Source(p), every_line=True).collect().height
    3
    """
    lines = (_lines(source.path).with_row_index("__line", offset=1)
             .filter((pl.col("line").str.strip_chars() != "")
                     & ~pl.col("line").str.starts_with("#"))
             .with_columns(pl.col("line").str.extract_all(r"\S+").alias("__f")))
    typed = lines.with_columns(
        pl.col("__f").list.get(4, null_on_oob=True).cast(pl.Float64, strict=False).alias("r"))
    bad = typed.filter((pl.col("__f").list.len() != 5) | pl.col("r").is_null()).head(1).collect()
    if bad.height:
        raise InputDataError(
            f"{source.path}: line {bad.item(0, '__line')} is not 'qid jg jsg docno level' (a "
            f"preferences file, trec_eval -R prefs): "
            f"{clip(str(bad.item(0, 'line')).strip(), 120)!r}",
            hint="fix the line (five fields, the level a number), or read a qrels file with "
                 "format: trec")
    rows = typed.select(*(pl.col("__f").list.get(i).alias(n) for i, n in enumerate(PREFS[:4])),
                        pl.col("r").alias("relevance"))
    if every_line:
        return rows
    return rows.group_by("query", "item", maintain_order=True).agg(pl.col("relevance").max())


def scan_qrels_jg(source: Source) -> pl.LazyFrame:
    """A qrels file whose second field is a judgment group (trec_eval's ``-R qrels_jg``) as a
    truth file: one row per query and document (``query``, ``item``, ``relevance``: its highest
    level over the groups), for the join with the run; the judgment-group measures read every
    line through the ranking task's ``qrels_jg_file``.

    >>> import tempfile, os
    >>> p = os.path.join(tempfile.mkdtemp(), "qrels")
    >>> _ = open(p, "w").write("q1 0 d1 1\\nq1 1 d1 0\\nq1 1 d2 2\\n")
    >>> scan_qrels_jg(Source(p)).collect().rows()
    [('q1', 'd1', 1), ('q1', 'd2', 2)]
    """
    rows = scan_trec(source)
    if "iteration" not in rows.collect_schema().names():
        raise InputDataError(f"{source.path}: not a qrels file (query jg doc rel lines)",
                             hint="read a run with format: trec")
    return rows.group_by("query", "item", maintain_order=True).agg(pl.col("relevance").max())
