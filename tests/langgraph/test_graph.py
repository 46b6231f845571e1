"""A real LangGraph graph (plain-Python nodes, no model) that keeps its long-term memory in zkr.

Two threads of conversation (two ``thread_id``s, checkpointed by ``InMemorySaver``) share one
person's memory through the store: what one thread learns, the other recalls; a correction made in
one is what the other sees next; another person never sees it. The graph runs once with sync
nodes through ``invoke`` (the store's sync methods) and once with async nodes through ``ainvoke``
(the store's ``a``-prefixed coroutines).
"""

from __future__ import annotations

import asyncio
import operator
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypedDict

import pytest
from langgraph.checkpoint.memory import InMemorySaver
from langgraph.graph import END, START, StateGraph
from langgraph.runtime import Runtime

from zkr import MemoryDb
from zkr_langgraph import ZkrStore

from .conftest import TENANT

_FACT = re.compile(r"^my (?P<what>[a-z ]+?) is (?P<value>.+)$")


@dataclass
class Person:
    user_id: str


class Chat(TypedDict):
    messages: Annotated[list[str], operator.add]
    answer: str


def _learned(message: str) -> tuple[str, dict[str, str]] | None:
    match = _FACT.match(message.lower())
    if match is None:
        return None
    return match["what"].replace(" ", "_"), {"what": match["what"], "value": match["value"]}


def _answer(hits: list[Any]) -> str:
    if not hits:
        return "I don't know yet."
    best = hits[0].value
    return f"Your {best['what']} is {best['value']}."


def _sync_graph() -> StateGraph[Chat, Person, Chat, Chat]:
    def learn(state: Chat, runtime: Runtime[Person]) -> dict[str, Any]:
        learned = _learned(state["messages"][-1])
        if learned is not None and runtime.store is not None:
            runtime.store.put((runtime.context.user_id, "profile"), *learned)
        return {}

    def recall(state: Chat, runtime: Runtime[Person]) -> dict[str, Any]:
        assert runtime.store is not None
        hits = runtime.store.search(
            (runtime.context.user_id, "profile"), query=state["messages"][-1]
        )
        return {"answer": _answer(hits)}

    graph = StateGraph(Chat, context_schema=Person)
    graph.add_node("learn", learn)
    graph.add_node("recall", recall)
    graph.add_edge(START, "learn")
    graph.add_edge("learn", "recall")
    graph.add_edge("recall", END)
    return graph


def _async_graph() -> StateGraph[Chat, Person, Chat, Chat]:
    async def learn(state: Chat, runtime: Runtime[Person]) -> dict[str, Any]:
        learned = _learned(state["messages"][-1])
        if learned is not None and runtime.store is not None:
            await runtime.store.aput((runtime.context.user_id, "profile"), *learned)
        return {}

    async def recall(state: Chat, runtime: Runtime[Person]) -> dict[str, Any]:
        assert runtime.store is not None
        hits = await runtime.store.asearch(
            (runtime.context.user_id, "profile"), query=state["messages"][-1]
        )
        return {"answer": _answer(hits)}

    graph = StateGraph(Chat, context_schema=Person)
    graph.add_node("learn", learn)
    graph.add_node("recall", recall)
    graph.add_edge(START, "learn")
    graph.add_edge("learn", "recall")
    graph.add_edge("recall", END)
    return graph


Say = Callable[[str, str, str], dict[str, Any]]


def _speaker(mode: str, store: ZkrStore) -> Say:
    graph = _sync_graph() if mode == "sync" else _async_graph()
    app = graph.compile(checkpointer=InMemorySaver(), store=store)

    def say(thread: str, user: str, message: str) -> dict[str, Any]:
        config: Any = {"configurable": {"thread_id": thread}}
        state = {"messages": [message]}
        if mode == "sync":
            return app.invoke(state, config, context=Person(user))
        return asyncio.run(app.ainvoke(state, config, context=Person(user)))

    return say


@pytest.mark.parametrize("mode", ["sync", "async"])
def test_two_threads_share_one_persons_memory_through_zkr(
    mode: str, store: ZkrStore, memory_db: MemoryDb
) -> None:
    say = _speaker(mode, store)
    assert say("t1", "ana", "what is my favourite food?")["answer"] == "I don't know yet."
    say("t1", "ana", "My favourite food is ramen")
    # Another thread of the same person recalls what the first one learned.
    answer = say("t2", "ana", "what is my favourite food?")["answer"]
    assert answer == "Your favourite food is ramen."
    # A correction in the second thread is what the first one sees next.
    say("t2", "ana", "My favourite food is udon")
    final = say("t1", "ana", "what is my favourite food?")
    assert final["answer"] == "Your favourite food is udon."
    # Each thread kept its own conversation (the checkpointer), the memory is shared (the store).
    assert final["messages"] == [
        "what is my favourite food?",
        "My favourite food is ramen",
        "what is my favourite food?",
    ]
    # Another person's thread never sees Ana's memory.
    assert say("t3", "bo", "what is my favourite food?")["answer"] == "I don't know yet."
    # In zkr: one item, corrected once, both versions in its history.
    item = store.get(("ana", "profile"), "favourite_food")
    assert item is not None
    chain = memory_db.run(
        "history", {"tenant_id": TENANT, "person_id": "ana", "claim_id": item.citation.claim_id}
    )
    assert [v.claim.value for v in chain.versions] == [
        '{"what":"favourite food","value":"ramen"}',
        '{"what":"favourite food","value":"udon"}',
    ]
    assert store.list_namespaces() == [("ana", "profile")]
