"""Hand-offs to operations (designer.outputs.handoff): Slurm topology files and the node map."""

from __future__ import annotations

import csv
from pathlib import Path

from designer import cli
from designer.outputs.cabling import site_graphs
from designer.outputs.handoff import hostlist, names_list, site_nodes, write_blocks, write_node_map, write_topology
from tests.test_layout import floor_book
from tests.test_model import design

ROOT = Path(__file__).resolve().parents[1]


def test_hostlists_compress_runs():
    assert hostlist("n-", [1, 2, 3, 5, 7, 8], 4) == "n-[0001-0003,0005,0007-0008]"
    assert hostlist("n-", [9], 4) == "n-0009"
    assert names_list(["s-leaf-003", "s-leaf-001", "s-leaf-002", "s-spine-1"]) == "s-leaf-[001-003],s-spine-1"


def test_superpod_units_are_slurm_blocks(tmp_path):
    """The DGX SuperPOD H100 example (127 nodes, QM9700 leaves of 32 down ports): four scalable units of 32
    nodes (the last 31), each one logical switch of the tree under the spines and one block of 32."""
    folder = tmp_path / "out"
    assert cli.main(["solve", str(ROOT / "data" / "examples" / "superpod-h100.xlsx"), "-o", str(folder),
                     "--quiet"]) == cli.EXIT_OK
    tree = (folder / "topology.conf").read_text().splitlines()
    assert "SwitchName=superpod-su1 Nodes=superpod-node-[0001-0032]" in tree
    assert "SwitchName=superpod-su4 Nodes=superpod-node-[0097-0127]" in tree
    assert "SwitchName=superpod-spines Switches=superpod-su[1-4]" in tree
    blocks = (folder / "topology-block.conf").read_text().splitlines()
    assert [line for line in blocks if line.startswith("Block")] == [
        "BlockName=superpod-b1 Nodes=superpod-node-[0001-0032]", "BlockName=superpod-b2 Nodes=superpod-node-[0033-0064]",
        "BlockName=superpod-b3 Nodes=superpod-node-[0065-0096]", "BlockName=superpod-b4 Nodes=superpod-node-[0097-0127]",
        "BlockSizes=32"]
    rows = list(csv.DictReader(open(folder / "nodes.csv", encoding="utf-8")))
    assert len(rows) == 127 * 8
    # NIC r of every node is on rail r's leaf of its SU
    assert all(r["leaf"] == f"superpod-leaf-r{r['rail']}-su{r['scalable_unit']}" for r in rows)
    assert {r["scalable_unit"] for r in rows if r["node"] == "superpod-node-0033"} == {"2"}


def test_one_switch_site(tmp_path):
    """4 nodes on one switch: one tree switch with the 4 nodes, one block of 4, 32 NICs in the map."""
    solution = design(tmp_path, floor_book(32, nodes_per_rack=2))
    sites = site_nodes(solution, site_graphs(solution))
    write_topology(sites, tmp_path / "topology.conf")
    write_blocks(sites, tmp_path / "topology-block.conf")
    write_node_map(sites, tmp_path / "nodes.csv")
    assert "SwitchName=s1-leaf-01 Nodes=s1-node-[0001-0004]" in (tmp_path / "topology.conf").read_text()
    assert (tmp_path / "topology-block.conf").read_text().splitlines()[-1] == "BlockSizes=4"
    rows = list(csv.DictReader(open(tmp_path / "nodes.csv", encoding="utf-8")))
    assert len(rows) == 32 and rows[2]["rack"] == "s1-r01-01" and rows[-1]["rack"] == "s1-r01-02"


def test_node_map_quotes_what_starts_like_a_formula(tmp_path):
    """A site named like a formula (=cmd) reaches nodes.csv quoted in every cell made from it (the site, its nodes',
    leaves' and racks' names), each NIC's row otherwise as before: 32 rows, NIC r of a node on its rail r."""
    solution = design(tmp_path, floor_book(32, nodes_per_rack=2))
    for entry in solution["sites"]:
        entry["name"] = "=cmd"
    sites = site_nodes(solution, site_graphs(solution))
    write_node_map(sites, tmp_path / "nodes.csv")
    rows = list(csv.reader(open(tmp_path / "nodes.csv", encoding="utf-8")))[1:]
    assert len(rows) == 32
    assert rows[0][:2] == ["'=cmd", "'=cmd-node-0001"] and rows[0][5] == "'=cmd-leaf-01"
    assert rows[-1][1] == "'=cmd-node-0004" and rows[-1][7] == "'=cmd-r01-02"
    assert not any(cell and cell[0] in "=+-@\t\r" for row in rows for cell in row)
    assert [row[2] for row in rows[:8]] == [str(n) for n in range(1, 9)]
