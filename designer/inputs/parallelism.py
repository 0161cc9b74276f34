"""Rules of the workload sheet across sheets: the all-reduce limit's inputs, a training job's parallelism that
fits its GPUs (gpus_required) and the node type's scale-up domain, and the training objectives' needs."""

from __future__ import annotations

from designer.errors import Problem
from designer.inputs.schema import TRAINING_OBJECTIVES
from designer.inputs.sheets import Parsed, norm


def check_objective(project: Parsed, workload: Parsed | None, problems: list[Problem]) -> None:
    """A training objective needs the training estimate; gpus_max is at least gpus_required."""
    values, cells = project.records[0], project.cells[0]
    objective = values["objective"]
    if objective in TRAINING_OBJECTIVES and (workload is None or workload.records[0]["training_tokens"] is None):
        problems.append(Problem(project.label, cells["objective"], "objective", objective,
                                "needs the training estimate: a workload sheet with training_tokens",
                                "add the workload's training keys, or choose min_cost or min_latency"))
    most, least = values["gpus_max"], values["gpus_required"]
    if most is not None and least is not None and most < least:
        problems.append(Problem(project.label, cells["gpus_max"], "gpus_max", most,
                                f"is less than gpus_required ({least:,})", "enter at least gpus_required, or blank"))


def check_workload(workload: Parsed, project: Parsed | None, nodes: Parsed | None, problems: list[Problem]) -> None:
    values, cells = workload.records[0], workload.cells[0]

    def bad(key, message, fix):
        problems.append(Problem(workload.label, cells.get(key, ""), key, values.get(key), message, fix))

    reported = {(q.sheet, q.cell) for q in problems if q.cell}  # a cell that did not read has its problem already
    if (values["max_comm_fraction"] is not None and values["step_compute_ms"] is None
            and (workload.label, cells["step_compute_ms"]) not in reported):
        bad("step_compute_ms", "the max_comm_fraction limit needs the compute time of a micro-batch",
            "enter step_compute_ms, or leave max_comm_fraction blank")
    if values["training_tokens"] is None:
        return
    missing = [key for key in ("layers", "hidden_size") if values[key] is None]
    if missing:
        bad("training_tokens", f"the training estimate needs the model's {' and '.join(missing)}",
            f"enter {' and '.join(missing)}, or leave training_tokens blank")
    active = values["active_params_billion"]
    if active is not None and values["model_params_billion"] is not None and active > values["model_params_billion"]:
        bad("active_params_billion", f"is more than model_params_billion ({values['model_params_billion']:g})",
            "enter the parameters a token passes through, at most the model's")
    node = _node(project, nodes)
    if node is not None:
        _check_node(node, nodes, problems)
    if project is None or project.records[0]["gpus_required"] is None:
        return
    _check_split(values, bad, int(project.records[0]["gpus_required"]), node)


def _node(project: Parsed | None, nodes: Parsed | None) -> tuple[dict, dict] | None:
    """The project's node type row and its cells."""
    if project is None or nodes is None:
        return None
    name = norm(project.records[0]["node_type"] or "")
    return next(((r, c) for r, c in zip(nodes.records, nodes.cells) if norm(r["name"]) == name), None)


def _check_node(node: tuple[dict, dict], nodes: Parsed, problems: list[Problem]) -> None:
    record, cells = node
    for key in ("gpu_tflops", "scaleup_gbps"):
        if record[key] is None:
            problems.append(Problem(nodes.label, cells[key], key, None,
                                    f"the training estimate (workload training_tokens) needs {record['name']}'s {key}",
                                    f"enter {key} for {record['name']}"))


def _check_split(values: dict, bad, gpus: int, node) -> None:
    tp, pp, ep = values["tp"], values["pp"], values["ep"]
    batch, seq = values["global_batch_tokens"], values["seq_len"]
    if None in (tp, pp, ep, batch, seq):  # a cell that did not read is reported already
        return
    if node is not None:
        record = node[0]
        domain = record["scaleup_gpus"] or record["gpus_per_node"]
        if tp > domain or domain % tp:
            bad("tp", f"tensor parallelism stays in the scale-up domain of {domain} GPUs ({record['name']}): tp "
                f"must divide it", f"enter a divisor of {domain}")
    if gpus % (tp * pp):
        bad("pp", f"tp x pp = {tp * pp} does not divide gpus_required ({gpus:,})",
            "choose tp and pp whose product divides the GPUs, or change gpus_required")
        return
    dp = gpus // (tp * pp)
    if dp % ep:
        bad("ep", f"does not divide the {dp:,} data-parallel replicas (gpus_required / (tp x pp))",
            f"enter a divisor of {dp:,}")
    if values["layers"] is not None and values["layers"] % pp:
        bad("pp", f"does not divide the {values['layers']} layers into equal stages", "enter a divisor of layers")
    if values["hidden_size"] is not None and values["hidden_size"] % tp:
        bad("tp", f"does not divide hidden_size ({values['hidden_size']})", "enter a divisor of hidden_size")
    if batch % seq or (batch // seq) % dp:
        bad("global_batch_tokens", f"must be whole sequences of seq_len ({seq:,}) shared evenly by the {dp:,} "
            "data-parallel replicas", f"enter a multiple of {seq * dp:,} tokens (seq_len x replicas)")
