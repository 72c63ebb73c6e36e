"""Building a pack: the budget, the fixed sections, the fitting rounds."""

from __future__ import annotations

import contextlib
import os
from collections.abc import Sequence

from ctxtools.collector import collector_paused
from ctxtools.errors import CtxError, NotFoundError, UsageError
from ctxtools.fsutil import require_directory
from ctxtools.pack.choose import Chooser, FilesRequest
from ctxtools.pack.fit import Assembly, MapState, fit_rounds
from ctxtools.pack.inputs import LISTED, Gatherer, load_entries, redact_text
from ctxtools.pack.ledger import Ledger
from ctxtools.pack.memory_section import Fixed as _Fixed
from ctxtools.pack.memory_section import memory_left_out as _memory_left_out
from ctxtools.pack.memory_section import memory_section as _memory_section
from ctxtools.pack.model import (
    FORMATS,
    MAP_SHARE_MIN,
    MAP_TOKENS,
    SECTIONS,
    SKILL_DISCLOSURES,
    FileEntry,
    Pack,
    PackRequest,
)
from ctxtools.pack.redact import PackRedactor
from ctxtools.pack.render import Renderer
from ctxtools.pathfilter import load_filter
from ctxtools.quoting import quote_name


def compute_budget(req: PackRequest, profile, table=None) -> dict:
    """The pack's budget as a dict of its terms (``tokens`` is the total), with the role
    shares of TABLE's ``[roles]`` and the request's overrides. Raises CtxError when it
    falls below the floor."""
    from ctxtools import profiles as prof

    if req.tokens is not None:
        if req.tokens < prof.FLOOR:
            raise UsageError(
                f"--tokens {req.tokens} is below the floor of {prof.FLOOR} tokens",
                hint="a model sees nothing useful in less",
            )
        return {"tokens": req.tokens, "context_limit": None, "floor": prof.FLOOR}
    limit = req.context_limit or profile.context_limit
    kwargs = {}
    if req.role_shares or (table is not None and table.roles):
        kwargs["role_shares"] = prof.effective_role_shares(table, req.role_shares)
    b = prof.pack_budget(limit, req.role, **kwargs)
    if b.floored:
        raise b.floor_error()
    doc = b.as_dict()
    doc["tokens"] = b.available
    doc["model"] = profile.name if profile is not None else None
    doc["profile"] = prof.describe_match(profile) if profile is not None else None
    return doc


def build_pack(req: PackRequest, ruler=None, ruler_notes: Sequence[str] = ()) -> Pack:
    """Build the pack REQ asks for, counted with RULER (default: the model's encoding)."""
    from ctxtools.source.listing import one_listing

    with one_listing(), collector_paused(), contextlib.ExitStack() as jobs:
        # (the root is listed once, for files and map; JOBS ends a map's child however
        # the pack ends)
        return _build_pack(req, ruler, ruler_notes, jobs)


def _build_pack(req: PackRequest, ruler, ruler_notes: Sequence[str], jobs) -> Pack:
    root, root_real = _check_request(req)
    step = req.stage if req.stage is not None else _no_stage
    step("listing")
    ledger = Ledger()
    ledger.said(ruler_notes)
    budget, ruler = _budget_and_ruler(req, ruler, ledger)
    count = ruler.count
    render = Renderer(req.fmt, PackRedactor(req.allow_secrets, ledger))  # all redacted

    total_budget = budget["tokens"]
    task_part, task_tokens = _task_section(req.task, render, total_budget, count)
    gather = Gatherer(req, root, root_real, ledger)
    gather.output.check(_option_sources(req))
    gather.output.check_store(req.store)
    _, mention_log, skill_names, resolver, task_words = _mentions(req, gather, root_real, ledger)
    # One filter for the listing, the map and the files: a file kept out of one is kept out
    # of all, one the user excluded is never read (for secrets or anything else), and one
    # --include names is listed though vendored or minified.
    filt = gather.path_filter = load_filter(root_real, req.include, req.exclude)
    _gather_paths(gather, req, root, ledger)
    job = _map_job(gather, req, root_real, ruler, task_words, jobs, filt)
    entries = load_entries(gather, req, ledger, filt.excluded)
    if (req.paths or req.listed) and not gather.entries and not gather.handles:
        # (FILES that hold nothing: a pack without files, said)
        shown = ", ".join(quote_name(p) for p in [*req.paths, *req.listed][:3])
        ledger.note(f"no file to pack: nothing was found in {shown}")
    named = sorted(e.label for e in entries if e.named)
    pack_rels = [e.label for e in entries if e.path is not None or e.deleted]

    # Fixed sections: instructions, skills, memory, task.
    fixed, whole = _fixed_sections(req, root_real, pack_rels, skill_names, render, ledger)
    for part in (f for f in fixed if f.name == "instructions"):
        read = [(f"instructions {p}", os.path.join(root_real, p)) for p, _ in part.parts]
        gather.output.check(read)
    entries = _without_instruction_files(entries, whole, ledger)
    memory_info = None
    if req.memory:
        mem, memory_info = _memory_section(req, task_words, total_budget, render, count, ledger)
        if mem is not None:
            fixed.append(mem)
    fixed_tokens = {f.name: count(f.text) for f in fixed}
    _trim_fixed(fixed, fixed_tokens, task_tokens, total_budget, render, count, ledger, memory_info)
    room = total_budget - sum(fixed_tokens.values()) - task_tokens - 4 * len(SECTIONS)

    # The repo map's ranks (personalised toward the pack's files and the task).
    ledger.said(filt.notes)
    map_state = MapState(req, root, ruler, task_words, pack_rels, named, ledger, filt, job)
    files = _chooser(entries, task_words, req, ruler, render, named, ledger, map_state)
    map_floor = min(MAP_TOKENS, max(0, room) * MAP_SHARE_MIN // 100) if map_state.ok else 0
    files_budget = max(0, room - map_floor)
    step("fitting")
    parts = Assembly(fixed, task_part, room, total_budget, render, count)
    fitted = fit_rounds(parts, files, map_state, files_budget)
    _check_fit(fitted.tokens, total_budget, files)
    _left_out(files, map_state, ledger)

    sections_out = _sections_record(fixed, fitted, task_tokens, count)
    if resolver is not None:
        resolver.record_use([e.label for e in entries if e.path is not None and e.named])
    if memory_info is not None:
        _memory_totals(memory_info, fixed, count)
    pack = Pack(
        text=fitted.text,
        tokens=fitted.tokens,
        budget=budget,
        ruler=ruler.name,
        exact=ruler.exact,
        fmt=req.fmt,
        sections=sections_out,
        files=fitted.file_rows,
        dropped=ledger.drop_rows(),
        mentions=mention_log,
        redactions=ledger.redaction_rows(),
        notes=ledger.note_lines(),
        named=named,
        memory=memory_info,
    )
    return render.redactor.seal(pack)  # the record redacted (pack.redact)


def _no_stage(name: str) -> None:
    """No one is told the steps."""


def _map_job(gather, req, root_real: str, ruler, task_words, jobs, filt):
    """The map's job, under way in a child with the path filter FILT, or None: started
    when the map is worth a second CPU, with the focus the pack will have if no file is
    left out by ``load_entries`` (``MapState`` checks)."""
    from ctxtools.pack import mapjob
    from ctxtools.pack.fit import map_focus
    from ctxtools.pack.model import MAP_TOKENS

    if not mapjob.wanted(req, gather.entries):
        return None
    focus = map_focus(root_real, *mapjob.expected_focus(gather))
    job = mapjob.MapJob(req, root_real, ruler, task_words, focus, filt, MAP_TOKENS)
    jobs.callback(job.close)
    if req.stage is not None:
        req.stage("scanning")  # (the map's first step, under way)
    return job


def _chooser(entries, task_words, req, ruler, render, named, ledger, map_state):
    """The files' Chooser, ranked with the repo map's ranks and scans, with the user's
    --include/--exclude and the root's .ctxignore (the map's filter; a glob that matches
    no file is a warning). A map under way in a child is waited for once the files are
    read."""

    def ranked():
        ranks: dict[str, float] = map_state.ranks() if req.use_map else {}
        for e in entries:
            e.rank = ranks.get(e.label, 0.0)
        return ranks

    def take_map():
        ranks = ranked()
        cache, map_state.scan_cache = map_state.scan_cache, None
        return ranks, map_state.defs, cache

    def take_job():  # the definitions now, the ranks when first looked up
        from ctxtools.pack.mapjob import LazyRanks

        defs = map_state.definitions()
        if defs is None:
            return take_map()
        return LazyRanks(ranked), defs, map_state.job  # (it looks files up: ``look_up``)

    filt = map_state.path_filter
    ask = FilesRequest(entries, task_words, req, ruler, render, named, ledger, map_state.root)
    if req.task:  # (task_words is this Task's prose: its Query, read once for the pack)
        from ctxtools.analyzer import read_task

        ask.query = read_task(req.task).query
    ask.path_filter = filt
    if map_state.job is not None:
        ask.map_pending = take_job
    else:
        ask.map_ranks, ask.map_defs, ask.map_cache = take_map()
    files = Chooser(ask)
    for glob in filt.unused():
        ledger.warn(f"--include/--exclude {glob!r} matches no file")
    return files


def _check_request(req: PackRequest) -> tuple[str, str]:
    """The request's choices that no option parser checked; returns (root, its real path)."""
    if req.fmt not in FORMATS:
        raise UsageError(f"unknown format {req.fmt!r}", hint="markdown, xml or json")
    if req.skill_disclosure not in SKILL_DISCLOSURES:
        raise UsageError(f"unknown skill disclosure {req.skill_disclosure!r}")
    if not req.task or not req.task.strip():
        raise UsageError("the task is empty", hint='give --task "what to do"')
    root = req.root or "."
    require_directory(root, f"--root {quote_name(root)}")
    return root, os.path.realpath(root)


def _budget_and_ruler(req: PackRequest, ruler, ledger: Ledger):
    """(the budget, the ruler): the model's profile decides both unless given."""
    from ctxtools import profiles as prof

    table = prof.load_profiles(req.profiles_file)
    profile = None
    if req.tokens is None:
        profile = prof.resolve(req.model or "default", table)
        note = prof.unknown_model_note(req.model, profile, table) if req.model else None
        if note:
            ledger.said([note])
    budget = compute_budget(req, profile, table)
    unknown = prof.unknown_role(req.role, table, req.role_shares)
    if unknown:
        ledger.note(unknown)
    if ruler is None:
        from ctxtools.tokens import get_ruler

        choice = get_ruler(encoding=profile.encoding if profile else None, store_root=req.store)
        ruler = choice.ruler
        ledger.said(choice.notes)
    return budget, ruler


def _option_sources(req: PackRequest) -> list[tuple[str, str]]:
    """The files and directories the options make the pack read, as (label, path)."""
    sources = [(f"--memory {m}", m) for m in req.memory or ()]
    if req.skills_dir:
        sources.append((f"--skills {req.skills_dir}", req.skills_dir))
    if req.profiles_file:
        sources.append((f"--profiles-file {req.profiles_file}", req.profiles_file))
    return sources


def _gather_paths(gather: Gatherer, req: PackRequest, root: str, ledger: Ledger) -> None:
    """The paths and changed files the request names join GATHER."""
    for arg in req.paths:
        gather.add_path(arg)
    for arg in req.listed:
        gather.add_path(arg, named=False, why=LISTED)
    if req.changed is not None:
        gather.add_changed(req.changed)
    _path_problems(gather, req, root, ledger)


def _task_section(task: str, render, total_budget: int, count) -> tuple[str, int]:
    """(the task's section, its tokens); an error when it alone is over the budget --
    asked first, before the task is read for its words or any file is listed (a pasted
    7 MB log took 7 s of reading to be refused)."""
    from ctxtools.tokens.stream import count_away

    task_part = render.section("task", render.task(task))
    task_tokens = count_away(count, task_part)  # (a pasted log can be 50 MB: Ctrl-C works)
    if task_tokens > total_budget:
        raise CtxError(
            f"the task alone is {task_tokens:,} tokens, over the pack budget of {total_budget:,}",
            hint="shorten the task, or raise the budget with --model/--role/--tokens",
        )
    return task_part, task_tokens


def _check_fit(tokens: int, total_budget: int, files: Chooser) -> None:
    if tokens > total_budget:
        raise CtxError(
            f"the pack does not fit its budget: {tokens:,} tokens over {total_budget:,}",
            hint="raise the budget, or name fewer files",
        )
    if files.failed_named:
        raise CtxError(
            "named file(s) do not fit the budget even as signatures: "
            + ", ".join(map(quote_name, files.failed_named)),
            hint="raise the budget, name fewer files, or --allow-drop",
        )


def _left_out(files: Chooser, map_state: MapState, ledger: Ledger) -> None:
    """What the fitting left out, and the files' notes, join the LEDGER."""
    ledger.drops.extend(files.skipped)
    ledger.drops.extend(files.dropped)
    if map_state.left_out:
        ledger.drop("repository map", map_state.left_out)
    ledger.notes.extend(files.notes)


def _memory_totals(memory_info: dict, fixed, count) -> None:
    """The memory section's tokens and kept chunks, for --explain."""
    mem_sec = next((f for f in fixed if f.name == "memory"), None)
    memory_info["tokens"] = count(mem_sec.text) if mem_sec else 0
    memory_info["kept"] = sum(1 for c in memory_info["chunks"] if c["in_pack"])


def _mentions(req: PackRequest, gather: Gatherer, root_real: str, ledger: Ledger):
    """The task's @-mentions: files and handles join GATHER as named; returns (mentions,
    their log for --explain, skill names, the resolver or None, the task without them)."""
    from ctxtools.analyzer import read_task
    from ctxtools.mentions import MentionResolver

    task = read_task(req.task)
    mentions = task.mentions
    mention_log: list[dict] = []
    skill_names: list[str] = []
    resolver = None
    for m in mentions:
        if m.kind == "handle":
            gather.add_handle(m.raw, named=True, why="@-mention")
            mention_log.append({"mention": m.raw, "path": m.raw, "reason": "stored handle"})
        elif m.kind == "skill":
            skill_names.append(m.raw.split(":", 1)[1])
        else:
            if resolver is None:
                resolver = MentionResolver(root_real, req.store)
            res = resolver.resolve(m)
            mention_log.append({"mention": m.raw, "path": res.path, "reason": res.reason})
            if res.path is None:
                ledger.warn(f"@{quote_name(m.raw)} not resolved: {res.reason}")
                continue
            if res.ambiguity():
                ledger.note(res.ambiguity())
            real = os.path.realpath(os.path.join(root_real, res.path))
            gather.add_file(real, True, "@-mention", res.path)
    return mentions, mention_log, skill_names, resolver, task.prose


def _path_problems(gather: Gatherer, req: PackRequest, root: str, ledger: Ledger) -> None:
    """Missing paths and paths outside the root: one error naming them all, or with
    keep_going a warning each."""
    shown = quote_name(root)
    problems = gather.missing + [
        f"{quote_name(p)}: outside the root {shown}" for p in gather.outside
    ]
    if not problems:
        return
    if not req.keep_going:
        shown = "; ".join(problems[:5])
        more = f"; and {len(problems) - 5} more" if len(problems) > 5 else ""
        fix = "fix the paths" if not gather.outside else (
            "--root DIR, a directory that holds them" if not gather.missing
            else "fix the paths (--root DIR for those outside it)"
        )
        raise NotFoundError(shown + more, hint=f"{fix}, or --keep-going to pack the rest")
    for p in problems:
        ledger.warn(f"skipped {p}")


def _trim_fixed(
    fixed, fixed_tokens, task_tokens, total_budget, render, count, ledger, memory_info
) -> None:
    """Drop fixed parts (the worst memory chunk first, then skill bodies before cards,
    then the last instruction file) while they leave the task no room."""
    while fixed and sum(fixed_tokens.values()) + task_tokens > total_budget:
        sec = next(
            (f for f in fixed if f.name == "memory"),
            next((f for f in fixed if f.name == "skills"), fixed[0]),
        )
        label, _ = sec.parts.pop()
        if sec.name == "memory" and memory_info is not None:
            _memory_left_out(memory_info, label, "over the pack budget")
        ledger.drop(f"{sec.name}: {quote_name(label)}", "over the budget")
        if not sec.parts:
            fixed.remove(sec)
            del fixed_tokens[sec.name]
            continue
        body = "".join(p for _, p in sec.parts)
        sec.text = render.section(sec.name, body)
        fixed_tokens[sec.name] = count(sec.text)


def _sections_record(fixed, fitted, task_tokens, count):
    """Tokens per section and per part, in the pack's order (for --explain and JSON)."""
    map_section, files_section = fitted.map_section, fitted.files_section
    out = [
        {
            "name": f.name,
            "tokens": count(f.text),
            "parts": [{"label": lab, "tokens": count(p)} for lab, p in f.parts],
        }
        for f in fixed
    ]
    if map_section:
        out.append({"name": "map", "tokens": count(map_section), "parts": []})
    if files_section:
        parts = [{"label": r["path"], "tokens": r["tokens"]} for r in fitted.file_rows]
        out.append({"name": "files", "tokens": count(files_section), "parts": parts})
    out.append({"name": "task", "tokens": task_tokens, "parts": []})
    out.sort(key=lambda s: SECTIONS.index(s["name"]))
    return out


def _without_instruction_files(
    entries: list[FileEntry], whole: set[str], ledger: Ledger
) -> list[FileEntry]:
    """ENTRIES without the files the instructions section already shows whole (AGENTS.md
    in a packed directory): one copy in the pack, not two. A file named on purpose stays."""
    kept = []
    for e in entries:
        if e.label in whole and not e.named and e.path is not None:
            ledger.drop(quote_name(e.label), "shown whole under instructions")
        else:
            kept.append(e)
    return kept


def _fixed_sections(
    req: PackRequest,
    root_real: str,
    pack_rels: list[str],
    skill_names: list[str],
    render: Renderer,
    ledger: Ledger,
) -> tuple[list[_Fixed], set[str]]:
    """The instructions and skills sections, rendered (empty ones left out), and the
    instruction files they show whole."""
    from ctxtools.instructions import load_instructions

    fixed: list[_Fixed] = []
    ins = load_instructions(root_real, pack_rels or None, include_readme=req.include_readme)
    ledger.said(ins.notes)
    for d in ins.dropped:
        where = quote_name(d["path"]) + (f" § {d['section']}" if d.get("section") else "")
        ledger.drop(f"instructions: {where}", d["reason"])
    parts = []
    whole = set()  # instruction files shown whole: not shown again among the files
    for f in ins.files:
        text = redact_text(f.text, quote_name(f.path), req, ledger)
        parts.append((f.path, render.instruction(f.path, text)))
        if not f.truncated and len(f.text.encode("utf-8")) == f.size:
            whole.add(f.path)
    if parts:
        body = "".join(p for _, p in parts)
        fixed.append(_Fixed("instructions", render.section("instructions", body), parts))

    if req.skills_dir is None:
        if skill_names or req.pin_skills:
            first = (list(skill_names) + list(req.pin_skills))[0]
            raise UsageError(f"@skill:{first}: no skills directory", hint="give --skills DIR")
        return fixed, whole
    from ctxtools.skills import UnknownSkillError, choose_skills, load_skills

    require_directory(req.skills_dir, f"--skills {quote_name(req.skills_dir)}")
    skills, skill_notes = load_skills(req.skills_dir)
    ledger.said(skill_notes)
    try:
        choice = choose_skills(
            skills,
            req.task,
            disclosure=req.skill_disclosure,
            pinned=tuple(req.pin_skills),
            max_expanded=req.skill_max_expanded,
        )
    except UnknownSkillError as exc:
        if not req.keep_going:
            raise
        ledger.warn(str(exc))
        known = {s.name for s in skills}
        choice = choose_skills(
            skills,
            " ".join(w for w in req.task.split() if not _unknown_skill_word(w, known)),
            disclosure=req.skill_disclosure,
            pinned=tuple(p for p in req.pin_skills if p in known),
            max_expanded=req.skill_max_expanded,
        )
    ledger.said(choice.notes)
    parts = []
    if choice.cards:
        cards = [(s.name, s.description) for s, _score in choice.cards]
        parts.append(("cards", render.skill_cards(cards)))
    for s in choice.expanded:
        body = redact_text(s.body, f"skill {s.name}", req, ledger)
        parts.append((f"skill {s.name}", render.skill_body(s.name, body)))
    if parts:
        body = "".join(p for _, p in parts)
        fixed.append(_Fixed("skills", render.section("skills", body), parts))
    return fixed, whole


def _unknown_skill_word(word: str, known: set[str]) -> bool:
    if not word.startswith("@skill:"):
        return False
    return word[len("@skill:") :].rstrip(".,;:!?)") not in known
