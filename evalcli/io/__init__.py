"""Readers: format detection and lazy scans."""

from evalcli.io.readers import Source, detect_format, scan

__all__ = ["Source", "detect_format", "scan"]
