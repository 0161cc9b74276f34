"""GraphML as networkx writes it (``nx.write_graphml``, lxml, pretty-printed), byte for byte, from plain string
formatting: a fabric of a hundred thousand links in a fraction of the time.

The fast path covers what the fabric graphs hold: an undirected simple graph whose node names are text and whose
attribute values are text, whole numbers or floats. Anything else (another type, an empty text, a control
character, a graph's own ``id``, node or edge defaults) goes to networkx itself, so the file is the same either way.
"""

from __future__ import annotations

import re
from pathlib import Path

import networkx as nx

HEAD = ("<?xml version='1.0' encoding='utf-8'?>\n<graphml xmlns=\"http://graphml.graphdrawing.org/xmlns\" "
        "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" xsi:schemaLocation=\"http://graphml.graphdrawing.org/"
        "xmlns http://graphml.graphdrawing.org/xmlns/1.0/graphml.xsd\">")
XML_TYPES = {str: "string", int: "long", float: "double"}  # networkx's names for the types of the fast path
UNSAFE = re.compile(r"[\x00-\x1f\x7f-\x9f\ud800-\udfff\ufffe\uffff]")  # where lxml's escaping or checks take over
TEXT = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})
ATTRIBUTE = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;"})


def write_graphml(graph: nx.Graph, path: Path) -> None:
    """``nx.write_graphml(graph, path)``, the same bytes."""
    if graph.is_directed() or graph.is_multigraph():
        nx.write_graphml(graph, path)
        return
    write_parts(graph.graph, list(graph.nodes(data=True)), list(graph.edges(data=True)), path, lambda: graph)


def write_parts(attributes: dict, nodes: list, edges: list, path: Path, whole) -> None:
    """``nx.write_graphml`` of the undirected simple graph with these ``attributes``, ``nodes`` and ``edges``, listed
    as its ``nodes(data=True)`` and ``edges(data=True)`` would list them, the same bytes; ``whole()`` builds the
    graph where networkx writes it (not plain): a graph made of several is written without being built (a 1M-GPU
    design's fabric.graphml 8.9-9.1 -> 6.5-6.6 s)."""
    if not plain(attributes, nodes, edges):
        nx.write_graphml(whole(), path)
        return
    keys: dict[tuple, str] = {}

    def key(name, value, scope: str) -> str:
        k = (str(name), XML_TYPES[type(value)], scope)
        if k not in keys:
            keys[k] = f"d{len(keys)}"
        return keys[k]

    blocks: dict[tuple, str] = {}

    def lines(d: dict, scope: str) -> str:
        return "".join(f'  <data key="{key(k, x, scope)}">{text(x)}</data>\n' for k, x in d.items())

    def block(d: dict, scope: str) -> str:
        """lines(d, scope), made once per distinct dict (a dict with a float each time: 0.0 and -0.0 are one key
        but two texts)."""
        values = tuple(d.values())
        kinds = tuple(map(type, values))
        if float in kinds:
            return lines(d, scope)
        index = (scope, tuple(d), values, kinds)
        if index not in blocks:
            blocks[index] = lines(d, scope)
        return blocks[index]

    graph_data = [(key(k, v, "graph"), v) for k, v in attributes.items()]
    parts = []
    names = {}  # node -> its name as an attribute's text
    for n, d in nodes:
        name = names[n] = escape(n, ATTRIBUTE)
        parts.append(f'<node id="{name}">\n{block(d, "node")}</node>\n' if d else f'<node id="{name}"/>\n')
    for u, v, d in edges:
        ends = f'source="{names[u]}" target="{names[v]}"'
        parts.append(f"<edge {ends}>\n{block(d, 'edge')}</edge>\n" if d else f"<edge {ends}/>\n")
    head = [HEAD] + [f'<key id="{i}" for="{scope}" attr.name="{escape(name, ATTRIBUTE)}" attr.type="{kind}"/>\n'
                     for (name, kind, scope), i in reversed(keys.items())]
    head.append('<graph edgedefault="undirected">' + "".join(f'<data key="{k}">{text(v)}</data>\n'
                                                             for k, v in graph_data))
    with open(path, "w", encoding="utf-8", newline="") as handle:
        handle.write("".join(head))
        handle.writelines(parts)
        handle.write("</graph></graphml>")


def text(value) -> str:
    return escape(str(value), TEXT)


def escape(value: str, table: dict) -> str:
    """``value`` with the characters of ``table`` replaced (str.translate, called only when one is there: most
    text has none, and a translation costs as much as the rest of a line)."""
    return value.translate(table) if "&" in value or "<" in value or ">" in value or '"' in value else value


def plain(attributes: dict, nodes: list, edges: list) -> bool:
    """An undirected simple graph of these ``attributes``, ``nodes`` and ``edges`` is one the fast path writes exactly
    (module docstring)."""
    if {"id", "node_default", "edge_default"} & set(attributes):
        return False
    names = [n for n, _ in nodes]
    values = [k for k in attributes] + list(attributes.values())
    for _, d in nodes:
        values += d
        values += d.values()
    for *_, d in edges:
        values += d
        values += d.values()
    if not set(map(type, values)) <= XML_TYPES.keys():  # types apart: a set of the values merges 1, 1.0 and True
        return False
    return (all(type(n) is str and n and not UNSAFE.search(n) for n in names)
            and all(v and not UNSAFE.search(v) for v in set(values) if type(v) is str))
