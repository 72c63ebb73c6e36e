"""Fitting a pack: the rounds that fit the files and the repo map between the fixed
sections and the task, and the repo map, built at most once per budget (the files are
chosen by ``pack.choose``)."""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from ctxtools.errors import CtxError, ResourceError
from ctxtools.pack.model import FIT_ROUNDS, MAP_MIN_TOKENS, MAP_TOKENS

if TYPE_CHECKING:
    from ctxtools.pack.choose import Chooser
    from ctxtools.pack.memory_section import Fixed
    from ctxtools.pack.render import Renderer

FOCUS_MAX = 200  # more files than this: the map is not personalised toward all of them


def map_focus(root: str, named: list[str], pack_rels: list[str]) -> list[str]:
    """The files the map is personalised toward (absolute paths): the named ones, else the
    pack's own when they are few."""
    focus = named if named else (pack_rels if len(pack_rels) <= FOCUS_MAX else [])
    return [os.path.join(os.path.realpath(root), rel) for rel in focus]


class MapState:
    """The repo map of the root, built at most once per budget; a failure is a note. JOB, a
    ``mapjob.MapJob`` started before the files were checked, is taken when it builds the
    same map (the same focus), and closed otherwise."""

    def __init__(self, req, root, ruler, query, pack_rels, named, ledger, path_filter=None,
                 job=None):  # fmt: skip
        self.req = req
        self.path_filter = path_filter  # --exclude and .ctxignore, as for the files
        self.root = root
        self.ruler = ruler
        self.query = query
        self.ledger = ledger
        self.focus = map_focus(root, named, pack_rels)
        self.job = None
        self._ranked = False  # the job's ranks and text received
        if job is not None and (job.focus != self.focus or job.path_filter is not path_filter):
            job.close()  # it builds another map than this pack's
        else:
            self.job = job
        self.ok = req.use_map
        self.left_out: str | None = None if req.use_map else "--no-map"
        self._maps: dict[int, str] = {}
        self.defs: dict[str, tuple] = {}  # rel -> definitions, from the map's scans
        self.refit = None  # what fitting the same map to another budget needs
        self.mapped: int | None = None  # the files the map ranked (known once it ranked)
        # The map's scan cache, loaded and saved: the files section looks up in it what
        # the map did not scan (past its --max-files cut) instead of loading it again.
        self.scan_cache = None

    def close(self) -> None:
        """The job's child ended (when there is one)."""
        if self.job is not None:
            self.job.close()
            self.job = None

    def _build(self, tokens: int):
        from ctxtools.repomap.core import build_map

        m = build_map(
            # (by its real path, as the files' listing named it: each file's stat that
            # listing took serves the map's too)
            os.path.realpath(self.root),
            tokens=tokens,
            focus=[p for p in self.focus if os.path.exists(p)],
            query=self.query,
            ruler=self.ruler,
            store=self.req.store,
            keep=True,
            path_filter=self.path_filter,
            progress=self.req.progress,
            stage=self.req.stage,
        )
        if not self.defs:
            self.defs = dict(m.defs)
            self.scan_cache = m.scanset.cache if m.scanset is not None else None
        self.refit = m.refit
        return m

    def ranks(self) -> dict[str, float]:
        if not self.ok:
            return {}  # (the job's map failed at its scan: said then)
        if self.job is not None:
            done = self._job_ranks()
            if done is not None:
                self.mapped = len(done)
                return done
        try:
            m = self._build(MAP_TOKENS)
        except ResourceError:
            raise  # out of descriptors or memory: every other read would fail as well
        except (CtxError, OSError) as exc:
            return self._failed(str(exc))
        self._maps[MAP_TOKENS] = m.text
        self.mapped = len(m.files)
        return {f.rel: f.rank for f in m.files}

    def definitions(self):
        """The job's definitions, once its files are scanned (the globs of the filter its
        listing used taken too); {} when its map failed (said); None when the map must be
        built here after all (the job is closed)."""
        value = self._from_job(self.job.scanned)
        if value is None:
            return None if self.ok else {}
        _tag, self.defs, used = value
        if self.path_filter is not None:
            self.path_filter.used.update(used)
        return self.defs

    def _job_ranks(self) -> dict[str, float] | None:
        """The ranks of the job's map (its text at MAP_TOKENS kept); None when the map must
        be built here after all (the job is closed)."""
        value = self._from_job(self.job.result)
        if value is None:
            return None if self.ok else {}
        _ok, ranks, self._maps[MAP_TOKENS] = value
        self._ranked = True
        return ranks

    def _from_job(self, ask):
        """What ASK (one of the job's steps) gives; None when the map is to be built here
        (the child died or raised: the job is closed) or failed (said: ``ok`` is False)."""
        try:
            value = ask()
        except Exception:  # the child died, or raised what building here would raise
            self.close()
            return None
        if value[0] == "resource":
            raise ResourceError(value[1])
        if value[0] == "failed":
            self.close()
            self._failed(value[1])
            return None
        return value

    def _failed(self, why: str) -> dict[str, float]:
        self.ok = False
        self.left_out = f"not built ({why})"
        self.ledger.warn(f"repository map not built ({why}); packing without it")
        return {}

    def text(self, tokens: int) -> str:
        if self.job is not None and not self._ranked:
            self.ranks()  # (the job's ranks and text, if the files section did not ask)
        if self.job is not None and tokens not in self._maps and self.refit is None:
            try:
                self.refit = self.job.head()  # (the head of the child's ranking)
            except Exception:  # the child died after its ranks: the map is built here
                self.close()
        if tokens not in self._maps:
            try:
                if self.refit is not None and self.refit.covers(tokens):
                    from ctxtools.repomap.core import refit_map

                    self._maps[tokens] = refit_map(self.refit, tokens, self.ruler)
                else:
                    self._maps[tokens] = self._build(tokens).text
            except ResourceError:
                raise
            except (CtxError, OSError) as exc:
                self.ok = False
                self.left_out = f"not built ({exc})"
                return ""
        return self._maps[tokens]


@dataclass
class Assembly:
    """What the files and the map are fitted between: the FIXED sections and the task's
    part, the ROOM left for the two, the whole budget, and how a pack is rendered and
    counted."""

    fixed: list[Fixed]
    task_part: str
    room: int
    total_budget: int
    render: Renderer
    count: Callable[[str], int]

    def document(self, map_section: str, files_section: str) -> str:
        """The pack's text with these map and files sections, in the pack's order."""
        fixed = self.fixed
        parts = [
            f.text for name in ("instructions", "skills", "memory") for f in fixed if f.name == name
        ]
        parts += [s for s in (map_section, files_section) if s]
        parts.append(self.task_part)
        return self.render.document(parts)


@dataclass
class Fitted:
    """The outcome of the fitting rounds: the pack's TEXT and its TOKENS, the map and files
    sections in it (empty when left out), and a row per file."""

    text: str = ""
    tokens: int = 0
    map_section: str = ""
    files_section: str = ""
    file_rows: list[dict] = field(default_factory=list)


def fit_rounds(parts: Assembly, files: Chooser, map_state: MapState, files_budget: int) -> Fitted:
    """Fit the files (in FILES_BUDGET) and the map into the room of PARTS, assemble, count
    the whole text, and shrink (the map first, then the files) until it is within the
    budget or nothing is left to shrink."""
    out = Fitted()
    count, render = parts.count, parts.render
    map_cap = MAP_TOKENS
    fitted_for = None
    used = 0
    nothing_to_map = False  # the map had room and ranked no file: nothing to map
    target = files_budget  # what the files may take of the room: the map has the rest
    for _round in range(FIT_ROUNDS):
        if fitted_for != files_budget:
            chosen = files.fit(files_budget)
            out.file_rows = chosen.rows
            out.files_section = render.section("files", chosen.text) if chosen.text else ""
            used = count(out.files_section) if out.files_section else 0
            fitted_for = files_budget
            if map_state.ok and used > target > 0 and _round < FIT_ROUNDS - 1:
                # The plan's estimate ran over (headers, separators): the files give back
                # what they took from the map's share, and are fitted again. The excess is
                # measured against TARGET, not against the budget just tried: a plan that
                # fills its budget runs over by about the same each round, and measured
                # round by round the excess was given back again and again (a kafka pack
                # of 16k fitted its files in 10.8k after 12 rounds, not in 14.6k).
                files_budget = max(0, files_budget - (used - target) - 8)
                continue
        out.map_section = ""
        map_budget = min(map_cap, parts.room - used) if map_state.ok else 0
        if map_budget >= MAP_MIN_TOKENS:
            map_text = map_state.text(map_budget)
            if map_text:
                out.map_section = render.section("map", render.repomap(map_text))
            nothing_to_map = not map_text and map_state.mapped == 0
        out.text = parts.document(out.map_section, out.files_section)
        out.tokens = count(out.text)
        if out.tokens <= parts.total_budget:
            break
        # Over (tokens merge across joins; escaping grows the map): the map gives way
        # first, the files have the room they took.
        excess = out.tokens - parts.total_budget
        if out.map_section:
            map_cap = map_budget - excess - 8
        elif files_budget > 0:
            files_budget = max(0, files_budget - excess - 8)
        else:
            break
    if map_state.ok and not out.map_section:
        map_state.left_out = (
            "nothing to map (no source file the map's scanners read)"
            if nothing_to_map
            else "no room left after the files"
        )
    return out
