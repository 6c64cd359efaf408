"""Readers: format detection and lazy scans."""

from evalcli.io.readers import Source, detect_format, input_path, scan

__all__ = ["Source", "detect_format", "input_path", "scan"]
