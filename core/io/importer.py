"""Import of memory files into a :class:`~limbic.core.service.MemoryService`, with a per-file report.

Every file is parsed first (:mod:`.parsers`), then applied through the service's public mutations
(``upsert_entities``, ``add_observations``, ``create_relations``, ``end_relation``) with origin
``"import"``, in batches within the service's limit of 1,000 items per call, all inside one
``MemoryService.transaction`` per file (a batch the service refuses is retried item by item). Dangling relation
endpoints (and entities only named by observation records) are matched case-insensitively against
the file and the database when exactly one name matches; otherwise a placeholder entity of type
``Unknown`` is created and listed. A second import of the same file adds nothing (duplicates of
observations and active relations are skipped by the service; ended relations are looked up first).

An import for a project (``project``) runs bound to it (``MemoryService.scoped``, docs/lifecycle.md "Project
scope"): the file's entities that name no project of their own belong to it, names (relation endpoints too)
resolve to that project's entities and the global ones, and another project's entities are neither seen nor
changed (a record naming another project is refused and reported).
"""

from __future__ import annotations

import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TypeVar

from limbic.core.errors import ImportFormatError, LimbicError, ValidationError
from limbic.core.io.parsers import ParsedEntity, ParsedObservation, ParsedRelation, ParseResult, parse_file
from limbic.core.io.reflection_records import apply_reflections
from limbic.core.io.report import FileReport, ImportReport, ReportEntry
from limbic.core.models import EntityInput, ObservationInput, RelationInput
from limbic.core.store import scope
from limbic.core.validation import MAX_ITEMS

Item = TypeVar("Item")
Result = TypeVar("Result")
Source = TypeVar("Source")

PLACEHOLDER_TYPE = "Unknown"
Progress = Callable[[int, int, str], None]


def import_files(service, paths: Sequence[str | Path], progress: Progress | None = None,
                 project: str | None | Sequence[str | None] = None) -> ImportReport:
    """Import several files in order; returns one :class:`ImportReport` with a :class:`FileReport` each.

    ``project``: the project of every file (a name), or one per file (a sequence as long as ``paths``; ``None``
    for a file imported unbound). Raises ValidationError for a sequence of another length.

    A file that cannot be read at all (binary, not UTF-8/16, empty, missing) gets ``error`` set in
    its report and the others are still imported; check :attr:`ImportReport.ok`. ``progress`` is
    called as ``progress(done, total, message)`` with ``total`` = entities + relations of all files.
    """
    parsed: list[tuple[Path, ParseResult | None, str | None]] = []
    for path in map(Path, paths):
        try:
            parsed.append((path, parse_file(path), None))
        except ImportFormatError as exc:
            parsed.append((path, None, str(exc)))
    projects = [project] * len(parsed) if project is None or isinstance(project, str) else list(project)
    if len(projects) != len(parsed):
        raise ValidationError(f"{len(projects)} projects given for {len(parsed)} files; give one per file")
    total = sum(len(r.entities) + len(r.relations) for _, r, _ in parsed if r is not None)
    counter = _Counter(progress, total)
    reports = []
    for (path, result, error), file_project in zip(parsed, projects, strict=True):
        if result is None:
            reports.append(FileReport(str(path), error=error))
            counter.message(f"{path.name}: {error}")
            continue
        reports.append(_Importer(service, result, counter, file_project).run())
    return ImportReport(reports)


def import_file(service, path: str | Path, progress: Progress | None = None, project: str | None = None) -> FileReport:
    """Import one file (for ``project``, as :func:`import_files`). Raises :class:`ImportFormatError` when it
    cannot be read at all."""
    result = parse_file(path)
    return _Importer(service, result, _Counter(progress, len(result.entities) + len(result.relations)),
                     project).run()


class _Counter:
    def __init__(self, progress: Progress | None, total: int) -> None:
        self.progress, self.total, self.done = progress, total, 0

    def advance(self, count: int, message: str) -> None:
        self.done += count
        self.message(message)

    def message(self, message: str) -> None:
        if self.progress is not None:
            self.progress(self.done, self.total, message)


def _chunks(items: list, size: int = MAX_ITEMS) -> list[list]:
    return [items[i : i + size] for i in range(0, len(items), size)]


def _observation_input(o: ParsedObservation) -> ObservationInput:
    return ObservationInput(o.content, o.kind, o.supersedes, o.created_at, o.expires_at,
                            1.0 if o.weight is None else max(0.0, min(10.0, o.weight)))


class _Importer:
    """Applies one parsed file; fills a :class:`FileReport`."""

    def __init__(self, service, result: ParseResult, counter: _Counter, project: str | None = None) -> None:
        self.service, self.result, self.counter = service, result, counter
        self.project = project if project is not None else scope.current()  # a bound call imports into its project
        self.label = Path(result.path).name if result.path else "input"
        self.report = FileReport(result.path or "input", format=result.format, lines=result.stats["lines"],
                                 parse_stats=Counter(result.stats))
        for issue in result.issues:
            entry = ReportEntry(issue.line, issue.reason, issue.item)
            {"skipped": self.report.skipped, "merged": self.report.merged,
             "recovered": self.report.recovered}.get(issue.action, self.report.ignored).append(entry)
        self.stored: set[str] = set()  # names in the database
        self.known: set[str] = set()  # names in the database or declared by the file
        self.folded: dict[str, list[str]] = defaultdict(list)  # casefolded name -> known names
        self.pending: list[ParsedEntity] = []  # placeholders waiting to be created

    def run(self) -> FileReport:
        """Apply the file in one transaction: a crash part-way leaves nothing of it behind."""
        started = time.perf_counter()
        with self.service.scoped(self.project), self.service.transaction("import_file", origin="import"):
            self.stored = set(self.service.entities.entity_names())
            self.known = self.stored | {e.name for e in self.result.entities if e.declared}
            for name in self.known:
                self.folded[name.casefold()].append(name)
            self._apply_entities([e for e in self.result.entities if e.declared])
            self._apply_undeclared([e for e in self.result.entities if not e.declared])
            self._apply_relations(self.result.relations)
            apply_reflections(self.service, self.result.reflections, self.report)
        self.report.seconds = time.perf_counter() - started
        return self.report

    # --- names -----------------------------------------------------------------------------------

    def _resolve(self, name: str, line: int | None, what: str) -> str:
        """The stored or declared name ``name`` stands for; queues a placeholder when there is none."""
        if name in self.known:
            return name
        matches = sorted(set(self.folded.get(name.casefold(), [])))
        if len(matches) == 1:
            self.report.resolved.append(ReportEntry(line, f"{what} {name!r} matched {matches[0]!r} ignoring case",
                                                    name=name))
            return matches[0]
        reason = f"{what} {name!r} does not exist"
        if matches:
            reason += f" (several entities match ignoring case: {', '.join(matches)})"
        self._queue_placeholder(name, line, reason)
        return name

    def _queue_placeholder(self, name: str, line: int | None, reason: str,
                           observations: Sequence[ParsedObservation] = ()) -> None:
        self.pending.append(ParsedEntity(name, line, PLACEHOLDER_TYPE, observations=list(observations)))
        self.report.placeholders.append(ReportEntry(line, reason + f"; placeholder entity of type "
                                                    f"{PLACEHOLDER_TYPE!r} created", name=name))
        self.known.add(name)
        self.folded[name.casefold()].append(name)

    def _create_placeholders(self) -> None:
        for batch in _chunks(self.pending):
            self._upsert(batch)
        self.pending = []

    # --- entities --------------------------------------------------------------------------------

    def _apply_entities(self, entities: list[ParsedEntity]) -> None:
        new = [e for e in entities if e.name not in self.stored]
        old = [e for e in entities if e.name in self.stored]
        for batch in _chunks(new):
            self._upsert(batch)
            self.counter.advance(len(batch), f"{self.label}: entities")
        for batch in _chunks(old):
            self._merge(batch)
            self.counter.advance(len(batch), f"{self.label}: entities")

    def _upsert(self, batch: list[ParsedEntity]) -> None:
        """Create entities (with up to 1,000 observations each; the rest follow through add_observations)."""
        items = [EntityInput(e.name, e.entity_type or PLACEHOLDER_TYPE,
                             tuple(_observation_input(o) for o in e.observations[:MAX_ITEMS]),
                             e.status, e.created_at, e.updated_at, e.project or self.project) for e in batch]
        done, _ = self._call(lambda part: self.service.entities.upsert_entities(part, origin="import"), items, batch)
        for report, entities in done:
            self.report.entities_created.extend(report.created)
            self.report.observations_added += report.observations_added
            self.stored.update(e.name for e in entities)
        rest = [(e.name, e.observations[MAX_ITEMS:], e.line) for e in batch if len(e.observations) > MAX_ITEMS]
        if rest:
            self._add_observations(rest)

    def _merge(self, batch: list[ParsedEntity]) -> None:
        """Entities already stored: the stored type is kept unless it is the placeholder type, a status
        given by the file is applied, observations not stored yet are added."""
        stored = {e.name: e for e in self.service.entities.open_nodes([e.name for e in batch], record=False).entities}
        vanished = [e for e in batch if e.name not in stored]  # deleted by another client meanwhile
        if vanished:
            self._upsert(vanished)
            batch = [e for e in batch if e.name in stored]
        changes, notes = [], {}
        for entity in batch:
            current = stored[entity.name]
            new_type = entity.entity_type if (current.entity_type == PLACEHOLDER_TYPE and entity.entity_type
                                              and entity.entity_type != PLACEHOLDER_TYPE) else None
            new_status = entity.status if entity.status and entity.status != current.status else None
            if new_type or new_status:
                changes.append(EntityInput(entity.name, new_type, (), new_status))
                notes[entity.name] = ", ".join(
                    ([f"type {current.entity_type!r} → {new_type!r}"] if new_type else [])
                    + ([f"status {current.status!r} → {new_status!r}"] if new_status else []))
        for done, _ in self._call(lambda p: self.service.entities.upsert_entities(p, origin="import"), changes, changes)[0]:
            self.report.entities_updated += len(done.updated)
        groups = [(e.name, self._new_only(stored[e.name], e.observations), e.line) for e in batch]
        added = self._add_observations([g for g in groups if g[1]])
        for entity in batch:
            what = [f"{added[entity.name]} new observation(s)"] if added.get(entity.name) else []
            what += [notes[entity.name]] if entity.name in notes else []
            if what:
                self.report.merged.append(ReportEntry(entity.line, f"already stored: {'; '.join(what)}",
                                                      name=entity.name))
            else:
                self.report.entities_unchanged += 1

    @staticmethod
    def _new_only(stored, observations: list[ParsedObservation]) -> list[ParsedObservation]:
        """Observations whose text is not stored yet (stored ones, live or superseded, are left out, so a
        supersede chain is not re-sent against a predecessor that is no longer live)."""
        contents = {o.content for o in stored.observations}
        return [o for o in observations if o.content not in contents]

    def _add_observations(self, groups: list[tuple[str, list[ParsedObservation], int | None]]) -> dict[str, int]:
        """add_observations in calls of at most 1,000 observations; returns the count added per entity."""
        added: dict[str, int] = defaultdict(int)
        items = [(name, _observation_input(o)) for name, observations, _ in groups for o in observations]
        for batch in _chunks(items):
            grouped: dict[str, list[ObservationInput]] = defaultdict(list)
            for name, observation in batch:
                grouped[name].append(observation)
            calls = [(name, tuple(obs)) for name, obs in grouped.items()]
            for result, _ in self._call(lambda p: self.service.entities.add_observations(p, origin="import"), calls, calls)[0]:
                for name, contents in result:
                    added[name] += len(contents)
        self.report.observations_added += sum(added.values())
        return added

    def _apply_undeclared(self, entities: list[ParsedEntity]) -> None:
        """Entities only named by observation records: attach to a matching entity or make a placeholder."""
        for entity in entities:
            matches = sorted(set(self.folded.get(entity.name.casefold(), [])))
            if entity.name in self.known or len(matches) == 1:
                target = entity.name if entity.name in self.known else matches[0]
                if target != entity.name:
                    self.report.resolved.append(ReportEntry(entity.line, f"observations for {entity.name!r} "
                                                            f"attached to {target!r} (case differs)", name=entity.name))
                found = self.service.entities.open_nodes([target], record=False).entities
                queued = next((p for p in self.pending if p.name == target), None)
                if found:
                    self._add_observations([(target, self._new_only(found[0], entity.observations), entity.line)])
                elif queued is not None:
                    queued.observations.extend(entity.observations)
                else:
                    self.report.skipped.append(ReportEntry(entity.line, f"observations for {target!r} not "
                                                           "imported: the entity itself was refused", name=target))
            else:
                self._queue_placeholder(entity.name, entity.line, f"observations name an unknown entity "
                                        f"{entity.name!r}", entity.observations)
            self.counter.advance(1, f"{self.label}: observation records")
        self._create_placeholders()

    # --- relations -------------------------------------------------------------------------------

    def _apply_relations(self, relations: list[ParsedRelation]) -> None:
        resolved: list[tuple[ParsedRelation, RelationInput]] = []
        for relation in relations:
            source = self._resolve(relation.source, relation.line, "relation source")
            target = self._resolve(relation.target, relation.line, "relation target")
            resolved.append((relation, RelationInput(source, target, relation.relation_type, relation.context,
                                                     relation.created_at)))
        self._create_placeholders()
        active = [(r, item) for r, item in resolved if r.active]
        for batch in _chunks(active):
            items = [item for _, item in batch]
            done, failed = self._call(lambda p: self.service.relations.create_relations(p, origin="import"), items, batch)
            created = sum(len(result) for result, _ in done)
            self.report.relations_created += created
            self.report.relations_existing += len(batch) - created - len(failed)
            self.counter.advance(len(batch), f"{self.label}: relations")
        for relation, item in ((r, i) for r, i in resolved if not r.active):
            self._apply_ended(relation, item)
            self.counter.advance(1, f"{self.label}: relations")

    def _apply_ended(self, relation: ParsedRelation, item: RelationInput) -> None:
        """An ended relation: created then ended, unless the same relation is stored already (any state)."""
        stored = self.service.entities.get_entity(item.source).relations
        if any(r.source == item.source and r.target == item.target and r.relation_type == item.relation_type
               for r in stored):
            self.report.relations_existing += 1
            return
        try:
            self.service.relations.create_relations([item], origin="import")
            self.service.relations.end_relation(item, at=relation.ended_at, origin="import")
        except LimbicError as exc:
            self.report.skipped.append(ReportEntry(relation.line, f"ended relation not imported: {exc}"))
            return
        self.report.relations_created += 1

    # --- calls -----------------------------------------------------------------------------------

    def _call(self, function: Callable[[list[Item]], Result], items: list[Item],
              sources: list[Source]) -> tuple[list[tuple[Result, list[Source]]], list[Source]]:
        """Run ``function(items)``; when the whole call is refused, retry item by item and report the refused ones.

        Returns the ``(result, source items)`` pairs of the calls that succeeded, and the refused sources.
        """
        if not items:
            return [], []
        try:
            return [(function(items), sources)], []
        except LimbicError as exc:
            if len(items) == 1:
                self._refused(sources[0], exc)
                return [], sources
        done: list[tuple[Result, list[Source]]] = []
        failed: list[Source] = []
        for item, source in zip(items, sources, strict=True):
            try:
                done.append((function([item]), [source]))
            except LimbicError as exc:
                self._refused(source, exc)
                failed.append(source)
        return done, failed

    def _refused(self, source: object, exc: LimbicError) -> None:
        line: int | None
        name: str | None
        if isinstance(source, tuple) and isinstance(source[0], ParsedRelation):
            line, name = source[0].line, f"{source[0].source} -[{source[0].relation_type}]-> {source[0].target}"
        elif isinstance(source, ParsedEntity):
            line, name = source.line, source.name
        elif isinstance(source, tuple):
            line, name = None, str(source[0])
        else:
            line, name = getattr(source, "line", None), getattr(source, "name", None)
        self.report.skipped.append(ReportEntry(line, f"refused by the store: {exc}", name=name))
