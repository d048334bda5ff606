"""Hostile input to every MCP tool (hypothesis): huge strings, control characters, FTS5 syntax, wrong
types, negative and huge limits. The server must never crash (a crash shows as the SDK's bare
"Error executing tool <name>" without a reason) and a refused call must write nothing.
"""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from limbic.core.mcp.schemas import graph_out
from limbic.core.models import EntityInput, ObservationInput, RelationInput

FTS_SYNTAX = ['"', '""', "*", "a*", "NEAR(a b, 2)", "a AND", "OR", "NOT x", "^start", "name:foo", "(", ")",
              "'", "\\", "%", "_", 'a"b', "-x", '{name}: "x"', "a + b", "\u200b", "Alice OR Bob"]
ALICE_OR_BOB = st.sampled_from(["Alice", "Bob", " Alice ", "alice"])
TEXT = st.one_of(
    st.text(max_size=40),
    st.text(alphabet=st.characters(max_codepoint=0x20), max_size=12),  # control characters
    st.integers(min_value=513, max_value=25_000).map(lambda n: "x" * n),  # over the name/observation limits
    st.sampled_from(FTS_SYNTAX),
    st.sampled_from(["", "   ", "\n", "\t\t"]),
    ALICE_OR_BOB,
)
WRONG = st.one_of(st.integers(min_value=-2**70, max_value=2**70), st.floats(), st.none(), st.booleans(),
                  st.lists(st.integers(), max_size=3), st.dictionaries(st.text(max_size=3), st.integers(), max_size=2))
VALUE = st.one_of(TEXT, TEXT, WRONG)
LIMIT = st.one_of(st.integers(min_value=-2**70, max_value=2**70), st.sampled_from([-1, 0, 1, 100, 101, 1000, 1001,
                                                                                   2**31, 2**63]), WRONG)


def maybe_list(element):
    return st.one_of(st.lists(element, max_size=3), element)


def obj(required: dict, optional: dict | None = None):
    return st.fixed_dictionaries(required, optional=optional or {})


ENTITY = obj({"name": VALUE, "entityType": VALUE, "observations": maybe_list(VALUE)}, {"status": VALUE})
RELATION = obj({"from": st.one_of(ALICE_OR_BOB, VALUE), "to": st.one_of(ALICE_OR_BOB, VALUE),
                "relationType": VALUE}, {"context": VALUE})
BATCH = obj({"entityName": st.one_of(ALICE_OR_BOB, VALUE), "contents": maybe_list(VALUE)},
            {"kind": VALUE, "supersedes": VALUE})
DELETION = obj({"entityName": st.one_of(ALICE_OR_BOB, VALUE), "observations": maybe_list(VALUE)})
NAMES = maybe_list(st.one_of(ALICE_OR_BOB, VALUE))

CALLS = st.one_of(
    st.tuples(st.just("create_entities"), obj({"entities": maybe_list(ENTITY)})),
    st.tuples(st.just("create_relations"), obj({"relations": maybe_list(RELATION)})),
    st.tuples(st.just("add_observations"), obj({"observations": maybe_list(BATCH)})),
    st.tuples(st.just("delete_entities"), obj({"entityNames": NAMES})),
    st.tuples(st.just("delete_observations"), obj({"deletions": maybe_list(DELETION)})),
    st.tuples(st.just("delete_relations"), obj({"relations": maybe_list(RELATION)})),
    st.tuples(st.just("read_graph"), obj({}, {"mode": st.one_of(st.sampled_from(["full", "names", "page", "summary"]),
                                                                VALUE), "offset": LIMIT, "limit": LIMIT})),
    st.tuples(st.just("search_nodes"), obj({"query": VALUE})),
    st.tuples(st.just("open_nodes"), obj({"names": NAMES})),
    st.tuples(st.just("search_semantic"), obj({"query": VALUE}, {"limit": LIMIT})),
    st.tuples(st.just("rename_entity"), obj({"oldName": st.one_of(ALICE_OR_BOB, VALUE), "newName": VALUE})),
    st.tuples(st.just("merge_entities"), obj({"sourceNames": NAMES, "targetName": st.one_of(ALICE_OR_BOB, VALUE)})),
    st.tuples(st.just("set_status"), obj({"entityNames": NAMES, "status": VALUE})),
    st.tuples(st.just("end_relation"), obj({"relation": st.one_of(RELATION, VALUE)})),
    st.tuples(st.just("get_entity"), obj({"name": st.one_of(ALICE_OR_BOB, VALUE)})),
)


def _reseed(service) -> None:
    """Keep Alice and Bob (and their relation) around so that hostile calls also hit real entities."""
    service.entities.upsert_entities([EntityInput("Alice", "person", (ObservationInput("likes tea"),)),
                             EntityInput("Bob", "person", (ObservationInput("plays chess"),))])
    service.relations.create_relations([RelationInput("Alice", "Bob", "knows")])


def _snapshot(service):
    graph = service.entities.read_graph(include_ended=True)
    return service.history.last_change_id(), graph_out(graph.entities, graph.relations)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture,
                                                                  HealthCheck.too_slow])
@given(call=CALLS)
def test_hostile_calls_never_crash_and_refusals_write_nothing(served, call):
    service, portal, client = served
    tool, arguments = call
    _reseed(service)
    before = _snapshot(service)
    result = portal.call(client.call_tool, tool, arguments)
    text = "".join(getattr(c, "text", "") for c in result.content)
    assert text.strip() != f"Error executing tool {tool}", f"{tool} crashed on {arguments!r}"
    if result.is_error:
        assert _snapshot(service) == before, f"{tool} refused {arguments!r} but wrote: {text}"
    summary = portal.call(client.call_tool, "read_graph", {"mode": "summary"})
    assert not summary.is_error


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(query=st.one_of(st.sampled_from(FTS_SYNTAX), st.text(max_size=60)), limit=st.integers(1, 100))
def test_search_treats_fts_syntax_as_plain_text(served, query, limit):
    service, portal, client = served
    _reseed(service)
    for tool, arguments in (("search_nodes", {"query": query}), ("search_semantic", {"query": query, "limit": limit})):
        result = portal.call(client.call_tool, tool, arguments)
        text = "".join(getattr(c, "text", "") for c in result.content)
        if result.is_error:  # only an empty or NUL-carrying query may be refused, with a reason
            assert "query" in text.lower(), text
            assert not query.strip() or "\x00" in query or tool == "search_nodes"
        elif tool == "search_semantic":
            assert len(result.structured_content["results"]) <= limit
