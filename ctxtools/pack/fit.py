"""The repo map and the files section under their share of the budget."""

from __future__ import annotations

import os

from ctxtools.errors import CtxError, ResourceError
from ctxtools.fsutil import check_resource
from ctxtools.pack.model import MAP_TOKENS, SIGNATURE_ROLES

ESTIMATE_MARGIN = 2  # percent

FOCUS_MAX = 200  # more files than this: the map is not personalised toward all of them


class MapState:
    """The repo map of the root, built at most once per budget; a failure is a note."""

    def __init__(self, req, root, ruler, query, pack_rels, named, notes):
        self.req = req
        self.root = root
        self.ruler = ruler
        self.query = query
        self.notes = notes
        focus = named if named else (pack_rels if len(pack_rels) <= FOCUS_MAX else [])
        self.focus = [os.path.join(os.path.realpath(root), rel) for rel in focus]
        self.ok = req.use_map
        self.left_out: str | None = None if req.use_map else "--no-map"
        self._maps: dict[int, str] = {}

    def _build(self, tokens: int):
        from ctxtools.repomap.core import build_map

        return build_map(
            self.root,
            tokens=tokens,
            focus=[p for p in self.focus if os.path.exists(p)],
            query=self.query,
            ruler=self.ruler,
            store=self.req.store,
        )

    def ranks(self) -> dict[str, float]:
        try:
            m = self._build(MAP_TOKENS)
        except ResourceError:
            raise  # out of descriptors or memory: every other read would fail as well
        except (CtxError, OSError) as exc:
            self.ok = False
            self.left_out = f"not built ({exc})"
            self.notes.append(f"warning: repository map not built ({exc}); packing without it")
            return {}
        self._maps[MAP_TOKENS] = m.text
        return {f.rel: f.rank for f in m.files}

    def text(self, tokens: int) -> str:
        if tokens not in self._maps:
            try:
                self._maps[tokens] = self._build(tokens).text
            except ResourceError:
                raise
            except (CtxError, OSError) as exc:
                self.ok = False
                self.left_out = f"not built ({exc})"
                return ""
        return self._maps[tokens]


# --- fitting the files ---------------------------------------------------------------------


class FileFitter:
    """The files section under a token budget, named files kept at least as signatures."""

    def __init__(self, entries, identifiers, req, ruler, render, named, redactions):
        from ctxtools.excerpt import auto_jobs, excerpt_sources

        self.notes: list[str] = []
        self.skipped: list[dict] = []  # inputs the excerpt library would not show (binary)
        self.redactions = redactions
        self.checked: set[str] = set()  # shown files whose text was searched for secrets
        self.req = req
        self._ruler_count = ruler.count
        self._counts: dict[str, int] = {}
        self.render = render
        self.named = set(named)
        self.entries = {e.label: e for e in entries}
        self.identifiers = identifiers
        self.sig_mode = req.identifiers_only or (req.role or "").strip().lower() in SIGNATURE_ROLES
        self.items = {}
        files = [e.as_input() for e in entries if not e.deleted and e.data is None]
        data = [e.as_input() for e in entries if not e.deleted and e.data is not None]
        for inputs, jobs in ((files, auto_jobs(len(files))), (data, 1)):
            run = excerpt_sources(inputs, identifiers, signatures=self.sig_mode, jobs=jobs)
            self.items.update(run.shown)
            for r in run.results:
                if r.status == "binary":
                    self.notes.append(f"skipped {r.label}: binary file")
                    self.skipped.append({"what": r.label, "why": "binary"})
                elif r.status != "ok":
                    self.notes.append(f"skipped {r.label}: {r.error or r.status}")
                    self.skipped.append({"what": r.label, "why": "unreadable"})
        self._sigs: dict[str, object] | None = None if not self.sig_mode else dict(self.items)
        # Best first: match score, then repo-map rank, then path.
        self.order = sorted(
            self.items,
            key=lambda lab: (-self._score(lab), -self.entries[lab].rank, _path_key(lab)),
        )
        self.failed_named: list[str] = []
        self.dropped: list[dict] = []

    def count(self, text: str) -> int:
        """The ruler's count of TEXT, remembered: blocks are counted again in every round."""
        n = self._counts.get(text)
        if n is None:
            n = self._counts[text] = self._ruler_count(text)
        return n

    def _score(self, label: str) -> float:
        item = self.items[label]
        return float(getattr(item, "score", 0.0) or 0.0)

    def block(self, item, label: str) -> str:
        from ctxtools.excerpt import render_item

        entry = self.entries[label]
        body = render_item(item, label) if item is not None else ""
        return self.render.file(label, body, entry.diff)

    def signatures(self, label: str):
        if self._sigs is None:
            from ctxtools.excerpt import excerpt_sources

            wanted = [
                self.entries[lab].as_input()
                for lab in sorted(self.named)
                if lab in self.entries and not self.entries[lab].deleted
            ]
            run = excerpt_sources(wanted, self.identifiers, signatures=True, jobs=1)
            self._sigs = {lab: it for lab, it in run.shown}
        return self._sigs.get(label)

    def _fallbacks(self, label: str) -> list[tuple[str, str]]:
        """(what is shown, block) for a named file that lost its excerpt, fullest first."""
        entry = self.entries[label]
        sig = self.signatures(label)
        out = []
        if entry.deleted:
            out.append(("diff", self.render.file(label, "", entry.diff)))
            return out
        from ctxtools.excerpt import render_item

        sig_block = render_item(sig, label) if sig is not None else ""
        if entry.diff and sig_block:
            out.append(("diff + signatures", self.render.file(label, sig_block, entry.diff)))
        if sig_block:
            out.append(("signatures", self.render.file(label, sig_block, None)))
        return out

    def fit(self, budget: int) -> tuple[str, list[dict]]:
        """The files section's body in at most about BUDGET tokens, and a row per file.

        Secrets are looked for in the files that are shown (searching a whole tree would
        cost more than the rest of a pack): a shown file that holds one is excerpted again
        from its redacted text and the files are fitted again, until every shown file has
        been searched."""
        while True:
            text, rows = self._fit_once(budget)
            if self.req.allow_secrets or not self._redact([r["path"] for r in rows]):
                return text, rows

    def _redact(self, labels: list[str]) -> bool:
        """Search the files LABELS not yet searched; whether one of them held a secret
        (it is then excerpted anew from its redacted bytes)."""
        from ctxtools.excerpt import excerpt_sources
        from ctxtools.pack.inputs import redact_bytes

        changed = False
        for lab in labels:
            e = self.entries[lab]
            if lab in self.checked or e.path is None or e.data is not None:
                continue  # handles and redacted files were searched when they were read
            self.checked.add(lab)
            try:
                with open(e.path, "rb") as fh:
                    data = fh.read()
            except OSError as exc:
                check_resource(exc, e.path)
                continue  # shown from what was read before; nothing new to search
            redacted = redact_bytes(data, lab, self.req, self.redactions)
            if redacted is data:
                continue
            e.data = redacted
            run = excerpt_sources([e.as_input()], self.identifiers, signatures=self.sig_mode)
            self.items.update(run.shown)
            self._counts.clear()
            self._sigs = None if not self.sig_mode else dict(self.items)
            changed = True
        return changed

    def _fit_once(self, budget: int) -> tuple[str, list[dict]]:
        """One fitting of the files: named files settled first (an excerpt, else their
        fallbacks), the rest by rank; then the blocks, their rows and what was left out."""
        self.failed_named = []
        self.lost: set[str] = set()
        self.dropped = []
        forced: dict[str, tuple[str, str]] = {}
        for lab in sorted(self.named):
            e = self.entries.get(lab)
            if e is not None and e.deleted:
                forced[lab] = self._fallbacks(lab)[0]
        kept, drops = self._settle_named(forced, budget)
        blocks: dict[str, tuple[str, str, object]] = {}
        for lab, item in kept:
            blocks[lab] = (
                "signatures" if self.sig_mode else "excerpt",
                self.block(item, lab),
                item,
            )
        for lab, (shown, block) in forced.items():
            blocks[lab] = (shown, block, None)
        texts, rows = self._rows(blocks)
        self._record_drops(drops, blocks, forced)
        return "\n".join(texts), rows

    def _settle_named(self, forced: dict[str, tuple[str, str]], budget: int):
        """Fit until every named file is kept, forced (its fallback, in FORCED) or lost:
        (the kept (label, item) pairs, the drops of the last fitting)."""
        kept: list[tuple[str, object]] = []
        drops: list = []
        for _ in range(len(self.named) + 2):
            kept, drops = self._fit_rest(forced, budget)
            kept_labels = {lab for lab, _ in kept}
            missing = [
                lab
                for lab in sorted(self.named)
                if lab in self.items  # a binary file was skipped, and said so
                and lab not in kept_labels
                and lab not in forced
                and lab not in self.lost
            ]
            if not missing:
                break
            for lab in missing:
                options = self._fallbacks(lab)
                if options:
                    forced[lab] = options[0]
                else:
                    self._lose_named(lab, "nothing left to show")
        return kept, drops

    def _fit_rest(self, forced: dict[str, tuple[str, str]], budget: int):
        """The files not forced, fitted in what the forced blocks leave of BUDGET."""
        count = self.count
        forced_cost = sum(count(b) + 1 for _, b in forced.values())
        if forced_cost > budget:
            self._shrink_forced(forced, budget)
            forced_cost = sum(count(b) + 1 for _, b in forced.values())
        room = max(0, budget - forced_cost)
        cands = [
            (lab, self.items[lab])
            for lab in self.order
            if lab not in forced and lab not in self.lost
        ]
        if self.sig_mode:
            return self._greedy(cands, room)
        from ctxtools.excerpt import fit_budget, value_drop_order

        # The units' counts add up to a little less than the joined text's count
        # (tokens merge across the joins); aiming ESTIMATE_MARGIN lower spares
        # fit_budget a recount of the whole text per unit it then drops.
        aim = room - room * ESTIMATE_MARGIN // 100
        kept, drops, _used = fit_budget(cands, aim, count, self.block, drop_order=value_drop_order)
        return kept, drops

    def _rows(self, blocks: dict[str, tuple[str, str, object]]) -> tuple[list[str], list[dict]]:
        """The blocks' texts in path order, and a row per file for --explain."""
        rows = []
        texts = []
        for lab in sorted(blocks, key=_path_key):
            shown, block, item = blocks[lab]
            e = self.entries[lab]
            texts.append(block)
            row = {
                "path": lab,
                "named": e.named,
                "why": e.why,
                "shown": shown,
                "tokens": self.count(block),
                "score": round(self._score(lab), 3) if lab in self.items else 0.0,
                "rank": round(e.rank, 6),
            }
            if item is not None and hasattr(item, "windows"):
                row["windows"] = len(item.windows)
                row["matched"] = list(item.matched)
            if e.diff:
                row["diff"] = True
            rows.append(row)
        return texts, rows

    def _record_drops(self, drops, blocks, forced: dict[str, tuple[str, str]]) -> None:
        """What the fitting left out, in ``dropped``: windows, whole files, and the named
        files shown by a fallback."""
        for d in drops:
            if d.label in blocks and d.kind == "file":
                continue  # replaced by its signatures
            if d.kind == "window":
                self.dropped.append(
                    {
                        "what": f"{d.label}:{d.start}-{d.end}",
                        "why": f"window (score {d.score:g}) over the budget",
                    }
                )
            else:
                why = "whole file over the budget" + ("" if d.matched else " (nothing matched)")
                self.dropped.append({"what": d.label, "why": why})
        for lab, (shown, _b) in sorted(forced.items()):
            if shown != "diff":
                self.dropped.append(
                    {"what": lab, "why": f"excerpt over the budget; named, so {shown} kept"}
                )

    def _greedy(self, cands, room: int):
        """Signatures mode: whole files in rank order (named ones first) while they fit."""
        from ctxtools.excerpt import Dropped

        order = sorted(cands, key=lambda it: 0 if it[0] in self.named else 1)
        kept, drops, used = [], [], 0
        for lab, item in order:
            cost = self.count(self.block(item, lab)) + 1
            if used + cost <= room:
                kept.append((lab, item))
                used += cost
            else:
                drops.append(Dropped(lab, "file", matched=bool(getattr(item, "matched", ()))))
        return kept, drops

    def _shrink_forced(self, forced: dict, budget: int) -> None:
        """Named files' fallbacks over BUDGET: smaller fallbacks, then (with allow_drop) the
        lowest-ranked named files go; without it they are failures."""
        count = self.count
        for lab in sorted(forced, key=lambda lab: (self.entries[lab].rank, _path_key(lab))):
            if sum(count(b) + 1 for _, b in forced.values()) <= budget:
                return
            options = self._fallbacks(lab)
            if len(options) > 1 and forced[lab] != options[-1]:
                forced[lab] = options[-1]
        for lab in sorted(forced, key=lambda lab: (self.entries[lab].rank, _path_key(lab))):
            if sum(count(b) + 1 for _, b in forced.values()) <= budget:
                return
            del forced[lab]
            self._lose_named(lab, "does not fit even as signatures")

    def _lose_named(self, lab: str, why: str) -> None:
        self.lost.add(lab)
        if self.req.allow_drop:
            self.dropped.append({"what": lab, "why": f"named, but {why} (--allow-drop)"})
            self.notes.append(f"warning: dropped named file {lab}: {why} (--allow-drop)")
        else:
            self.failed_named.append(lab)


def _path_key(label: str) -> tuple[int, str]:
    """Files by path, handles after them."""
    return (1 if label.startswith("ctx:") else 0, label)
