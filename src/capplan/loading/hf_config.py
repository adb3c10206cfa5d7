"""A model's architecture from its own Hugging Face ``config.json``.

A plan may name the model by the configuration file kept next to it instead
of a catalog id, with the model's Hugging Face id beside it (a Hugging Face
config.json does not hold it, and a benchmark of the model records it)::

    model: {config: models/qwen3-32b/config.json, name: Qwen/Qwen3-32B}

The file is found the way sweep imports are (inside the plan's repository,
no absolute path, no ``..`` above it, no symlink out of it), read as JSON
(nothing in it is run), and turned into the same kind of entry the catalog
gives: the layers, heads, widths, vocabulary, window layout and experts, each
value sourced to the file and its SHA-256. A file it cannot interpret is
refused with the key it lacks or holds wrong: every count is checked where it
is read (a whole number, positive where zero makes no model, at most
:data:`MAX_COUNT`), so no mistake surfaces later through a derived quantity.
The file is read as benchmark files are (:mod:`~capplan.loading.sweeps.reading`):
a regular file of at most :data:`MAX_BYTES`, measured before it is read, JSON
nested at most 64 deep, integers of at most 100 digits.

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
from capplan.loading.sweeps import locate, reading

DTYPE_BYTES = {"bfloat16": 2, "float16": 2, "half": 2, "float32": 4, "float": 4}
# quant_method -> bytes per parameter when every weight is stored that way
UNIFORM_QUANT_BYTES = {"fp8": 1}
EXPERT_COUNT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts")
EXPERTS_PER_TOKEN_KEYS = ("num_experts_per_tok", "experts_per_token", "moe_topk")
WINDOWED_LAYER_TYPES = ("sliding_attention", "chunked_attention")
LINEAR_LAYER_TYPE = "linear_attention"


MAX_BYTES = 4 * 2 ** 20           # a config.json is a few KB; the largest, with quantization lists, ~100 KB
MAX_COUNT = 10 ** 9               # layers, heads, widths, vocabulary, experts: far below in every model


@dataclass
class _Config:
    """The parsed file, the part that describes the language model, and how to cite it.

    Every value is checked at the key it comes from (a whole number, positive where
    zero would make no model, at most :data:`MAX_COUNT`), so that a wrong file is
    named at its key, never through a quantity derived from it."""

    top: dict
    text: dict            # text_config for multimodal checkpoints, else the top level
    file: str
    cite: str
    prefix: str = ""      # 'text_config.' when the language model's keys are there

    def error(self, message: str) -> CapplanError:
        return CapplanError(f"{self.file}: {message}")

    def bad(self, key: str, message: str) -> CapplanError:
        return self.error(f"cannot read the architecture: '{self.prefix}{key}' {message}")

    def need(self, key: str, *, least: int = 1) -> int:
        """A whole number the architecture cannot do without."""
        if self.text.get(key) is None:
            raise self.bad(key, "must be a whole number (it is missing)")
        return self.count(key, least=least)

    def count(self, key: str, *, least: int = 0) -> int | None:
        """An optional whole number (``None`` when absent or null), at least ``least``."""
        value = self.text.get(key)
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.bad(key, f"must be a whole number, got {_show(value)}")
        if not least <= value <= MAX_COUNT:
            low = "positive" if least == 1 else "non-negative" if least == 0 else f"at least {least}"
            raise self.bad(key, f"must be a {low} whole number of at most {MAX_COUNT:,}, got {_show(value)}")
        return value

    def first(self, keys, *, least: int = 0):
        """The first of ``keys`` the file gives (checked), or ``(None, None)``."""
        for key in keys:
            value = self.count(key, least=least)
            if value is not None:
                return key, value
        return None, None


def _show(value) -> str:
    text = json.dumps(value) if isinstance(value, (int, float, str, bool)) or value is None else type(value).__name__
    return text if len(text) <= 40 else text[:37] + "..."


def load(plan_dir: Path, file, name: str | None = None) -> Entry:
    """The entry for ``model: {config: file, name: name}``, ``file`` relative to the plan's folder;
    ``name`` (the model's Hugging Face id) is its name and ``hf_id``, which benchmark files match."""
    if not isinstance(file, str) or any(c in file for c in locate.WILDCARDS):
        raise CapplanError(f"expected the path of one config.json (no wildcards), got {file!r}")
    root = locate.Root(plan_dir)
    try:
        (relative,) = locate.expand(root, [file])
    except locate.PatternError as err:
        raise CapplanError(err.message) from None
    try:
        raw = reading.read_limited(root.plan_dir / relative, MAX_BYTES, "a config.json")
        top = reading.load_json(raw.decode("utf-8"), raw)
    except CapplanError as err:
        raise CapplanError(f"{relative}: {err.message}") from None
    except (UnicodeDecodeError, json.JSONDecodeError) as err:
        raise CapplanError(f"{relative}: not a JSON file ({err})") from None
    if not isinstance(top, dict):
        raise CapplanError(f"{relative}: a config.json is a JSON object")
    digest = hashlib.sha256(raw).hexdigest()
    cite = f"{relative} (SHA-256 {digest})"
    inner = top.get("text_config")
    if inner is not None and not isinstance(inner, dict):
        raise CapplanError(f"{relative}: cannot read the architecture: 'text_config' must be an object, "
                           f"got {_show(inner)}")
    config = _Config(top, inner, relative, cite, "text_config.") if inner is not None else \
        _Config(top, top, relative, cite)
    named = {"name": name, "hf_id": name} if name else {}
    return dataclasses.replace(_interpret(config), sha256=digest, **named)


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
    if cfg.count("kv_lora_rank"):
        attention = "mla"
        put("kv_lora_rank", cfg.need("kv_lora_rank"), "kv_lora_rank")
        put("qk_rope_head_dim", cfg.need("qk_rope_head_dim"), "qk_rope_head_dim")
    else:
        kv_key, kv_heads = cfg.first(["num_key_value_heads"], least=1)
        kv_heads = heads if kv_heads is None else kv_heads
        attention = "mha" if kv_heads == heads else "gqa"
        put("kv_heads", kv_heads, kv_key or "num_attention_heads (no num_key_value_heads: one KV head per head)")
        head_dim = cfg.count("head_dim", least=1)
        if head_dim is not None:
            put("head_dim", head_dim, "head_dim")
        elif hidden < heads:
            raise cfg.bad("head_dim", f"is missing, and hidden_size / num_attention_heads ({hidden} / {heads}) "
                          "is less than one: give head_dim")
        else:
            put("head_dim", hidden // heads, "hidden_size / num_attention_heads (no head_dim)")
    _experts(cfg, put)
    _windows(cfg, put, layers)
    _linear(cfg, put, layers)
    required = _weights(cfg, put)
    return Entry(kind="model", id=cfg.file, name=f"{_name(cfg)} ({cfg.file})", status="config", attention=attention,
                 values=values, file=cfg.file, required=("parameter_count",) + required, attention_heads=heads)


def _name(cfg: _Config) -> str:
    """The model's name: ``_name_or_path``, else its first architecture, else 'model'."""
    named = cfg.top.get("_name_or_path")
    if named is not None and not isinstance(named, str):
        raise cfg.error(f"'_name_or_path' must be text, got {_show(named)}")
    architectures = cfg.top.get("architectures")
    if architectures is not None and not (isinstance(architectures, list)
                                          and all(isinstance(a, str) for a in architectures)):
        raise cfg.error(f"'architectures' must be a list of class names, got {_show(architectures)}")
    return named or (architectures or ["model"])[0]


def _experts(cfg: _Config, put) -> None:
    """The feed-forward width one token runs: dense, or its routed experts plus shared ones."""
    count_key, experts = cfg.first(EXPERT_COUNT_KEYS)
    if not experts:
        put("active_intermediate_size", cfg.need("intermediate_size"), "intermediate_size")
        return
    per_token_key, per_token = cfg.first(EXPERTS_PER_TOKEN_KEYS, least=1)
    if per_token is None:
        raise cfg.error(f"cannot read the architecture: {count_key} {experts} experts, but no "
                        f"{' or '.join(EXPERTS_PER_TOKEN_KEYS)}")
    if per_token > experts:
        raise cfg.bad(per_token_key, f"is {per_token}, more than the {experts} experts ({count_key})")
    width_key, width = cfg.first(["moe_intermediate_size", "intermediate_size"], least=1)
    if width is None:
        raise cfg.error("cannot read the architecture: 'moe_intermediate_size' or 'intermediate_size' "
                        "must be a whole number (it is missing)")
    shared, shared_text = 0, ""
    if cfg.count("n_shared_experts"):
        shared, shared_text = cfg.count("n_shared_experts") * width, f" + n_shared_experts x {width_key}"
    elif cfg.count("shared_expert_intermediate_size") is not None:
        shared, shared_text = cfg.count("shared_expert_intermediate_size"), " + shared_expert_intermediate_size"
    elif str(cfg.text.get("model_type", "")).startswith("llama4"):
        shared, shared_text = width, f" + {width_key} (Llama 4's shared expert)"
    put("active_intermediate_size", per_token * width + shared, f"{per_token_key} x {width_key}{shared_text}",
        note=f"mixture of experts: {experts} experts ({count_key}), {per_token} per token")
    put("experts_per_token", per_token, per_token_key)
    put("expert_intermediate_size", width, width_key)
    put("expert_count", experts, count_key)
    if cfg.count("first_k_dense_replace"):       # DeepSeek-V3's layout: the first k layers keep a dense feed-forward
        put("moe_layers", cfg.need("num_hidden_layers") - cfg.count("first_k_dense_replace"),
            "num_hidden_layers - first_k_dense_replace")


def _windows(cfg: _Config, put, layers: int) -> None:
    """Which layers keep only a window of tokens, and how wide it is."""
    text = cfg.text
    chunk = cfg.count("attention_chunk_size")
    if chunk:                                           # Llama 4: chunked attention, NoPE layers global
        nope = text.get("no_rope_layers")
        if nope is not None and not isinstance(nope, list):
            raise cfg.bad("no_rope_layers", f"must be a list of 0/1 per layer, got {_show(nope)}")
        if nope:
            windowed, how = sum(1 for v in nope if v), "no_rope_layers (1 = chunked RoPE layer)"
            _at_most_layers(cfg, "no_rope_layers", len(nope), layers)
        else:
            interval = cfg.count("no_rope_layer_interval", least=1) or 4
            windowed, how = layers - layers // interval, f"every {interval}th layer global (no_rope_layer_interval)"
        put("windowed_layers", windowed, how)
        put("attention_window", chunk, "attention_chunk_size")
        return
    window = cfg.count("sliding_window")
    if not window:
        return
    types = text.get("layer_types")
    if types is not None and not isinstance(types, list):
        raise cfg.bad("layer_types", f"must be a list of one attention type per layer, got {_show(types)}")
    if types:
        _at_most_layers(cfg, "layer_types", len(types), layers)
        windowed = sum(1 for t in types if t in WINDOWED_LAYER_TYPES)
        how = "layer_types (sliding_attention layers)"
    elif text.get("use_sliding_window") is False:
        return
    elif str(text.get("model_type")) == "gemma2":
        windowed, how = (layers + 1) // 2, "gemma2: every other layer, from the first, slides"
    elif cfg.count("sliding_window_pattern", least=1) is not None:
        pattern = cfg.count("sliding_window_pattern", least=1)
        windowed, how = layers - layers // pattern, f"sliding_window_pattern {pattern}: every {pattern}th layer global"
    elif text.get("use_sliding_window") is True and cfg.count("max_window_layers") is not None:
        windowed, how = max(layers - cfg.count("max_window_layers"), 0), "layers from max_window_layers on slide"
    else:
        windowed, how = layers, "sliding_window on every layer"
    if windowed:
        put("windowed_layers", windowed, how)
        put("attention_window", window, "sliding_window")


def _linear(cfg: _Config, put, layers: int) -> None:
    """Which layers keep a fixed recurrent state instead of keys and values (Qwen3-Next, Qwen3.5: Gated
    DeltaNet), and how large one layer's state is per request: the causal convolution's last kernel - 1
    inputs of the query, key and value channels, and one key x value matrix per value head, 2 B each."""
    types = cfg.text.get("layer_types")
    if isinstance(types, list) and LINEAR_LAYER_TYPE in types:
        linear, how = sum(1 for t in types if t == LINEAR_LAYER_TYPE), f"layer_types ({LINEAR_LAYER_TYPE} layers)"
    elif cfg.count("full_attention_interval", least=1) and cfg.count("linear_num_value_heads"):
        interval = cfg.count("full_attention_interval", least=1)
        linear, how = layers - layers // interval, f"full_attention_interval {interval}: every {interval}th layer attends"
    else:
        return
    key_heads, value_heads = cfg.need("linear_num_key_heads"), cfg.need("linear_num_value_heads")
    key_dim, value_dim = cfg.need("linear_key_head_dim"), cfg.need("linear_value_head_dim")
    kernel = cfg.need("linear_conv_kernel_dim")
    elements = (2 * key_heads * key_dim + value_heads * value_dim) * (kernel - 1) + value_heads * key_dim * value_dim
    put("linear_attention_layers", linear, how)
    put("recurrent_state_size", elements * 2 / 1024,
        "(2 x linear_num_key_heads x linear_key_head_dim + linear_num_value_heads x linear_value_head_dim) x "
        "(linear_conv_kernel_dim - 1) + linear_num_value_heads x linear_key_head_dim x linear_value_head_dim, 2 B each",
        note=f"{elements:,} elements per layer and request")


def _at_most_layers(cfg: _Config, key: str, listed: int, layers: int) -> None:
    if listed > layers:
        raise cfg.bad(key, f"lists {listed} layers, more than num_hidden_layers ({layers})")


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
