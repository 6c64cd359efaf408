"""The ``compat`` presets, read from the families' convention declarations: for each family
and peer, each parameter (or task option) a preset sets, its value and evalcli's default.

A family has presets when it has a ``conventions`` module (``evalcli.metrics.<family>.
conventions``) declaring ``COMPATS`` (the peers) and ``Convention`` objects (a parameter, its
default, its presets). Which metrics each convention applies to comes from the registry: the
metrics whose parameters include the convention's parameter; a convention whose parameter is
one of the task's options is a task option. ``evalcli metrics --presets`` prints
:func:`presets_markdown` (docs/presets.md is that text, and a test keeps it so).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Mapping

    from evalcli.metrics.registry import Registry


@dataclass(frozen=True)
class Setting:
    """One convention of a family: its name, where it applies, its default and presets."""

    name: str
    applies_to: tuple[str, ...]
    """The metrics that take it as a parameter; empty for a task option."""
    others: tuple[str, ...]
    """The family's metrics that do not take it."""
    default: Any
    presets: Mapping[str, Any]
    why: str

    @property
    def task_option(self) -> bool:
        return not self.applies_to

    def value(self, peer: str) -> Any:
        """What ``compat: peer`` sets (the default when the preset leaves it)."""
        return self.presets.get(peer, self.default)


@dataclass(frozen=True)
class FamilyPresets:
    family: str
    peers: tuple[str, ...]
    settings: tuple[Setting, ...]


def family_presets(reg: Registry, family: str) -> FamilyPresets | None:
    """The presets of ``family``, or None when it declares no conventions."""
    try:
        mod = importlib.import_module(f"evalcli.metrics.{family}.conventions")
    except ModuleNotFoundError:
        return None
    kind = getattr(mod, "Convention", None)
    peers = getattr(mod, "COMPATS", None)
    if kind is None or not peers:
        return None
    options = reg.task(family).options
    members = [m for m in reg if m.family == family]
    settings = []
    for conv in vars(mod).values():
        if not isinstance(conv, kind):
            continue
        c: Any = conv
        users = tuple(m.name for m in members if any(p is c.param for p in m.params))
        if not users and not any(o is c.param for o in options):
            continue  # declared, used by no metric and no task option
        others = tuple(m.name for m in members if m.name not in users)
        settings.append(Setting(c.param.name, users, others, c.default, c.presets, c.why))
    return FamilyPresets(family, tuple(peers), tuple(settings))


def _v(value: Any) -> str:
    return f"`{value}`"


def _where(s: Setting) -> str:
    """The metrics a setting applies to; "every metric but ..." when that is shorter."""
    if s.task_option:
        return "task option"
    if len(s.others) < len(s.applies_to) // 2:
        return "every metric but " + ", ".join(s.others) if s.others else "every metric"
    return ", ".join(s.applies_to)


def presets_markdown(reg: Registry) -> str:
    """Per family: a table of every convention (default, each peer's value), then per peer
    what its preset changes (value, default replaced) and what it leaves at the default."""
    fams = [f for f in dict.fromkeys(m.family for m in reg)
            if (fp := family_presets(reg, f)) is not None and fp.settings]
    out = [
        "# Compat presets",
        "",
        "<!-- Generated from the families' convention declarations by `evalcli metrics "
        "--presets > docs/presets.md`. Do not edit: tests/test_metric_docs.py compares. -->",
        "",
        "`compat: <peer>` (a task option, or a metric's parameter) sets every convention where "
        "the peers disagree to what that peer does. A convention parameter is unset by "
        "default: unset means the preset's value, else evalcli's default; a value set "
        "explicitly always wins. The report lists the values in force under each metric's "
        "`details.conventions`. The formulas and each parameter's meaning: "
        "[metrics.md](metrics.md).",
        "",
        "Families: " + " · ".join(f"[{f}](#{f})" for f in fams),
        "",
    ]
    for fam in fams:
        fp = family_presets(reg, fam)
        assert fp is not None
        out += [f"## {fam}", "", "Every convention, its default and what each preset sets "
                "(**bold**: differs from the default).", "",
                "| parameter | applies to | default | " + " | ".join(fp.peers) + " |",
                "|---|---|---|" + "---|" * len(fp.peers)]
        for s in fp.settings:
            cells = [f"**{_v(s.value(p))}**" if s.value(p) != s.default else _v(s.value(p))
                     for p in fp.peers]
            out.append(f"| `{s.name}` | {_where(s)} | {_v(s.default)} | "
                       + " | ".join(cells) + " |")
        out.append("")
        for peer in fp.peers:
            changed = [s for s in fp.settings if s.value(peer) != s.default]
            kept = [s for s in fp.settings if s.value(peer) == s.default]
            out += [f"### {fam}: compat: {peer}", ""]
            if changed:
                out += ["| parameter | applies to | sets | replacing the default |",
                        "|---|---|---|---|"]
                out += [f"| `{s.name}` | {_where(s)} | {_v(s.value(peer))} | {_v(s.default)} |"
                        for s in changed]
            else:
                out.append("Changes nothing: every convention stays at evalcli's default.")
            out.append("")
            if kept and changed:
                twice = {s.name for s in changed}
                names = sorted(dict.fromkeys(
                    f"`{s.name}` ({_where(s)})" if s.name in twice else f"`{s.name}`"
                    for s in kept))
                out += ["Left at the default: " + ", ".join(names) + ".", ""]
        out += ["Why each default:", ""]
        out += [f"- `{s.name}` ({_where(s)}): {s.why.rstrip('.')}." for s in fp.settings]
        out.append("")
    return "\n".join(out).rstrip("\n") + "\n"
