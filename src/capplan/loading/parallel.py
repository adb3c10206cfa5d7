"""Which tensor-parallel sizes the serving engine accepts for a model.

capplan sizes a replica as one tensor-parallel group over its ``gpus_per_replica`` GPUs (the
KV heads each GPU keeps, ``kv_heads_per_gpu``, divide by them). vLLM refuses a size that does
not split the model's attention heads evenly, so a plan, a candidate or ``init --tp`` that
asks for one sizes a deployment nobody can start:

- the attention heads: ``ModelConfig.verify_with_parallel_config`` (vllm/config.py) raises
  "Total number of attention heads (64) must be divisible by tensor parallel size (3)";
- the KV heads: ``QKVParallelLinear`` (vllm/model_executor/layers/linear.py) gives each GPU
  ``divide(total_num_kv_heads, tp_size)`` heads while TP is below the KV heads, and from
  there one head replicated ``divide(tp_size, total_num_kv_heads)`` times; ``divide`` asserts
  the division is exact, so TP must divide the KV heads or be a multiple of them (the
  replication :mod:`capplan`'s ``kv_heads_per_gpu`` formula already models).

An MLA model (DeepSeek-V3, Kimi K2) caches one latent per layer that every GPU keeps whole:
only its attention heads are split. A model whose attention heads capplan does not know (a
catalog entry without ``attention_heads``) is not checked: capplan checks what it knows.
"""

from __future__ import annotations

from capplan.loading.catalog import Entry


def refusal(model: Entry, tp: int, kv_heads: float | None = None) -> str:
    """Why vLLM would refuse tensor parallel size ``tp`` for ``model``, with the sizes it takes
    ('' when it would not); ``kv_heads`` is the plan's (default: the catalog's)."""
    why = _why(model, tp, kv_heads)
    if not why:
        return ""
    fine = [n for n in range(1, model.attention_heads + 1) if not _why(model, n, kv_heads)]
    return f"vLLM refuses tensor parallel size {tp} for {model.id}: {why}; sizes it takes: {', '.join(map(str, fine))}"


def _why(model: Entry, tp: int, kv_heads: float | None) -> str:
    heads = model.attention_heads
    if heads is None:
        return ""
    if heads % tp:
        return f"its {heads} attention heads are not divisible by {tp} (ModelConfig.verify_with_parallel_config)"
    kv = _kv_heads(model, kv_heads)
    if kv and (kv % tp if tp < kv else tp % kv):
        return (f"its {kv} KV heads can neither be split over {tp} GPUs nor replicated onto them "
                f"(QKVParallelLinear divides them by a smaller TP, and a larger TP by them)")
    return ""


def _kv_heads(model: Entry, given: float | None) -> int | None:
    """The KV heads vLLM splits (None for MLA, whose latent every GPU keeps whole)."""
    if model.attention == "mla":
        return None
    value = given if given is not None else (model.values.get("kv_heads") or {}).get("value")
    return int(value) if value else None
