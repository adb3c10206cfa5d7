"""A model's architecture from its own Hugging Face ``config.json``.

A plan may name the model by the configuration file kept next to it instead
of a catalog id::

    model: {config: models/qwen3-32b/config.json}

The file is found the way sweep imports are (inside the plan's repository,
no absolute path, no ``..`` above it, no symlink out of it), read as JSON
(nothing in it is run), and turned into the same kind of entry the catalog
gives: the layers, heads, widths, vocabulary, window layout and experts, each
value sourced to the file and its SHA-256. A file it cannot interpret is
refused with the key it lacks.

What a config.json does not say, the plan must: the parameter count (it is in
the checkpoint, not the config) and, for a checkpoint quantized to more than
one format (MXFP4 experts next to BF16 attention, as gpt-oss ships), the bytes
per parameter. Those names are the entry's ``required`` inputs.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from dataclasses import dataclass
from pathlib import Path

from capplan.errors import CapplanError
from capplan.loading.catalog import Entry
from capplan.loading.sweeps import locate

DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4}
# quant_method -> bytes per parameter when every weight is stored that way
UNIFORM_QUANT_BYTES = {"fp8": 1}
EXPERT_COUNT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")
EXPERTS_PER_TOKEN_KEYS = ("num_experts_per_tok", "experts_per_token", "moe_topk")
WINDOWED_LAYER_TYPES = ("sliding_attention", "chunked_attention")


@dataclass
class _Config:
    """The parsed file, the part that describes the language model, and how to cite it."""

    top: dict
    text: dict            # text_config for multimodal checkpoints, else the top level
    file: str
    cite: str

    def error(self, message: str) -> CapplanError:
        return CapplanError(f"{self.file}: {message}")

    def need(self, key: str, kind=int):
        value = self.text.get(key)
        if value is None or isinstance(value, bool) or not isinstance(value, kind):
            what = "a whole number" if kind is int else "a list"
            got = "it is missing" if value is None else f"got {value!r}"
            raise self.error(f"cannot read the architecture: '{key}' must be {what} ({got})")
        return value

    def first(self, keys, default=None):
        for key in keys:
            if isinstance(self.text.get(key), int) and not isinstance(self.text.get(key), bool):
                return key, self.text[key]
        return None, default


def load(plan_dir: Path, name) -> Entry:
    """The entry for ``model: {config: name}``, ``name`` relative to the plan's folder."""
    if not isinstance(name, str) or any(c in name for c in locate.WILDCARDS):
        raise CapplanError(f"expected the path of one config.json (no wildcards), got {name!r}")
    root = locate.Root(plan_dir)
    try:
        (relative,) = locate.expand(root, [name])
    except locate.PatternError as err:
        raise CapplanError(err.message) from None
    path = root.plan_dir / relative
    raw = path.read_bytes()
    digest = hashlib.sha256(raw).hexdigest()
    try:
        top = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CapplanError(f"{relative}: not a JSON file ({err})") from None
    if not isinstance(top, dict):
        raise CapplanError(f"{relative}: a config.json is a JSON object")
    text = top.get("text_config") if isinstance(top.get("text_config"), dict) else top
    return dataclasses.replace(_interpret(_Config(top, text, relative, f"{relative} (SHA-256 {digest})")),
                               sha256=digest)


def _interpret(cfg: _Config) -> Entry:
    values: dict[str, dict] = {}

    def put(quantity, value, key, note=None):
        values[quantity] = {"value": value, "source": f"{cfg.cite}: {key}", **({"note": note} if note else {})}

    layers = cfg.need("num_hidden_layers")
    heads = cfg.need("num_attention_heads")
    hidden = cfg.need("hidden_size")
    put("layers", layers, "num_hidden_layers")
    put("hidden_size", hidden, "hidden_size")
    put("vocab_size", cfg.need("vocab_size"), "vocab_size")
    if cfg.text.get("kv_lora_rank"):
        attention = "mla"
        put("kv_lora_rank", cfg.need("kv_lora_rank"), "kv_lora_rank")
        put("qk_rope_head_dim", cfg.need("qk_rope_head_dim"), "qk_rope_head_dim")
    else:
        kv_key, kv_heads = cfg.first(["num_key_value_heads"], heads)
        attention = "mha" if kv_heads == heads else "gqa"
        put("kv_heads", kv_heads, kv_key or "num_attention_heads (no num_key_value_heads: one KV head per head)")
        if isinstance(cfg.text.get("head_dim"), int):
            put("head_dim", cfg.text["head_dim"], "head_dim")
        else:
            put("head_dim", hidden // heads, "hidden_size / num_attention_heads (no head_dim)")
    _experts(cfg, put)
    _windows(cfg, put, layers)
    required = _weights(cfg, put)
    name = cfg.top.get("_name_or_path") or (cfg.top.get("architectures") or ["model"])[0]
    return Entry(kind="model", id=cfg.file, name=f"{name} ({cfg.file})", status="config", attention=attention,
                 values=values, file=cfg.file, required=("parameter_count",) + required)


def _experts(cfg: _Config, put) -> None:
    """The feed-forward width one token runs: dense, or its routed experts plus shared ones."""
    count_key, experts = cfg.first(EXPERT_COUNT_KEYS)
    if not experts:
        put("active_intermediate_size", cfg.need("intermediate_size"), "intermediate_size")
        return
    per_token_key, per_token = cfg.first(EXPERTS_PER_TOKEN_KEYS)
    if per_token is None:
        raise cfg.error(f"cannot read the architecture: {count_key} {experts} experts, but no "
                        f"{' or '.join(EXPERTS_PER_TOKEN_KEYS)}")
    width_key, width = cfg.first(["moe_intermediate_size", "intermediate_size"])
    if width is None:
        raise cfg.error("cannot read the architecture: 'moe_intermediate_size' or 'intermediate_size' "
                        "must be a whole number (it is missing)")
    shared, shared_text = 0, ""
    if isinstance(cfg.text.get("n_shared_experts"), int) and cfg.text["n_shared_experts"]:
        shared, shared_text = cfg.text["n_shared_experts"] * width, f" + n_shared_experts x {width_key}"
    elif isinstance(cfg.text.get("shared_expert_intermediate_size"), int):
        shared, shared_text = cfg.text["shared_expert_intermediate_size"], " + shared_expert_intermediate_size"
    elif str(cfg.text.get("model_type", "")).startswith("llama4"):
        shared, shared_text = width, f" + {width_key} (Llama 4's shared expert)"
    put("active_intermediate_size", per_token * width + shared, f"{per_token_key} x {width_key}{shared_text}",
        note=f"mixture of experts: {experts} experts ({count_key}), {per_token} per token")


def _windows(cfg: _Config, put, layers: int) -> None:
    """Which layers keep only a window of tokens, and how wide it is."""
    text = cfg.text
    chunk = text.get("attention_chunk_size")
    if isinstance(chunk, int) and chunk > 0:            # Llama 4: chunked attention, NoPE layers global
        nope = text.get("no_rope_layers")
        if isinstance(nope, list) and nope:
            windowed, how = sum(1 for v in nope if v), "no_rope_layers (1 = chunked RoPE layer)"
        else:
            interval = text.get("no_rope_layer_interval", 4)
            windowed, how = layers - layers // interval, f"every {interval}th layer global (no_rope_layer_interval)"
        put("windowed_layers", windowed, how)
        put("attention_window", chunk, "attention_chunk_size")
        return
    window = text.get("sliding_window")
    if not isinstance(window, int) or window <= 0:
        return
    types = text.get("layer_types")
    if isinstance(types, list) and types:
        windowed = sum(1 for t in types if t in WINDOWED_LAYER_TYPES)
        how = "layer_types (sliding_attention layers)"
    elif text.get("use_sliding_window") is False:
        return
    elif str(text.get("model_type")) == "gemma2":
        windowed, how = (layers + 1) // 2, "gemma2: every other layer, from the first, slides"
    elif isinstance(text.get("sliding_window_pattern"), int):
        pattern = text["sliding_window_pattern"]
        windowed, how = layers - layers // pattern, f"sliding_window_pattern {pattern}: every {pattern}th layer global"
    elif text.get("use_sliding_window") is True and isinstance(text.get("max_window_layers"), int):
        windowed, how = max(layers - text["max_window_layers"], 0), "layers from max_window_layers on slide"
    else:
        windowed, how = layers, "sliding_window on every layer"
    if windowed:
        put("windowed_layers", windowed, how)
        put("attention_window", window, "sliding_window")


def _weights(cfg: _Config, put) -> tuple[str, ...]:
    """Bytes per parameter when the file says it; otherwise the plan must give them."""
    quant = cfg.top.get("quantization_config") or cfg.text.get("quantization_config")
    if isinstance(quant, dict):
        method = str(quant.get("quant_method", "")).lower()
        if method in UNIFORM_QUANT_BYTES:
            put("weight_bytes_per_param", UNIFORM_QUANT_BYTES[method], f"quantization_config.quant_method {method}")
            return ()
        return ("weight_bytes_per_param",)
    dtype = cfg.top.get("torch_dtype") or cfg.top.get("dtype") or cfg.text.get("torch_dtype")
    if str(dtype) in DTYPE_BYTES:
        put("weight_bytes_per_param", DTYPE_BYTES[str(dtype)], "torch_dtype" if cfg.top.get("torch_dtype") else "dtype")
        return ()
    return ("weight_bytes_per_param",)
