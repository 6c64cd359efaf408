"""Lazy scans of the input files, with the format from the extension (or the config).

CSV, TSV, Parquet (a file, a glob, or a directory with hive partitions), JSONL/NDJSON, and
gzip/zstd-compressed CSV and JSONL. Nothing is read here but the schema and the head of a text
file (its first 64 KiB, decompressed): errors about missing, empty, mislabelled or malformed
files surface now, with the file's name, instead of in the middle of a computation.

What the head settles, without reading the data twice:

- the compression, from the magic bytes: a file named ``.gz`` (or ``.zst``, or whose input
  mapping names a compression) must be compressed so; a compressed file with a plain name is
  read by its content, as Polars does;
- the encoding: the head must be UTF-8 (else: the line, and the ``encoding:`` option);
- a CSV/TSV header: no column named twice (Polars would rename the second ``x_duplicated_0``),
  not one column that another separator would split (``id;score`` read with ``,``), and rows
  after it (a header alone is not data);
- JSONL: no key twice in a record of the head (Polars would keep one value silently), no
  NaN or Infinity (not JSON), and no key holding a list (or an object) on one line and a single
  value on another (Polars would read every value of it as text);
- line ends: a carriage return alone (old Mac line endings) is refused with the command that
  converts the file (Polars ends lines at LF only: the file would read as one line).

Every ``OSError`` while looking at an input path (a name too long for the system, a folder
that cannot be listed) is one message naming the path, clipped.

A bad byte or value beyond the head fails when the rows are read; :func:`explain_read_error`
then turns Polars' words into the file, the line and the fix (reading the file again only on
that error path).
"""

from __future__ import annotations

import atexit
import codecs
import contextlib
import csv
import errno
import glob as globlib
import gzip
import io
import itertools
import json
import os
import re
import tempfile
import zlib
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Final, Literal

import polars as pl

from evalcli.errors import InputDataError, clip

_EXT = {
    ".csv": "csv",
    ".tsv": "tsv",
    ".tab": "tsv",
    ".txt": "csv",
    ".parquet": "parquet",
    ".pq": "parquet",
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "jsonl",
    ".qrels": "trec",
    ".run": "trec",
    ".trec": "trec",
}
_COMPRESSED = {".gz": "gzip", ".gzip": "gzip", ".zst": "zstd", ".zstd": "zstd"}
_MAGIC = {"gzip": b"\x1f\x8b", "zstd": b"\x28\xb5\x2f\xfd"}
_TEXT = ("csv", "tsv", "jsonl", "trec", "trec_zscores", "trec_prefs", "trec_prefs_lines",
         "trec_qrels_jg")
_HEAD_BYTES = 64 * 1024
"""How much of a text file (decompressed) the checks of :func:`scan` read."""
_HEADER_BYTES = 16 * 1024 * 1024
"""How far the head extends to hold a whole header line (a very wide CSV)."""
_LOSSY: Final = "utf8-lossy"
_SEPARATORS = (",", ";", "\t", "|")


@dataclass(frozen=True)
class Source:
    """An input as the config describes it: where, which format, reader options."""

    path: str
    format: str | None = None
    separator: str | None = None
    compression: str | None = None
    null_values: tuple[str, ...] | None = None
    has_header: bool = True
    frame: pl.LazyFrame | None = field(default=None, compare=False, repr=False)
    """An in-memory input (Python API); ``path`` then only names it in messages."""
    encoding: str | None = None
    """The text encoding of a CSV/TSV/JSONL file: UTF-8 by default; any Python codec name
    (``latin-1``, ``cp1252``, ``utf-16``: the file is decoded to a UTF-8 copy once), or
    ``utf8-lossy`` (invalid bytes read as U+FFFD)."""
    relative_to: str = "the config's folder"
    """Where a relative path starts, for messages (``compare``: the working directory)."""
    floats: tuple[str, ...] = ()
    """Columns of a CSV, TSV or JSONL file read as Float64 whatever their first rows hold
    (:func:`as_floats`)."""


def as_floats(source: Source, columns: Sequence[str]) -> Source | None:
    """``source`` reading ``columns`` as Float64, when it is a text file (CSV, TSV, JSONL),
    else ``None``. Polars infers a column's type from the first 10,000 rows of such a file,
    so a column of numbers whose first rows hold integers would refuse a 0.5 further on."""
    if source.frame is not None or not columns:
        return None
    try:
        fmt = source.format or detect_format(source.path)[0]
    except InputDataError:
        return None
    if fmt not in ("csv", "tsv", "jsonl"):
        return None
    return replace(source, floats=tuple(sorted({*source.floats, *columns})))


def detect_format(path: str) -> tuple[str, str | None]:
    """The format and compression implied by a path.

    >>> detect_format("preds.csv.gz"), detect_format("data/*.parquet"), detect_format("x.tsv")
    (('csv', 'gzip'), ('parquet', None), ('tsv', None))
    """
    if is_stdin(path):
        return detect_format(stdin_file())
    if "://" in path:
        from urllib.parse import urlsplit

        path = urlsplit(path).path or path
    p = Path(path.rstrip("/"))
    compression = _COMPRESSED.get(p.suffix.lower())
    if compression:
        p = p.with_suffix("")
    fmt = _EXT.get(p.suffix.lower())
    if fmt is None and not any(ch in path for ch in "*?[") and Path(path).is_dir():
        fmt = "parquet"
    if fmt is None:
        raise InputDataError(
            f"{path}: cannot tell the file format from the extension '{p.suffix or '(none)'}'",
            hint="name the format in the config, e.g. predictions: {path: ..., format: csv}",
        )
    return fmt, compression


# --------------------------------------------------------------------------- local copies

def _temp_copy(prefix: str, suffix: str, chunks: Iterable[bytes]) -> str:
    """A temporary file holding ``chunks`` (the caller registers it in ``_COPIES``, removed
    at exit); when writing fails it is removed at once and the exception goes on."""
    fd, out = tempfile.mkstemp(prefix=prefix, suffix=suffix)
    try:
        with os.fdopen(fd, "wb") as dst:
            for chunk in chunks:
                dst.write(chunk)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(out)
        raise
    return out


# --------------------------------------------------------------------------- standard input

STDIN: Final = "<stdin>"
"""How standard input is named in messages and reports."""
STDIN_NAMES: Final = ("-", "/dev/stdin", STDIN)
"""Paths that mean standard input (``some_model | evalcli compare - truth.parquet``)."""
_STDIN: dict[int, tuple[object, str]] = {}


def is_stdin(path: str) -> bool:
    """Whether a path means standard input.

    >>> is_stdin("-"), is_stdin("/dev/stdin"), is_stdin("preds.csv")
    (True, True, False)
    """
    return path in STDIN_NAMES


def input_path(path: str, base: Path | None = None) -> str:
    """An input path as the run names it: ``<stdin>`` for ``-``, a URL as given, a local path
    made absolute (relative to ``base``, default the working directory).

    >>> input_path("-"), input_path("s3://b/k.parquet"), input_path("/data/x.csv")
    ('<stdin>', 's3://b/k.parquet', '/data/x.csv')
    """
    if is_stdin(path):
        return STDIN
    if "://" in path:
        return path
    p = Path(path).expanduser()
    return os.path.normpath(p if p.is_absolute() or base is None else base / p) \
        if base is not None else str(p.resolve())


def stdin_file() -> str:
    """Standard input, copied once (per stream) into a temporary file (removed at exit) whose
    name carries the format read from the content: ``PAR1`` is Parquet, gzip/zstd magic is a
    compressed text file, a first line starting ``{`` is JSONL, a tab in the first line and no
    comma is TSV, anything else CSV. The format named in the config (``--format-in``) wins
    over the name. Every later look (head checks, the scan, an error's line) reads the copy."""
    import sys

    stream = sys.stdin
    if id(stream) in _STDIN:  # this stream was copied (kept with its copy: ids stay unique)
        return _STDIN[id(stream)][1]
    if stream is None or stream.isatty():
        raise InputDataError(
            "standard input ('-') is a terminal, not data",
            hint="pipe the file in (some_model | evalcli compare - truth.csv), or give its path")
    raw = getattr(stream, "buffer", None)
    read: Callable[[], bytes] = (lambda: raw.read(1 << 20)) if raw is not None else \
        (lambda: stream.read(1 << 20).encode("utf-8"))
    tmp = _temp_copy("evalcli-stdin-", "", iter(read, b""))
    _COPIES[("stdin", id(stream))] = tmp
    if os.path.getsize(tmp) == 0:
        raise InputDataError("standard input ('-') is empty (no header, no rows)",
                             hint="check the command that writes to evalcli's standard input")
    out = tmp + _stdin_suffix(tmp)
    os.replace(tmp, out)
    _COPIES[("stdin", id(stream))] = out
    _STDIN[id(stream)] = (stream, out)
    return out


def _stdin_suffix(file: str) -> str:
    with open(file, "rb") as fh:
        start = fh.read(4)
    if start == b"PAR1":
        return ".parquet"
    compression = next((kind for kind, magic in _MAGIC.items() if start.startswith(magic)), None)
    zipped = {"gzip": ".gz", "zstd": ".zst"}.get(compression or "", "")
    try:
        first = read_head(file, compression, 4096).data.split(b"\n", 1)[0]
    except (OSError, EOFError, zlib.error, InputDataError):
        first = b""
    if first.lstrip().startswith(b"{"):
        return ".jsonl" + zipped
    if b"\t" in first and b"," not in first:
        return ".tsv" + zipped
    return ".csv" + zipped


def _local(source: Source) -> Source:
    """The source as Polars should open it: standard input's copy for ``-``, a downloaded
    copy for an http(s) URL."""
    if is_stdin(source.path):
        return replace(source, path=stdin_file())
    if is_http(source.path):
        return replace(source, path=http_file(source.path))
    return source


# --------------------------------------------------------------------------- URLs

_URL_HOSTS = {"s3": "s3.amazonaws.com", "s3a": "s3.amazonaws.com",
              "gs": "storage.googleapis.com", "gcs": "storage.googleapis.com"}


def _url_host(url: str) -> tuple[str, int] | None:
    """The host and port a URL's reader connects to first (None when evalcli cannot tell)."""
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        return (parts.hostname or "", parts.port or (443 if scheme == "https" else 80))
    if scheme in _URL_HOSTS:
        endpoint = os.environ.get("AWS_ENDPOINT_URL") if scheme.startswith("s3") else None
        if endpoint:
            e = urlsplit(endpoint)
            return (e.hostname or "", e.port or (443 if e.scheme == "https" else 80))
        return (_URL_HOSTS[scheme], 443)
    return None


def is_http(path: str) -> bool:
    """Whether a path is an http(s) URL (read through a local copy).

    >>> is_http("https://example.org/p.csv"), is_http("s3://b/p.csv"), is_http("p.csv")
    (True, False, False)
    """
    return path.lower().startswith(("http://", "https://"))


def http_file(url: str, timeout: float = 15.0) -> str:
    """An http(s) URL's content, downloaded once per process into a temporary file (removed
    at exit) named with the URL's extension. Polars reads such URLs only from servers that
    answer range requests; a copy reads from any server, and the head checks and error lines
    apply to it as to a local file. An unreachable host, an HTTP error or a cut transfer is
    one message naming the URL."""
    from urllib.error import HTTPError, URLError
    from urllib.parse import urlsplit
    from urllib.request import Request, urlopen

    key = ("http", url)
    if key in _COPIES:
        return _COPIES[key]
    name = Path(urlsplit(url).path).name
    suffix = "".join(Path(name).suffixes[-2:]) if name else ""
    shown = clip_path(url)
    try:
        req = Request(url, headers={"User-Agent": "evalcli"})
        with urlopen(req, timeout=timeout) as resp:
            out = _temp_copy("evalcli-url-", suffix, iter(lambda: resp.read(1 << 20), b""))
    except BaseException as exc:
        if isinstance(exc, HTTPError):
            raise InputDataError(f"cannot read {shown}: the server answered HTTP {exc.code} "
                                 f"{exc.reason}", hint="check the address (and any access "
                                 "token it needs)") from None
        if isinstance(exc, URLError | TimeoutError | OSError):
            reason = getattr(exc, "reason", None) or exc
            if isinstance(reason, TimeoutError) or isinstance(exc, TimeoutError):
                reason = f"no answer in {timeout:g} s"
            elif isinstance(reason, OSError):
                reason = reason.strerror or type(reason).__name__
            raise InputDataError(
                f"cannot reach {shown}: {reason}",
                hint="check the address and the network (or download the file and give its "
                "path)") from None
        raise
    _COPIES[key] = out
    return out


def check_reachable(url: str, timeout: float = 3.0) -> None:
    """Fail fast (one connection attempt, ``timeout`` seconds) when a URL's host cannot be
    reached, instead of Polars' retries (15 s and more offline) ending in "check the file's
    format"."""
    import socket

    target = _url_host(url)
    if target is None:
        return
    host, port = target
    try:
        socket.create_connection((host, port), timeout=timeout).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__ if not isinstance(exc, TimeoutError) \
            else f"no answer in {timeout:g} s"
        raise InputDataError(
            f"cannot reach {clip_path(url)}: {host}:{port}: {reason}",
            hint="check the address and the network (or download the file and give its path)",
        ) from None


# Readers for formats that plug in from elsewhere (e.g. TREC, registered by the ranking family).
EXTRA_READERS: dict[str, Callable[[Source], pl.LazyFrame]] = {}


def _scan_trec(source: Source) -> pl.LazyFrame:
    from evalcli.io.trec import scan_trec

    return scan_trec(source)


EXTRA_READERS["trec"] = _scan_trec


def _scan_trec_zscores(source: Source) -> pl.LazyFrame:
    from evalcli.io.trec import scan_zscores

    return scan_zscores(source)


EXTRA_READERS["trec_zscores"] = _scan_trec_zscores


def _scan_trec_prefs(source: Source) -> pl.LazyFrame:
    from evalcli.io.trec import scan_prefs

    return scan_prefs(source)


def _scan_trec_prefs_lines(source: Source) -> pl.LazyFrame:
    from evalcli.io.trec import scan_prefs

    return scan_prefs(source, every_line=True)


EXTRA_READERS["trec_prefs"] = _scan_trec_prefs


def _scan_trec_qrels_jg(source: Source) -> pl.LazyFrame:
    from evalcli.io.trec import scan_qrels_jg

    return scan_qrels_jg(source)


EXTRA_READERS["trec_qrels_jg"] = _scan_trec_qrels_jg
EXTRA_READERS["trec_prefs_lines"] = _scan_trec_prefs_lines


def clip_path(path: str, limit: int = 160) -> str:
    """A path for a message: cut in the middle when long, keeping its end (the file's name
    and extension), saying how long it is.

    >>> clip_path("/data/" + "p" * 300 + ".csv", 40)
    '/data/ppppppppp…ppppppppppp.csv (310 characters)'
    """
    if len(path) <= limit:
        return path
    half = limit // 2
    return f"{path[:half - 5]}…{path[-(half - 5):]} ({len(path):,} characters)"


def path_error(path: str, exc: OSError | ValueError,
               relative_to: str = "the config's folder") -> InputDataError:
    """An ``OSError`` (or the ``ValueError`` of a NUL byte) met while looking at an input
    path, as one message naming the path (clipped; never the exception's own echo of it)."""
    shown = clip_path(path)
    if isinstance(exc, OSError) and exc.errno == errno.ENAMETOOLONG:
        return InputDataError(
            f"{shown}: the path is too long for this system (a file or folder name may have "
            "255 bytes at most)",
            hint=f"check the path (relative paths start at {relative_to})")
    reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
    return InputDataError(f"cannot read {shown}: {clip(reason, 200)}",
                          hint=f"check the path and its permissions (relative paths start at "
                          f"{relative_to})")


@contextlib.contextmanager
def _looking_at(source: Source) -> Iterator[None]:
    """Any OSError while looking at the source's path (too long for the system, a folder that
    cannot be listed, a file that cannot be opened) as one message; and a NUL byte in it."""
    try:
        yield
    except OSError as exc:
        raise path_error(source.path, exc, source.relative_to) from None
    except ValueError as exc:
        if "null byte" not in str(exc):
            raise
        raise path_error(source.path, exc, source.relative_to) from None


def _exists(path: str, relative_to: str = "the config's folder") -> None:
    if is_stdin(path):
        stdin_file()
        return
    if is_http(path):
        http_file(path)
        return
    if "://" in path:
        check_reachable(path)
        return
    if any(ch in path for ch in "*?["):
        if not globlib.glob(path, recursive=True):
            raise InputDataError(f"no file matches {clip_path(path)}",
                                 hint="check the path or the pattern")
        return
    if not Path(path).exists():
        near = ""
        parent = Path(path).parent
        if parent.is_dir():
            import difflib

            names = [c.name for c in parent.iterdir()]
            close = difflib.get_close_matches(Path(path).name, names, n=1)
            near = f" Did you mean '{clip_path(str(parent / close[0]))}'?" if close else ""
        raise InputDataError(f"file {clip_path(path)} does not exist.{near}",
                             hint=f"check the path (relative paths start at {relative_to})")
    if Path(path).is_dir() and not any(f.is_file() for f in Path(path).rglob("*")):
        raise InputDataError(f"the folder {clip_path(path)} holds no files",
                             hint="point at a Parquet file, a glob such as data/*.parquet, or "
                             "a folder of Parquet files (hive partitions)")


# --------------------------------------------------------------------------- the head

def content_compression(path: str) -> str | None:
    """``"gzip"`` or ``"zstd"`` when the file starts with that format's magic bytes, else None.

    >>> import tempfile, gzip
    >>> f = tempfile.NamedTemporaryFile(suffix=".csv", delete=False)
    >>> _ = f.write(gzip.compress(b"a\\n1\\n")); f.close()
    >>> content_compression(f.name)
    'gzip'
    """
    with open(path, "rb") as fh:
        start = fh.read(4)
    return next((kind for kind, magic in _MAGIC.items() if start.startswith(magic)), None)


def _first_file(path: str) -> str | None:
    """The file a path names, or the first file a glob matches; None for folders and URLs."""
    if is_stdin(path):
        return stdin_file()
    if is_http(path):
        return http_file(path)
    if "://" in path:
        return None
    if any(ch in path for ch in "*?["):
        files = sorted(f for f in globlib.glob(path, recursive=True) if Path(f).is_file())
        return files[0] if files else None
    return path if Path(path).is_file() else None


def _check_compression(source: Source, fmt: str, file: str) -> str | None:
    """The file's compression, from its content; an error when its name or its input mapping
    claims another one. Reads the magic bytes only."""
    actual = content_compression(file)
    suffix = Path(source.path).suffix.lower()
    named = _COMPRESSED.get(suffix)
    claimed = source.compression or named
    if fmt == "parquet":
        if actual or claimed not in (None, "none"):
            raise InputDataError(
                f"{source.path}: a Parquet file compressed as a whole ({actual or claimed}) "
                "cannot be read; Parquet compresses its columns inside the file",
                hint=f"decompress it first (gunzip / unzstd {Path(source.path).name})",
            )
        return None
    if claimed in _MAGIC and actual != claimed:
        what = f"{actual}-compressed" if actual else _describe_start(file)
        if source.compression:
            raise InputDataError(
                f"{source.path}: its input mapping says compression: {claimed}, but the file "
                f"is not {claimed}-compressed: it is {what}",
                hint="remove 'compression:' (evalcli reads gzip and zstd by their content), or "
                f"compress the file with {claimed}",
            )
        raise InputDataError(
            f"{source.path} is named {suffix} but is not {claimed}-compressed: it is {what}",
            hint=f"rename it without '{suffix}' (or set compression: none in its input "
            f"mapping), or compress it with {claimed}",
        )
    if claimed == "none" and actual:
        raise InputDataError(
            f"{source.path} is {actual}-compressed, but its input mapping says compression: none",
            hint="remove 'compression: none' (evalcli reads gzip and zstd by their content)",
        )
    return actual


def _describe_start(file: str) -> str:
    with open(file, "rb") as fh:
        start = fh.read(256)
    if not start:
        return "empty"
    try:
        start.decode("utf-8")
    except UnicodeDecodeError as exc:
        if exc.start < len(start) - 3:  # not just a character cut at the end
            return f"something else (it starts with {start[:8]!r})"
    return "plain text"


@dataclass(frozen=True)
class Head:
    """The first bytes of a text file, decompressed, cut after a line end when possible."""

    data: bytes
    complete: bool
    """The whole file is in ``data``."""
    lossy: bool = False
    """Invalid UTF-8 bytes were read as U+FFFD (a zstd file that is not UTF-8)."""


def read_head(file: str, compression: str | None, size: int = _HEAD_BYTES) -> Head:
    """The first ``size`` bytes of ``file`` (decompressed), extended to hold the first line
    (up to 16 MiB). A zstd file's head comes from Polars (Python 3.11 has no zstd): lossy
    when the file is not UTF-8."""
    if compression == "zstd":
        return _zstd_head(file, size)
    opener: Callable[[str], Any] = gzip.open if compression == "gzip" else \
        (lambda f: open(f, "rb"))  # noqa: SIM115
    try:
        with opener(file) as fh:
            data = fh.read(size)
            while b"\n" not in data and len(data) < _HEADER_BYTES:
                more = fh.read(size)
                if not more:
                    break
                data += more
            complete = not fh.read(1)
    except (OSError, EOFError, zlib.error) as exc:
        if compression is None and isinstance(exc, OSError):
            raise path_error(file, exc) from None
        raise _corrupt(file, compression or "gzip", str(exc)) from None
    return Head(data, complete)


def _corrupt(file: str, compression: str, reason: str) -> InputDataError:
    """A compressed file (told by its name, or by its magic bytes alone) that cannot be
    decompressed."""
    why = clip(reason.strip().splitlines()[0] if reason.strip() else "", 100)
    if _COMPRESSED.get(Path(file).suffix.lower()) == compression:
        return InputDataError(f"{file}: the {compression} data is truncated or corrupt ({why})",
                              hint="write or download the file again")
    magic = " ".join(f"{b:02X}" for b in _MAGIC[compression])
    return InputDataError(
        f"{file} starts with the {compression} magic bytes ({magic}), so it is read as "
        f"{compression}-compressed, but the {compression} data is truncated or corrupt ({why})",
        hint=f"if it is {compression}-compressed, write or download it again; if it is meant "
        "to be plain text, its first bytes are wrong",
    )


def _zstd_head(file: str, size: int) -> Head:
    lines_wanted = max(size // 64, 2)

    def lines(encoding: Literal["utf8", "utf8-lossy"]) -> list[str | None]:
        return pl.scan_csv(file, has_header=False, separator="\x1f", quote_char=None,
                           encoding=encoding, infer_schema=False, n_rows=lines_wanted,
                           comment_prefix=None).collect().to_series().to_list()

    try:
        try:
            got, lossy = lines("utf8"), False
        except pl.exceptions.ComputeError:
            got, lossy = lines("utf8-lossy"), True
    except (pl.exceptions.PolarsError, OSError) as exc:
        # Polars raises OSError ("incomplete frame") for a file cut inside a zstd frame
        raise _corrupt(file, "zstd", _first(exc)) from None
    return Head("".join((line or "") + "\n" for line in got).encode(),
                len(got) < lines_wanted, lossy=lossy)


def _line_at(data: bytes, pos: int) -> tuple[int, bytes]:
    """The 1-based number and the bytes of the line holding byte ``pos``."""
    start = data.rfind(b"\n", 0, pos) + 1
    end = data.find(b"\n", pos)
    return data.count(b"\n", 0, pos) + 1, data[start:end if end >= 0 else len(data)]


def _show(raw: bytes) -> str:
    """A line of the file for a message: invalid bytes as \\xNN, capped."""
    text = clip(raw.rstrip(b"\r\n").decode("utf-8", "backslashreplace"))
    return "'" + "".join(c if c.isprintable() else repr(c)[1:-1] for c in text) + "'"


def _utf8_error(source: Source, line: int, raw: bytes, bad: bytes) -> InputDataError:
    """Line ``line`` (``raw``) holds the invalid bytes ``bad`` (empty: not known, the line
    came through a lossy reader with U+FFFD in their place)."""
    name = Path(source.path).name
    guess = "utf-16" if line == 1 and raw.startswith((b"\xff\xfe", b"\xfe\xff")) else "latin-1"
    what = f"the byte(s) {' '.join(f'0x{b:02X}' for b in bad)}" if bad else \
        "a byte that is not UTF-8 (shown as \ufffd)"
    option = "" if not bad else (  # a zstd file (bad unknown) is read in UTF-8 only
        f", or name its encoding where the config names the file: {{path: {name}, encoding: "
        f"{guess}}} (encoding: utf8-lossy reads bad bytes as U+FFFD)")
    return InputDataError(
        f"{source.path} is not valid UTF-8: line {line} holds {what}: {_show(raw)}",
        hint=f"re-encode the file as UTF-8 (iconv -f {guess} -t utf-8){option}",
    )


def _check_utf8(source: Source, head: Head) -> None:
    if head.lossy:
        if (pos := head.data.find("\ufffd".encode())) >= 0:
            line, raw = _line_at(head.data, pos)
            raise _utf8_error(source, line, raw, b"")
        return
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head.data, final=head.complete)
    except UnicodeDecodeError as exc:
        line, raw = _line_at(head.data, exc.start)
        raise _utf8_error(source, line, raw, head.data[exc.start:exc.end]) from None


_LONE_CR = re.compile(rb"\r(?!\n)")
_QUOTED = re.compile(rb'"(?:[^"]|"")*"')


def _check_line_ends(source: Source, fmt: str, head: Head, compression: str | None) -> None:
    """Old Mac line endings (a carriage return alone ends each line): Polars ends lines at LF
    only, so such a file reads as one line (a CSV header naming every value). A CR inside a
    quoted CSV field, or between the tokens of a JSON record, is no line end."""
    first = head.data.split(b"\n", 1)[0].rstrip(b"\r")
    if fmt in ("csv", "tsv"):
        first = _QUOTED.sub(b"", first)
    pieces = _LONE_CR.split(first)
    if len(pieces) < 2:
        return
    if fmt == "jsonl":
        try:
            json.loads(first)
            return  # one record, with CRs between its tokens
        except ValueError:
            pass
        try:
            json.loads(pieces[0])
        except ValueError:
            return  # not records ended by CRs: the JSON checks say what is wrong
    name = clip(Path(source.path).name, 100)
    fixed = re.sub(r"^([^.]*)", r"\1-lf", name, count=1)
    convert = {
        "gzip": f"gunzip -c {name} | tr '\\r' '\\n' | gzip > {fixed}",
        "zstd": f"zstd -dc {name} | tr '\\r' '\\n' | zstd > {fixed}",
    }.get(compression or "", f"tr '\\r' '\\n' < {name} > {fixed} (or mac2unix {name})")
    raise InputDataError(
        f"{source.path}: line 1 ends with a carriage return alone (CR, the old Mac line "
        f"ending) before {_show(pieces[1])}; evalcli reads lines ended by LF or CRLF, so the "
        "whole file would be one line",
        hint=f"convert the line endings to LF: {convert}, and read the converted file",
    )


def _check_csv_head(source: Source, head: Head, sep: str) -> None:
    """Duplicated column names, a wrong separator, a header without rows."""
    text = head.data.decode("utf-8", "replace").removeprefix("\ufeff")
    line, _, rest = text.partition("\n")
    line = line.rstrip("\r")
    if not line.strip():
        return
    try:
        names = next(csv.reader([line], delimiter=sep, quotechar='"'), [])
    except csv.Error:  # a line Python's csv refuses (Polars reads it its own way)
        names = line.split(sep)
    where: dict[str, list[int]] = {}
    for i, n in enumerate(names, 1):
        where.setdefault(n, []).append(i)
    # unnamed columns (a trailing separator, as spreadsheets write) name nothing to pick
    dups = {n: pos for n, pos in where.items() if len(pos) > 1 and n.strip()}
    if dups:
        said = "; ".join(f"'{clip(n, 60)}' (columns {_and(pos)})" for n, pos in
                         list(dups.items())[:3])
        raise InputDataError(
            f"{source.path}: the header names a column more than once: {said}",
            hint="rename or remove the extra column(s); evalcli does not guess which one is "
            "meant",
        )
    if len(names) == 1 and names[0] == line:  # one column, and not a quoted name
        for other in _SEPARATORS:
            if other != sep and len([p for p in line.split(other) if p.strip()]) >= 2:
                raise InputDataError(
                    f"{source.path}: the header {clip(line)!r} is one column when split on "
                    f"{sep!r}, but it holds {other!r}: the file looks {other!r}-separated",
                    hint="name the separator where the config names the file: "
                    f"{{path: {Path(source.path).name}, separator: {json.dumps(other)}}}",
                )
    if head.complete and not rest.strip():
        raise InputDataError(
            f"{source.path} has no data rows, only a header ({clip(line)})",
            hint="check that the file was written completely",
        )
    _check_fields(source, head, sep)


def _check_fields(source: Source, head: Head, sep: str) -> None:
    """No row of the head holds more fields than the header names. Polars skips such a field
    without a word when it reads only some of the columns, and the usual cause shifts values
    into the wrong columns: a value holding the separator unquoted (``1,0,0,9`` for a score of
    0,9). Rows with fewer fields read nulls in the missing columns, which the checks of the
    rows report. Only the head is read (the whole file is not, to keep a run fast)."""
    found = _wide_row(source, _whole_lines(head), sep)
    if found is not None:
        raise found


def _whole_lines(head: Head) -> io.StringIO:
    """The head's text for a csv reader: decoded, its byte-order mark dropped, and cut after
    its last whole line when the file goes on beyond it."""
    text = head.data.decode("utf-8", "replace").removeprefix("\ufeff")
    if not head.complete:
        text = text[:text.rfind("\n") + 1]
    return io.StringIO(text, newline="")


def _wide_row(source: Source, lines: Iterable[str], sep: str) -> InputDataError | None:
    """The first row of ``lines`` (the header first) with more fields than the header."""
    rows = csv.reader(lines, delimiter=sep, quotechar='"')
    try:
        header = next(rows, None)
        if header is None:
            return None
        width = len(header)
        for row in rows:
            if len(row) > width:
                return InputDataError(
                    f"{source.path}: line {rows.line_num} holds {len(row)} fields where the "
                    f"header names {width} ({clip(sep.join(row))!r}); a value holding the "
                    f"separator {sep!r} unquoted (a decimal comma?) would shift the values after "
                    "it into other columns",
                    hint="quote such values or write them with a '.'; a separator ending every "
                    "line belongs on the header's line too")
    except csv.Error:  # a line Python's csv refuses: Polars reads it its own way
        return None
    return None


def _locate_wide_row(source: Source, fmt: str, file: str, compression: str | None
                     ) -> InputDataError | None:
    """The row behind Polars' "found more fields than defined" (a row wider than the header
    beyond the head that :func:`_check_fields` reads)."""
    if compression == "zstd" or not source.has_header:
        return None
    with _opened(file, compression, text=True) as fh:
        return _wide_row(source, fh, _separator(source, fmt))


def _and(items: Sequence[int]) -> str:
    return " and ".join([", ".join(map(str, items[:-1])), str(items[-1])]) if len(items) > 1 \
        else str(items[0])


class _DuplicateKey(ValueError):
    pass


class _NotJson(ValueError):
    """NaN, Infinity or -Infinity: Python's json reads them, JSON (and Polars) does not."""


def _no_constant(token: str) -> Any:
    raise _NotJson(token)


def _not_json(source: Source, line: int, token: str, raw: bytes) -> InputDataError:
    return InputDataError(
        f"{source.path}: line {line} holds {token}, which is not JSON (JSON has no NaN or "
        f"Infinity): {_show(raw)}",
        hint="write null for a missing value (Python: json.dumps(..., allow_nan=False) refuses "
        "NaN; replace NaN by None first), or drop the row",
    )


def _kind(value: Any) -> str | None:
    if value is None:
        return None
    return "a list" if isinstance(value, list) else "an object" if isinstance(value, dict) \
        else "a single value"


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    seen: dict[str, Any] = {}
    for k, v in pairs:
        if k in seen:
            raise _DuplicateKey(k)
        seen[k] = v
    return seen


def _check_jsonl_head(source: Source, head: Head) -> None:
    """In the records of the head: no key named twice (Polars keeps one of the values
    silently), no NaN or Infinity (not JSON), and no key holding a list or an object on one
    line and a single value (or the other) on another: Polars reads every value of such a key
    as its JSON text (``[1, 2]`` becomes one label). Other syntax errors are left to Polars,
    whose failure :func:`explain_read_error` locates."""
    if head.complete and not head.data.strip():
        raise InputDataError(f"{source.path} is empty (no records)",
                             hint="check that the file was written completely")
    if head.data.startswith(codecs.BOM_UTF8):
        raise InputDataError(f"{source.path} begins with a byte-order mark (BOM: the bytes EF BB "
                             "BF), which a JSONL reader does not take",
                             hint="save the file as UTF-8 without a BOM (or decompress it: "
                             "a plain or gzip file's mark is skipped)")
    lines = head.data.split(b"\n")
    if not head.complete:
        lines = lines[:-1]  # cut by the head's size
    first: dict[str, tuple[str, int, Any]] = {}  # key -> kind, line, value of its first value
    for i, raw in enumerate(lines, 1):
        if not raw.strip():
            continue
        try:
            record = json.loads(raw, object_pairs_hook=_no_duplicate_keys, strict=False,
                                parse_constant=_no_constant)
        except _DuplicateKey as exc:
            raise InputDataError(
                f"{source.path}: line {i} names the key '{clip(str(exc), 60)}' twice: "
                f"{_show(raw)}",
                hint="remove one of the two; evalcli does not guess which value is meant",
            ) from None
        except _NotJson as exc:
            raise _not_json(source, i, str(exc), raw) from None
        except ValueError:
            return
        if not isinstance(record, dict):
            return
        for key, value in record.items():
            kind = _kind(value)
            if kind is None:
                continue
            seen = first.setdefault(key, (kind, i, value))
            if seen[0] != kind:
                raise _mixed_kinds(source, key, (kind, i, value), seen)


def _mixed_kinds(source: Source, key: str, here: tuple[str, int, Any],
                 before: tuple[str, int, Any]) -> InputDataError:
    def shown(value: Any) -> str:
        return clip(json.dumps(value, ensure_ascii=False), 60)

    k = clip(key, 60)
    single = next((v for kind, _, v in (here, before) if kind == "a single value"), "x")
    example = clip(json.dumps([single], ensure_ascii=False), 60)
    return InputDataError(
        f"{source.path}: line {here[1]}: the key '{k}' holds {here[0]} ({shown(here[2])}), "
        f"but on line {before[1]} it holds {before[0]} ({shown(before[2])}); Polars would read "
        f"every value of '{k}' as text (a list as one label)",
        hint=f"write every value of '{k}' the same way: all lists ({example} for one label) "
        "or all single values",
    )


# --------------------------------------------------------------------------- encodings

_COPIES: dict[tuple[Any, ...], str] = {}


def _remove_copies() -> None:
    for path in _COPIES.values():
        with contextlib.suppress(OSError):
            os.unlink(path)


atexit.register(_remove_copies)


def _encoding(source: Source) -> str:
    """The normalized encoding: ``utf-8``, ``utf8-lossy`` or a Python codec's name."""
    enc = (source.encoding or "utf-8").strip().lower()
    if enc.replace("-", "").replace("_", "") == "utf8lossy":
        return _LOSSY
    try:
        name = codecs.lookup(enc).name
    except LookupError:
        raise InputDataError(
            f"{source.path}: unknown encoding {clip(source.encoding or '', 60)!r}",
            hint="name a Python codec such as latin-1, cp1252, utf-16, or utf8-lossy",
        ) from None
    return "utf-8" if name in ("utf-8", "utf-8-sig") else name


def _utf8_copy(source: Source, file: str, compression: str | None, encoding: str) -> str:
    """A UTF-8 copy of a text file in another encoding, decoded once per process (streamed
    in 1 MiB pieces; Polars then scans the copy lazily)."""
    st = os.stat(file)
    key = (os.path.abspath(file), encoding, st.st_mtime_ns, st.st_size)
    if key in _COPIES:
        return _COPIES[key]
    if compression == "zstd":
        raise InputDataError(
            f"{source.path}: a zstd-compressed file can be read in UTF-8 only (encoding: "
            f"{encoding})",
            hint="decompress it, or re-encode it as UTF-8 (iconv -t utf-8)",
        )
    errors = "replace" if encoding == _LOSSY else "strict"
    codec = "utf-8" if encoding == _LOSSY else encoding
    def decoded() -> Iterator[bytes]:
        decoder = codecs.getincrementaldecoder(codec)(errors)
        done = 0
        for chunk in itertools.chain(_chunks(file, compression), [b""]):
            try:
                yield decoder.decode(chunk, final=not chunk).encode("utf-8")
            except UnicodeDecodeError as exc:
                where = f"byte {done + exc.start:,}" + (" (decompressed)" if compression
                                                        else "")
                raise InputDataError(
                    f"{source.path} is not valid {encoding}: {where} is {exc.reason}",
                    hint="name the file's actual encoding, or re-encode it as UTF-8",
                ) from None
            done += len(chunk)

    try:
        out = _temp_copy("evalcli-utf8-", Path(file).suffix or ".txt", decoded())
    except BaseException as exc:
        if isinstance(exc, OSError | EOFError | zlib.error):
            raise InputDataError(f"cannot read {source.path}: {exc}",
                                 hint="check the file (a truncated or corrupt download?)"
                                 ) from None
        raise
    _COPIES[key] = out
    return out


# --------------------------------------------------------------------------- scan

def _prepare_text(source: Source, fmt: str) -> tuple[Source, bool]:
    """Check the head of a text file; the source to read (a UTF-8 copy for another encoding)
    and whether Polars should read it lossily."""
    encoding = _encoding(source)
    lossy = encoding == _LOSSY and fmt in ("csv", "tsv")
    file = _first_file(source.path)
    if file is None:  # a URL or a glob: Polars reads it, in UTF-8
        if encoding != "utf-8" and not lossy:
            raise InputDataError(
                f"{source.path}: encoding: {encoding} is supported for a local file, not for "
                f"{'a URL' if '://' in source.path else 'a glob'}",
                hint="re-encode the file(s) as UTF-8 (or use encoding: utf8-lossy for CSV)")
        return source, lossy
    compression = _check_compression(source, fmt, file)
    read, named = source, compression
    if encoding != "utf-8" and not lossy:
        read = replace(source, path=_utf8_copy(source, file, compression, encoding),
                       encoding=None)
        file, compression = read.path, None
    head = read_head(file, compression)
    if fmt == "jsonl" and head.data.startswith(codecs.BOM_UTF8) and read is source \
            and compression != "zstd":
        # a byte-order mark (Windows tools write one) is not JSON: read a copy without it
        read = replace(source, path=_utf8_copy(source, file, compression, "utf-8-sig"),
                       encoding=None)
        file, compression = read.path, None
        head = read_head(file, compression)
    if not lossy:
        _check_utf8(source, head)
    _check_line_ends(source, fmt, head, named)
    if fmt in ("csv", "tsv") and source.has_header:
        _check_csv_head(source, head, _separator(source, fmt))
    elif fmt == "jsonl":
        _check_jsonl_head(source, head)
    return read, lossy


def check_source(source: Source) -> None:
    """The checks :func:`scan` makes before Polars reads a file, for another reader (engine
    spark): the file exists, and a local text file's head (compression, UTF-8, header, JSONL
    keys; with another ``encoding`` only the compression, the reader decoding it). Cheap: the
    head only, no copy."""
    if source.frame is not None:
        return
    with _looking_at(source):
        _check_source(source)


def _check_source(source: Source) -> None:
    _exists(source.path, source.relative_to)
    fmt = source.format or detect_format(source.path)[0]
    file = _first_file(source.path)
    if file is None or fmt not in (*_TEXT, "parquet"):
        return
    if fmt == "parquet" or _encoding(source) != "utf-8":
        _check_compression(source, fmt, file)
        return
    _prepare_text(source, fmt)


def _separator(source: Source, fmt: str) -> str:
    return source.separator or ("\t" if fmt == "tsv" else ",")


def scan(source: Source) -> pl.LazyFrame:
    """A LazyFrame over the source; its schema is checked now (cheap), its rows later."""
    if source.frame is not None:
        try:
            schema = source.frame.collect_schema()
        except (pl.exceptions.PolarsError, OSError) as exc:  # a plan that cannot resolve
            raise InputDataError(f"{source.path}: the LazyFrame cannot be read: "
                                 f"{clip(_first(exc))}",
                                 hint="check the frame's plan (its columns, the files it "
                                 "scans) with .collect_schema() before passing it") from None
        if not schema:
            raise InputDataError(f"{source.path} has no columns")
        return source.frame
    with _looking_at(source):
        return _scan(source)


def _scan(source: Source) -> pl.LazyFrame:
    _exists(source.path, source.relative_to)
    # a format named in the config wins, even when the extension says nothing (data.out)
    fmt = source.format or detect_format(source.path)[0]
    read, lossy = _local(source), False
    if fmt in _TEXT:
        read, lossy = _prepare_text(source, fmt)
        read = _local(read)
    elif fmt == "parquet":
        if _encoding(source) != "utf-8":
            raise InputDataError(f"{source.path}: encoding applies to text files (CSV, TSV, "
                                 "JSONL); Parquet text is UTF-8", hint="remove 'encoding:'")
        file = _first_file(source.path)
        if file is not None:
            _check_compression(source, fmt, file)
    lf: pl.LazyFrame
    try:
        if fmt in ("csv", "tsv"):
            lf = pl.scan_csv(
                read.path, separator=_separator(source, fmt), has_header=source.has_header,
                null_values=list(source.null_values) if source.null_values else None,
                infer_schema_length=10_000, encoding="utf8-lossy" if lossy else "utf8",
                schema_overrides=dict.fromkeys(source.floats, pl.Float64) or None,
            )
        elif fmt == "parquet":
            path = read.path
            if Path(path).is_dir():
                lf = pl.scan_parquet(path, hive_partitioning=True)
            else:
                lf = pl.scan_parquet(path, hive_partitioning=None)
        elif fmt == "jsonl":
            lf = pl.scan_ndjson(read.path, infer_schema_length=10_000)
            if source.floats:  # (a list of integers as a list of floats)
                wider = lf.collect_schema()
                lf = pl.scan_ndjson(read.path, infer_schema_length=10_000, schema_overrides={
                    c: pl.List(pl.Float64) if isinstance(wider.get(c), pl.List) else pl.Float64
                    for c in source.floats})
        elif fmt in EXTRA_READERS:
            lf = EXTRA_READERS[fmt](read)
        else:
            raise InputDataError(f"{source.path}: format '{fmt}' is not readable here",
                                 hint="use csv, tsv, parquet or jsonl")
        schema = lf.collect_schema()
    except pl.exceptions.NoDataError:
        raise InputDataError(f"{source.path} is empty (no header, no rows)",
                             hint="check that the file was written completely") from None
    except pl.exceptions.DuplicateError as exc:
        m = re.search(r"name '([^']*)'", str(exc))
        col = f"'{clip(m.group(1), 60)}'" if m else "of a column"
        raise InputDataError(f"{source.path}: the column name {col} appears more than once",
                             hint="rename or drop the extra column (evalcli does not guess "
                             "which one is meant)") from None
    except (pl.exceptions.ComputeError, pl.exceptions.SchemaError, OSError) as exc:
        explained = explain_read_error([source], exc) if isinstance(
            exc, pl.exceptions.PolarsError) else None
        if explained is not None:
            raise explained from None
        raise InputDataError(f"cannot read {source.path} as {fmt}: {clip(_first(exc))}",
                             hint="check the file's format, or set format/separator in the "
                             "config") from None
    if not schema:
        raise InputDataError(f"{source.path} has no columns")
    return lf


def _first(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# --------------------------------------------------------------------------- read errors

_JSON_SYNTAX = re.compile(r"syntax|character \d+|EOF|parse|json|expected", re.I)
_JSON_TYPE = re.compile(r"cannot parse '(.*?)' \(\w+\) as ")
_PARSE = re.compile(r"could not parse `(.*?)` as dtype `(.*?)` at column '(.*?)'", re.S)


def explain_read_error(sources: Sequence[Source | None], exc: BaseException
                       ) -> InputDataError | None:
    """The file, the line and the fix behind a Polars error raised while reading ``sources``
    (invalid UTF-8, a value that does not parse as its column's type, bad JSON), or None when
    the error is not about reading them. Reads the files again: call it only on that error."""
    if not isinstance(exc, pl.exceptions.PolarsError):
        return None
    text = str(exc)
    for source in sources:
        if source is None or source.frame is not None or "://" in source.path:
            continue
        try:
            fmt = source.format or detect_format(source.path)[0]
        except InputDataError:
            continue
        if fmt not in _TEXT:
            continue
        file = _first_file(source.path)
        if file is None:
            continue
        try:
            found = _explain_one(source, fmt, file, text)
        except (OSError, EOFError, zlib.error, pl.exceptions.PolarsError):
            found = None
        if found is not None:
            return found
    return None


def _explain_one(source: Source, fmt: str, file: str, text: str) -> InputDataError | None:
    try:
        encoding = _encoding(source)
    except InputDataError:
        return None
    compression = content_compression(file)
    if "utf-8" in text.lower() or "utf8" in text.lower():
        if encoding != "utf-8":
            return None
        return _locate_invalid_utf8(source, file, compression)
    if "more fields than defined" in text and fmt in ("csv", "tsv"):
        return _locate_wide_row(source, fmt, file, compression)
    m = _PARSE.search(text)
    if m and fmt in ("csv", "tsv") and _unfinished(m.group(1)):
        return _locate_open_quote(source, file, compression, m.group(1))
    if m and fmt in ("csv", "tsv"):
        return _locate_value(source, fmt, file, *m.groups())
    typed = _JSON_TYPE.search(text)
    if fmt == "jsonl" and encoding == "utf-8" and typed:
        found = _locate_json_value(source, file, compression, typed.group(1))
        if found is not None:
            return found
    if fmt == "jsonl" and encoding == "utf-8" and _JSON_SYNTAX.search(text):
        return _locate_bad_json(source, file, compression)
    if fmt == "trec":
        from evalcli.io.trec import locate_bad_line

        return locate_bad_line(source, file)
    return None


def explain_no_rows(source: Source) -> InputDataError:
    """Why ``source`` gave the run no rows, read again (call it only then): a header without
    rows; a CSV whose first row opens a quote that is never closed (Polars counts no row, the
    rest of the file being one unfinished value); a file that does not read at all; or rows
    whose every list is empty (a ranking's item lists), which leave nothing to evaluate."""
    plain = InputDataError(f"{source.path} has no data rows (a header only)",
                           hint="check that the file was written completely")
    if source.frame is not None or "://" in source.path:
        return plain
    try:
        fmt = source.format or detect_format(source.path)[0]
        file = _first_file(source.path)
        if file is not None and fmt in ("csv", "tsv") and _encoding(source) == "utf-8":
            quote = _open_quote(source, file)
            if quote is not None:
                return quote
        rows = scan(source).collect()
    except InputDataError as exc:
        return exc
    except pl.exceptions.PolarsError as exc:
        return explain_read_error([source], exc) or InputDataError(
            f"cannot read {source.path}: {clip(_first(exc))}",
            hint="check the file's format, or set format/separator in the config")
    lists = [name for name, dtype in rows.schema.items()
             if isinstance(dtype, pl.List | pl.Array)
             and not (rows[name].cast(pl.List(dtype.inner)).list.len().fill_null(0) > 0).any()]
    if rows.height and lists:
        said = ", ".join(f"'{clip(n, 60)}'" for n in lists[:3])
        return InputDataError(
            f"{source.path}: every list in column {said} is empty (or null), on all "
            f"{rows.height:,} row(s): no element is left to evaluate",
            hint="check that the file was written completely; a list names its elements, "
            'e.g. {"query": "q1", "item": ["d1", "d2"]}')
    return plain


def blank_line(source: Source) -> int | None:
    """The first blank line after the header in the head of a CSV or TSV file (Polars reads
    it as a row of nulls), for the message about null values; ``None`` for other files."""
    try:
        fmt = source.format or detect_format(source.path)[0]
        file = None if source.frame is not None or "://" in source.path else \
            _first_file(source.path)
        if file is None or fmt not in ("csv", "tsv"):
            return None
        head = read_head(file, content_compression(file))
    except (InputDataError, OSError):
        return None
    rows = csv.reader(_whole_lines(head), delimiter=_separator(source, fmt), quotechar='"')
    try:
        if source.has_header:
            next(rows, None)
        # (a blank line inside a quoted value is part of the value, not an empty row)
        return next((rows.line_num for row in rows if not row or row == [""]), None)
    except csv.Error:
        return None


def _open_quote(source: Source, file: str) -> InputDataError | None:
    """The first data line of a CSV file, when it opens a quote that no later line closes."""
    head = read_head(file, content_compression(file))
    lines = head.data.decode("utf-8", "replace").removeprefix("\ufeff").split("\n")
    skip = 1 if source.has_header else 0
    for i, line in enumerate(lines[skip:], skip + 1):
        if line.strip():
            return _quote_left_open(source, i, line) if line.count('"') % 2 else None
    return None


def _quote_left_open(source: Source, line: int, text: str) -> InputDataError:
    return InputDataError(
        f"{source.path}: line {line} opens a quote (\") that is never closed, so the rest of "
        f"the file reads as one unfinished value: {clip(text.rstrip(chr(13)))!r}",
        hint='close the quote; a quote inside a quoted value is written twice ("")')


def _unfinished(value: str) -> bool:
    r"""Whether Polars' quoted ``value`` is a quote opened and never closed: it spans lines and
    does not end with its closing quote (``"0.5\nx"`` is a closed value, not a number).

    >>> _unfinished('"0.8\n4,0,0.2\n'), _unfinished('"0.5\nx"'), _unfinished('"a ""b""\nc')
    (True, False, True)
    """
    if not value.startswith('"') or "\n" not in value:
        return False
    inner = value[1:].rstrip("\r\n").replace('""', "")
    return not inner.endswith('"')


def _locate_open_quote(source: Source, file: str, compression: str | None, value: str
                       ) -> InputDataError | None:
    """The line of a CSV file where the unfinished value ``value`` (a quote opened and not
    closed before the end of the file, as Polars quotes it) begins."""
    if compression == "zstd":
        return None
    start = value.split("\n", 1)[0].rstrip("\r")
    with _opened(file, compression) as fh:
        for i, raw in enumerate(fh, 1):
            text = raw.decode("utf-8", "replace").rstrip("\r\n")
            if text.endswith(start) and text.count('"') % 2:
                return _quote_left_open(source, i, text)
    return None


def _opened(file: str, compression: str | None, text: bool = False) -> Any:
    """``file`` opened for reading, decompressed when gzip; ``text``: as UTF-8 text (bad bytes
    replaced, line ends kept as they are), else as bytes. Not for zstd (Python 3.11 has none)."""
    if text:
        kwargs: dict[str, Any] = {"encoding": "utf-8", "errors": "replace", "newline": ""}
        return gzip.open(file, "rt", **kwargs) if compression == "gzip" else \
            open(file, **kwargs)
    return gzip.open(file, "rb") if compression == "gzip" else open(file, "rb")


def _chunks(file: str, compression: str | None) -> Iterator[bytes]:
    with _opened(file, compression) as raw:
        while chunk := raw.read(1 << 20):
            yield chunk


def _locate_invalid_utf8(source: Source, file: str, compression: str | None
                         ) -> InputDataError | None:
    if compression == "zstd":
        lines = pl.scan_csv(file, has_header=False, separator="\x1f", quote_char=None,
                            encoding=_LOSSY, infer_schema=False, comment_prefix=None) \
            .with_row_index("__line", offset=1) \
            .filter(pl.any_horizontal(pl.col(pl.String).str.contains("\ufffd", literal=True))) \
            .head(1).collect()
        if not lines.height:
            return None
        return _utf8_error(source, int(lines.row(0)[0]), str(lines.row(0)[1]).encode(), b"")
    line, tail = 1, b""
    for chunk in itertools.chain(_chunks(file, compression), [None]):
        # whole lines only: a line end never falls inside a UTF-8 character
        if chunk is None:
            piece, tail = tail, b""
        else:
            data = tail + chunk
            cut = data.rfind(b"\n") + 1
            piece, tail = data[:cut], data[cut:]
        try:
            piece.decode("utf-8")
        except UnicodeDecodeError as exc:
            n, raw = _line_at(piece, exc.start)
            return _utf8_error(source, line + n - 1, raw, piece[exc.start:exc.end])
        line += piece.count(b"\n")
    return None


def _locate_value(source: Source, fmt: str, file: str, value: str, dtype: str, column: str
                  ) -> InputDataError | None:
    lf = pl.scan_csv(file, separator=_separator(source, fmt), has_header=source.has_header,
                     infer_schema=False, encoding=_LOSSY,
                     null_values=list(source.null_values) if source.null_values else None)
    if column not in lf.collect_schema().names():
        return None
    if len(value) > 1 and value.startswith('"') and value.endswith('"'):
        value = value[1:-1].replace('""', '"')  # Polars quotes the field as the file holds it
    row = lf.with_row_index("__row").filter(pl.col(column) == value).select("__row").head(1) \
        .collect()
    if not row.height:
        return None
    n = int(row.item()) + 1
    line = n + 1 if source.has_header else n
    kind = "number" if re.fullmatch(r"[fiu]\d+", dtype) else f"{dtype} value"
    return InputDataError(
        f"{source.path}: column '{clip(column, 60)}', data row {n} (line {line}) holds "
        f"{clip(value)!r}, which is not a {kind} as the values before it are",
        hint=f"fix the value; if it means 'missing', list it under null_values in the config's "
        f"input mapping (null_values: [{json.dumps(clip(value, 40))}])",
    )


def _json_type(value: Any) -> str:
    return ("a boolean" if isinstance(value, bool) else "a number"
            if isinstance(value, int | float) else "text" if isinstance(value, str)
            else "null" if value is None else _kind(value) or "a value")


def _locate_json_value(source: Source, file: str, compression: str | None, token: str
                       ) -> InputDataError | None:
    """The first line of a JSONL file where a key holds ``token`` (a value Polars could not
    read as its column's type, as its message quotes it), beside the first line where the
    same key holds a value of another JSON type."""
    if compression == "zstd":
        return None
    first: dict[str, tuple[int, Any]] = {}
    with _opened(file, compression) as fh:
        for i, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                record = json.loads(raw, parse_constant=_no_constant)
            except ValueError:
                return None
            if not isinstance(record, dict):
                return None
            for key, value in record.items():
                if value is None:
                    continue
                j, before = first.setdefault(key, (i, value))
                if _json_type(before) != _json_type(value) and \
                        token in (json.dumps(value), str(value)):
                    k = clip(key, 60)
                    return InputDataError(
                        f"{source.path}: line {i}: the key '{k}' holds {clip(json.dumps(value))}"
                        f" ({_json_type(value)}), but on line {j} it holds "
                        f"{clip(json.dumps(before), 60)} ({_json_type(before)}); a column holds "
                        "one type of value",
                        hint=f"write every value of '{k}' as {_json_type(before)}")
    return None


def _locate_bad_json(source: Source, file: str, compression: str | None
                     ) -> InputDataError | None:
    if compression == "zstd":
        return None
    with _opened(file, compression) as fh:
        for i, raw in enumerate(fh, 1):
            if not raw.strip():
                continue
            try:
                json.loads(raw, parse_constant=_no_constant)
            except _NotJson as exc:
                return _not_json(source, i, str(exc), raw)
            except ValueError as exc:
                why = str(exc).split(": line")[0]
                return InputDataError(
                    f"{source.path}: line {i} is not a JSON object ({why}): {_show(raw)}",
                    hint="fix the line: JSONL holds one complete JSON object per line",
                )
    return None
