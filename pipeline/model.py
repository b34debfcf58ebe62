"""The one data model of race legs: Leg, Stop, ToolStep, Transition, TraceEntry, Clue.

Stages exchange these objects; artifacts store them as canonical JSON inside a stable
Arrow schema (``ARTIFACT_SCHEMA``); the public AAR JSON is an export of the same objects
(``pipeline.export.aar``).

Values flow only through references, never through copied literals:
  * a tool step's argument may hold ``{"$stop": i}`` (the value of stop i), ``{"$stop": i, "path": "a.b"}``
    (a field of it), ``{"$step": k}`` / ``{"$step": k, "path": ...}`` / ``{"$step": k, "pick": [...]}``
    (the output of step k of the same chain) and ``{"$code": text, "refs": {...}}`` (code filled with
    referenced values); ``pipeline.refs`` is the one resolver, walker and remapper of that syntax;
  * a detour names its transform and its source stop;
  * a merge or the finish line holds an expression over ``s<i>`` names (see ``pipeline.expressions``).

What changes a stop's execution or wording is typed (``FactSpec``, ``PageWording``,
``RoadblockSpec``, ``Stop.operation``); what only an AAR import needs to reproduce its source
on export is kept apart in ``AarSource``. Stages hand work to each other through typed fields of
the leg (``Leg.crawl``, ``Leg.plan``); ``Leg.metadata`` holds free annotations only.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, field, fields, is_dataclass
from typing import Any

import pyarrow as pa

from pipeline.cache import canonical_json
from pipeline.usage import UserError

# Stop kinds (our names) and the public AAR stop_type each exports to.
ROUTE_INFO, ROADBLOCK, DETOUR, MERGE, FINISH_LINE = "route_info", "roadblock", "detour", "merge", "finish_line"
WIDE = "wide"   # a stop that collects a whole set from the world (issue 34)
STOP_KINDS = (ROUTE_INFO, ROADBLOCK, DETOUR, MERGE, FINISH_LINE, WIDE)
AAR_STOP_TYPE = {ROUTE_INFO: "page", ROADBLOCK: "tool", DETOUR: "reason", MERGE: "tool", FINISH_LINE: "compute",
                 WIDE: "tool"}

# How the agent reaches a stop.
LINK_FOLLOW, SEARCH_QUERY, TOOL_CALL, COMPUTE = "link_follow", "search_query", "tool_call", "compute"
TRANSITIONS = (LINK_FOLLOW, SEARCH_QUERY, TOOL_CALL, COMPUTE)

VALUE_TYPES = ("number", "text", "coords", "date")
LEVELS = ("easy", "medium", "hard", "extreme")
VARIANTS = ("linear", "dag")


_FIELD_NAMES: dict[type, tuple[str, ...] | None] = {}   # a type's dataclass fields; None: not a dataclass


_LEAVES = frozenset({str, int, float, bool, type(None)})


def _field_names(value: Any) -> tuple[str, ...] | None:
    """The field names of a dataclass instance's type (None: not one), found once per type: is_dataclass
    on every list and dict was a sixth of serialising a leg."""
    kind = type(value)
    if kind not in _FIELD_NAMES:
        _FIELD_NAMES[kind] = (tuple(f.name for f in fields(value))
                              if is_dataclass(value) and not isinstance(value, type) else None)
    return _FIELD_NAMES[kind]


def plain(value: Any) -> Any:
    """``dataclasses.asdict`` without its deep copies of every leaf (a leg's leaves are strings and
    numbers): serialising legs was a seventh of a generation run's time. Leaves, most of the calls,
    are told by their exact type first."""
    kind = type(value)
    if kind in _LEAVES:
        return value
    names = _field_names(value)
    if names is not None:
        return {name: v if type(v := getattr(value, name)) in _LEAVES else plain(v) for name in names}
    if isinstance(value, (list, tuple)):   # leaves kept without a call (a crawl's lists are thousands)
        items = [v if type(v) in _LEAVES else plain(v) for v in value]
        return items if kind is list else type(value)(items)
    if isinstance(value, dict):
        pairs = ((k if type(k) in _LEAVES else plain(k), v if type(v) in _LEAVES else plain(v))
                 for k, v in value.items())
        return dict(pairs) if kind is dict else type(value)(pairs)
    return value


def dataclass_fields(value: Any) -> dict[str, Any]:
    """A dataclass as the dict of its fields, the values themselves (``canonical_json``'s ``default``:
    what ``plain`` gives at one level, read by the encoder without a copy); TypeError for anything else,
    as JSON raises for an object it has no form for."""
    names = _field_names(value)
    if names is None:
        raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")
    return {name: getattr(value, name) for name in names}


@dataclass
class ToolStep:
    tool: str
    args: dict[str, Any]            # may hold references ({"$stop": i}, {"$step": k}, {"$code": ...}; see pipeline.refs)
    output_key: str                 # name of the value this step yields, e.g. "coords", "elevation_m"
    extract: str                    # path into the result object, e.g. "elevation_m", "daily.0.temp_mean_c", "count"
    aar_args: dict[str, Any] | None = None  # AAR import: arguments our tool schema lacks, kept for export only


@dataclass
class Extraction:
    """Where a page stop's fact lives in its page (invariant 7 re-checks it)."""
    source: str                     # infobox | prose | cross_section | subject (what the page is about)
    field: str | None = None        # infobox parameter name
    section: str | None = None      # section title ("" = lead) for prose facts
    sentence: str | None = None     # the sentence holding the fact (prose)
    number_index: int | None = None # which number of that sentence
    name_index: int | None = None   # or which country that sentence names (``execute.countries_named``)
    second_section: str | None = None  # cross_section: a second section whose fact combines with the first


@dataclass
class Relation:
    """How a hop's clue names the next page through the page before it (issue 21): never by a key of
    the target (title, short description, a sentence of it), only by what it is and where the page
    before names it. ``named``: the one thing of kind ``noun`` that a sentence names (or, where it
    names several, the ``position``-th of them in the sentence's order); ``described``: the one
    thing of kind ``noun`` that the page's short description (``sentence``) names; ``infobox``:
    the thing of kind ``noun`` the infobox gives for ``label``; ``choice``: of the countries a
    sentence names, the one with the ``extreme`` (largest | smallest) ``measure`` (area |
    population) as the country statistics give it, which the agent must look up for each."""
    kind: str                       # named | described | infobox | choice
    noun: str                       # what the target is, in a reader's word ("river", "poet", "country")
    section: str | None = None      # the block of the page before whose sentence names it ("" = opening text)
    sentence: str | None = None     # that sentence
    label: str | None = None        # infobox: the field's label
    measure: str | None = None      # choice: area | population
    extreme: str | None = None      # choice: largest | smallest
    candidates: list[str] = field(default_factory=list)  # choice: the countries the sentence names, in order;
                                                         # named with ``position``: the things of the kind it names
    position: int | None = None     # named: the target is the position-th (1-based) of ``candidates``


@dataclass
class Transition:
    kind: str                       # link_follow | search_query | tool_call | compute
    from_stop: int | None = None    # the page stop the agent leaves from
    target_url: str | None = None
    search_query: str | None = None
    relation: Relation | None = None  # a hop: how the clue names this page through the page before

    def __post_init__(self):
        if isinstance(self.relation, dict):   # read back from JSON
            self.relation = Relation(**self.relation)


@dataclass
class FactSpec:
    """What a page stop's fact is: its role decides which roadblocks and diamonds may consume it."""
    role: str                       # place | country | date | number
    label: str                      # the infobox label or prose noun the clue asks for
    unit: str | None = None         # unit the page gives for a number (conversions start from it)


@dataclass
class PageWording:
    """How a clue may point at a page without naming it (verbalize's circumlocution)."""
    description: str | None = None  # the page's short description
    infobox_type: str | None = None


@dataclass
class RoadblockSpec:
    """How a roadblock instantiated from a template runs and reads (templates/roadblocks.toml)."""
    inputs: list[int] = field(default_factory=list)   # the stops feeding the template's in0, in1 (template order)
    params: dict[str, str] = field(default_factory=dict)  # parameters drawn from the template's [params]
    scale: float = 1                # raw value multiplied by this before rounding
    round: float = 1                # then rounded to this step
    stable: bool = False            # rounded coarsely enough to survive small data drift
    simulated_only: bool = False    # no real offline data backs the template


@dataclass
class WideSpec:
    """A wide stop (issue 34): the set of every member of a domain that a predicate holds for, decided
    member by member by the tools, and one figure over it. ``members`` is the set as the generator
    enumerated it over the whole world directly (not through the tools); the golden trace collects it
    through the tools an agent has, and acceptance checks that both are the same set.

    Domains: ``countries`` (the country statistics' countries whose capital lies within ``radius_km``
    of the input's point, and, with ``measure``, whose figure is at least ``threshold``), ``airports``
    (the IATA airports within ``radius_km`` of the input's point, and, with ``measure`` = elevation,
    whose ground lies at least ``threshold`` m high), ``pages`` (the pages whose opening text contains
    the whole word ``word``, the name the input gave), ``links`` (the pages that the input stop's page
    links to whose short description contains the whole word ``word``)."""
    domain: str                     # countries | airports | pages | links
    aggregate: str                  # count | sum (of ``figure`` over the members) | largest | smallest (the
                                    # ``rank``-th largest or smallest ``figure`` among the members)
    radius_km: float | None = None  # countries, airports: the distance from the input's point
    measure: str | None = None      # the statistic a threshold holds on: population | area | elevation
    threshold: float | None = None  # members' measure at least this
    figure: str | None = None       # sum, largest, smallest: population (in millions) | area (in thousands of
                                    # km2) | elevation (m; airports)
    rank: int | None = None         # largest, smallest: 1 for the largest (smallest) itself, 2 the next ...
    word: str | None = None         # pages: the whole word their opening text contains; links: their short description
    members: list[str] = field(default_factory=list)   # the exact set, sorted (country names, IATA codes, titles)


@dataclass
class AarSource:
    """What an AAR import keeps only so that export reproduces its source; never read by execution."""
    reasoning: str = ""
    reason_code: str | None = None               # a detour's code as AAR wrote it
    bridge: dict[str, Any] | None = None         # a page bridge that is not the next page's transition
    referenced_stops: list[int] | None = None    # finish line: AAR's list when it differs from depends_on
    expression_code: str | None = None           # finish line: code that is not ``result = <expr>``
    code_prelude: str | None = None              # finish line: helper definitions before ``result = <expr>``


@dataclass
class Stop:
    index: int
    kind: str
    description: str                # what is to be found, in plain words (never shown verbatim as a clue)
    depends_on: list[int] = field(default_factory=list)
    page_url: str | None = None     # page stops: the page; other stops: the context page
    page_title: str | None = None
    extraction: Extraction | None = None
    transition: Transition | None = None
    template: str | None = None     # roadblock template or diamond type
    tool_chain: list[ToolStep] = field(default_factory=list)
    transform: str | None = None    # detour transform name
    source_stop: int | None = None  # detour input
    expression: str | None = None   # merge / finish_line expression over s<i> names
    value: Any = None
    value_type: str | None = None
    diamond: int | None = None      # diamond number, for the source, branches and merge of a diamond
    diamond_role: str | None = None # source | branch | merge
    fact: FactSpec | None = None    # page stops
    wording: PageWording | None = None  # page stops
    roadblock: RoadblockSpec | None = None  # roadblocks (and diamond branches) made from a template
    operation: str | None = None    # merge kind (merges) or reduction name (finish line), as the clue states it
    wide: WideSpec | None = None    # wide stops: the set they collect (issue 34)
    awaiting_diamond: bool = False  # prevalidate -> diamond: a page stop kept only because a diamond may fork it
    aar: AarSource | None = None    # AAR imports only


# A trace must not depend on whether a call was answered from the cache (resumed runs give the
# same bytes), so "computed" and "cache" are both recorded as "toolbox"; replays stay visible.
SERVED_AS = {"computed": "toolbox", "cache": "toolbox", "replay": "replay"}


@dataclass
class TraceEntry:
    """One golden tool call: a leg's trace, a task's golden trace and scoring's golden steps."""
    stop: int | None                # the stop it serves (None in task sets, which have no stops)
    step: int                       # position in the stop's chain (legs) or in the whole trace (tasks)
    tool: str
    args: dict[str, Any]            # resolved arguments as sent
    response: str                   # canonical JSON text of the result (as recorded in the cache)
    provenance: str | None
    served_from: str = "toolbox"    # toolbox | replay (how the call was answered; cache hits count as toolbox)
    value: Any = None               # the value this step yielded

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> TraceEntry:
        return cls(**{"stop": None, **d})


@dataclass
class Crawl:
    """crawl -> plan: the pages reachable from the seed within the level's depth."""
    pages: list[tuple[str, int]] = field(default_factory=list)   # (title, depth), by depth then title
    edges: dict[str, list[str]] = field(default_factory=dict)    # title -> crawled pages it links to
    mentions: dict[str, list[str]] = field(default_factory=dict)  # title -> crawled pages named with it, unlinked (search bridges: its text names them or theirs names it)
    seed_url: str = ""
    skipped_pages: dict[str, str] = field(default_factory=dict)  # title -> why it could not be read


@dataclass
class Plan:
    """plan -> build / pre-validate: the leg's shape and its route of pages."""
    stops: int
    roadblocks: int
    detours: int
    pages: int
    route: list[str]
    depth: int
    relations: list[Relation] = field(default_factory=list)  # hop i: how route[i + 1] is reached from route[i]

    def __post_init__(self):
        self.relations = [Relation(**r) if isinstance(r, dict) else r for r in self.relations]


@dataclass
class Clue:
    number: int                     # 1-based, one per stop, in stop order
    stop: int
    text: str


@dataclass
class Leg:
    leg_id: str
    level: str
    variant: str
    seed: int
    seed_title: str
    seed_url: str
    stops: list[Stop] = field(default_factory=list)
    passcode: int | None = None     # y*, one digit 0-9
    clues: list[Clue] = field(default_factory=list)
    trace: list[TraceEntry] = field(default_factory=list)
    theme: str = ""
    crawl: Crawl | None = None
    plan: Plan | None = None
    metadata: dict[str, Any] = field(default_factory=dict)  # free annotations (slot, attempt, diagnostics)

    # ---- derived views -------------------------------------------------------------
    @property
    def riddle(self) -> str:
        return "\n\n".join(f"{c.number}. {c.text}" for c in self.clues)

    @property
    def step_budget(self) -> int:
        """B = max(10, floor(1.5 K)), AAR's budget, where K is the leg's stops or, when its golden trace
        takes more tool calls than it has stops, those calls. AAR's stops take one call each; a choice
        hop here looks up every candidate ("the one with the largest area"), so K = stops alone would
        leave some legs a budget below their own golden route."""
        return max(10, (3 * max(len(self.stops), len(self.trace))) // 2)

    def stops_of(self, kind: str) -> list[Stop]:
        return [s for s in self.stops if s.kind == kind]

    @property
    def diamonds(self) -> int:
        return len({s.diamond for s in self.stops if s.diamond is not None})

    # ---- serialisation -------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        return plain(self)

    def to_json(self) -> str:
        """``canonical_json(self.to_dict())``, byte for byte, without building that copy: JSON's own
        encoder walks the lists and dicts and asks ``dataclass_fields`` for each dataclass (a leg is
        serialised at every stage; 1.7x faster)."""
        return canonical_json(self, default=dataclass_fields)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Leg:
        d = dict(d)
        stops = []
        stop_fields = set(Stop.__dataclass_fields__)
        for s in d.get("stops", []):
            s = dict(s)
            unknown = sorted(set(s) - stop_fields)
            if unknown:
                raise LegFormatError(f"leg {d.get('leg_id')}: stop fields {unknown} are not in this version's data "
                                     "model (written by an older Legwork? regenerate it)")
            s["tool_chain"] = [ToolStep(**t) for t in s.get("tool_chain", [])]
            for name, kind in _STOP_PARTS.items():
                s[name] = kind(**s[name]) if s.get(name) else None
            stops.append(Stop(**s))
        d["stops"] = stops
        d["clues"] = [Clue(**c) for c in d.get("clues", [])]
        d["trace"] = [TraceEntry.from_dict(t) for t in d.get("trace", [])]
        if d.get("crawl"):
            d["crawl"] = Crawl(**{**d["crawl"], "pages": [tuple(p) for p in d["crawl"].get("pages", [])]})
        d["plan"] = Plan(**d["plan"]) if d.get("plan") else None
        return cls(**d)

    @classmethod
    def from_json(cls, text: str) -> Leg:
        return cls.from_dict(json.loads(text))


class LegFormatError(UserError, ValueError):
    """A leg's JSON does not fit this version's data model."""


_STOP_PARTS = {"extraction": Extraction, "transition": Transition, "fact": FactSpec, "wording": PageWording,
               "roadblock": RoadblockSpec, "aar": AarSource, "wide": WideSpec}


# ---- artifacts -------------------------------------------------------------------------
# One row per leg in progress (stage artifacts) or per accepted leg (legs.parquet).
ARTIFACT_SCHEMA = pa.schema([
    pa.field("leg_id", pa.string(), nullable=False),
    pa.field("level", pa.string(), nullable=False),
    pa.field("variant", pa.string(), nullable=False),
    pa.field("seed", pa.int64(), nullable=False),
    pa.field("attempt", pa.int64(), nullable=False),
    pa.field("stage", pa.string(), nullable=False),
    pa.field("status", pa.string(), nullable=False),        # ok | rejected | error (a bug, fails the run)
    pa.field("reason", pa.string()),                        # why rejected, or the unexpected exception
    pa.field("where", pa.string()),                         # errors: the traceback's last frame
    pa.field("n_stops", pa.int64()),
    pa.field("n_route_info", pa.int64()),
    pa.field("n_roadblocks", pa.int64()),
    pa.field("n_detours", pa.int64()),
    pa.field("n_diamonds", pa.int64()),
    pa.field("n_tool_calls", pa.int64()),
    pa.field("passcode", pa.int64()),
    pa.field("seed_url", pa.string()),
    pa.field("riddle", pa.string()),
    pa.field("simulated_share", pa.float64()),
    pa.field("leg_json", pa.string(), nullable=False),
])


def simulated_share(leg: Leg) -> float:
    """The share of the golden trace's tool calls answered by simulated values."""
    calls = [t for t in leg.trace if t.provenance]
    return round(sum(t.provenance == "simulated" for t in calls) / len(calls), 6) if calls else 0.0


def leg_summary(leg: Leg) -> dict[str, Any]:
    """The flat columns every table of legs shares (stage artifacts, legs.parquet, the hub rows)."""
    kinds = [s.kind for s in leg.stops]
    share = leg.metadata.get("simulated_share")
    if share is None and leg.trace:
        share = simulated_share(leg)
    return {
        "leg_id": leg.leg_id, "level": leg.level, "variant": leg.variant, "seed": leg.seed,
        "n_stops": len(leg.stops), "n_route_info": kinds.count(ROUTE_INFO), "n_roadblocks": kinds.count(ROADBLOCK),
        "n_detours": kinds.count(DETOUR), "n_diamonds": leg.diamonds, "n_tool_calls": len(leg.trace),
        "passcode": leg.passcode, "seed_url": leg.seed_url, "seed_title": leg.seed_title,
        "riddle": leg.riddle, "step_budget": leg.step_budget,
        "simulated_share": None if share is None else float(share),
    }


def leg_row(leg: Leg, stage: str, attempt: int, status: str = "ok", reason: str | None = None,
            where: str | None = None, leg_json: str | None = None) -> dict[str, Any]:
    """One ``ARTIFACT_SCHEMA`` row: the leg at a stage (or accepted), with its full JSON (``leg_json``:
    already written for this very state of the leg, ``leg.to_json()``); ``where`` is an error's last
    traceback frame."""
    names = set(ARTIFACT_SCHEMA.names)
    row = {k: v for k, v in leg_summary(leg).items() if k in names}
    return {**row, "attempt": attempt, "stage": stage, "status": status, "reason": reason, "where": where,
            "leg_json": leg.to_json() if leg_json is None else leg_json}
