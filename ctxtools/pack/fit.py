"""The repo map of a pack, built at most once per budget (the files are chosen by
``pack.choose``)."""

from __future__ import annotations

import os

from ctxtools.errors import CtxError, ResourceError
from ctxtools.pack.model import MAP_TOKENS

FOCUS_MAX = 200  # more files than this: the map is not personalised toward all of them


class MapState:
    """The repo map of the root, built at most once per budget; a failure is a note."""

    def __init__(self, req, root, ruler, query, pack_rels, named, ledger, path_filter=None):
        self.req = req
        self.path_filter = path_filter  # --exclude and .ctxignore, as for the files
        self.root = root
        self.ruler = ruler
        self.query = query
        self.ledger = ledger
        focus = named if named else (pack_rels if len(pack_rels) <= FOCUS_MAX else [])
        self.focus = [os.path.join(os.path.realpath(root), rel) for rel in focus]
        self.ok = req.use_map
        self.left_out: str | None = None if req.use_map else "--no-map"
        self._maps: dict[int, str] = {}
        self.defs: dict[str, tuple] = {}  # rel -> definitions, from the map's scans
        self.fits: dict = {}  # what fitting the same map to another budget needs

    def _build(self, tokens: int):
        from ctxtools.repomap.core import build_map

        return build_map(
            self.root,
            tokens=tokens,
            focus=[p for p in self.focus if os.path.exists(p)],
            query=self.query,
            ruler=self.ruler,
            store=self.req.store,
            defs_out=self.defs if not self.defs else None,
            fits_out=self.fits,
            path_filter=self.path_filter,
            progress=self.req.progress,
            stage=self.req.stage,
        )

    def ranks(self) -> dict[str, float]:
        try:
            m = self._build(MAP_TOKENS)
        except ResourceError:
            raise  # out of descriptors or memory: every other read would fail as well
        except (CtxError, OSError) as exc:
            self.ok = False
            self.left_out = f"not built ({exc})"
            self.ledger.warn(f"repository map not built ({exc}); packing without it")
            return {}
        self._maps[MAP_TOKENS] = m.text
        return {f.rel: f.rank for f in m.files}

    def text(self, tokens: int) -> str:
        if tokens not in self._maps:
            try:
                if self.fits:
                    from ctxtools.repomap.core import refit_map

                    self._maps[tokens] = refit_map(self.fits, tokens, self.ruler)
                else:
                    self._maps[tokens] = self._build(tokens).text
            except ResourceError:
                raise
            except (CtxError, OSError) as exc:
                self.ok = False
                self.left_out = f"not built ({exc})"
                return ""
        return self._maps[tokens]
