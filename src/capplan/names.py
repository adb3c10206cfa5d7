"""How a user names things, and what capplan answers when a name is wrong.

Every stage resolves names the user typed — a quantity, a catalog id, a
table row, a plan key — so the rules live here, below all of them: the
table-cell reference ``table[row].column``, the "did you mean" hint, and the
serving engines' flag names a newcomer writes for capplan's inputs.
"""

from __future__ import annotations

import difflib
import re

_CELL = re.compile(r"^(\w+)\[([^\]]+)\]\.(\w+)$")


def cell(reference: str) -> tuple[str, str, str] | None:
    """``'deployments[aws-p4de.24xlarge].nodes'`` -> ``(table, row key, column)``;
    None for anything else."""
    match = _CELL.match(str(reference))
    return match.groups() if match else None


def nearest(name: str, options, *, cutoff: float = 0.6, count: int = 3) -> str:
    """``'; did you mean a, b?'`` (empty when nothing is close): every unknown key or name a
    plan reader refuses is suggested here. A bare column name also finds the table columns of
    that name (``monthly_cost`` -> ``deployments.monthly_cost``); a name spelled out also
    finds the short key it abbreviates (``tensor_parallel`` or ``tp_size`` -> ``tp``), which
    spelling alone does not find."""
    options = [str(o) for o in options]
    same_column = [o for o in options if "." in o and o.split(".", 1)[1] == name]
    spelled = [o for o in difflib.get_close_matches(str(name), options, n=count, cutoff=cutoff)
               if o not in same_column]
    short = [o for o in options if _abbreviates(o, str(name)) and o not in same_column + spelled]
    near = (same_column + spelled + short)[:max(count, len(same_column))]
    return f"; did you mean {', '.join(near)}?" if near else ""


def _abbreviates(option: str, name: str) -> bool:
    """Whether a one-word ``option`` of 2-4 letters is the initials of ``name``'s leading words
    (``tp`` for ``tensor_parallel``, ``tensor_parallel_size``) or its first word (``tp`` for ``tp_size``)."""
    words = [w for w in re.split(r"[\W_]+", name.lower()) if w]
    option = option.lower()
    if not 2 <= len(option) <= 4 or not option.isalpha() or len(words) < 2:
        return False
    return words[0] == option or "".join(w[0] for w in words[:len(option)]) == option


_REPLICA = ("gpus_per_replica", "GPUs per model replica: the tensor × pipeline parallel degree")
_CONTEXT = ("the classes table", "a request keeps its class's prompt_tokens + output_tokens in the KV cache; "
            "capplan sizes the pool from them, not from a context limit")
_BATCH = ("decode_batch", "the decode batch the bandwidth bound assumes")

# An engine's flag -> (engine, capplan's input, what that input is). A flag that is itself an
# input of some plans (max_num_seqs: memory_accounting: engine) points where the others are read.
ENGINE_FLAGS: dict[str, tuple[str, str, str]] = {
    "tensor_parallel_size": ("vLLM", *_REPLICA),
    "pipeline_parallel_size": ("vLLM", *_REPLICA),
    "tp_size": ("SGLang", *_REPLICA),
    "pp_size": ("SGLang", *_REPLICA),
    "tp": ("SGLang", *_REPLICA),
    "max_model_len": ("vLLM", *_CONTEXT),
    "context_length": ("SGLang", *_CONTEXT),
    "max_seq_len": ("TensorRT-LLM", *_CONTEXT),
    "max_num_seqs": ("vLLM", *_BATCH),
    "max_batch_size": ("TensorRT-LLM", *_BATCH),
    "max_running_requests": ("SGLang", *_BATCH),
    "mem_fraction_static": ("SGLang", "gpu_memory_utilization", "the share of GPU memory the engine may use"),
    "kv_cache_dtype": ("vLLM", "kv_bytes_per_element", "bytes per cached K or V element: 2 for BF16, 1 for FP8"),
    "quantization": ("vLLM", "model: {id: ..., weights: fp8}",
                     "a checkpoint's weight format from the catalog, or weight_bytes_per_param"),
}


def engine_flag(name: str) -> str:
    """``'tensor_parallel_size is vLLM's flag; capplan's input is gpus_per_replica (...)'``, or ''."""
    known = ENGINE_FLAGS.get(str(name).strip().lstrip("-").replace("-", "_"))
    if known is None:
        return ""
    engine, target, meaning = known
    return f"{name} is {engine}'s flag; capplan's input is {target} ({meaning})"
