"""Parameter counts from a ModelShape: totals, per module, and the linear layers a LoRA target list matches.

A shape read from config.json or a checkpoint lists one decoder layer's linear modules under their real
names (`dense_linears`, `moe_linears`); a shape built from bare numbers gets the Llama layout: q/k/v/o
projections (GQA: k and v have num_kv_heads heads), a gated (gate, up, down) or plain (up, down) MLP, two
norms. MoE layers hold every routed expert (all resident on the GPU), a router and any shared experts.

LoRA targets match the way PEFT matches them (peft/tuners/tuners_utils.py `check_target_module_exists`):
a module matches a name when its full path equals it or ends with "." + name; "all" (LLaMA-Factory) and
"all-linear" (PEFT) take every linear module PEFT can wrap, the output layer excepted.
"""
from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import lru_cache

from oomdoctor.facts import Linear, ModelShape, TrainingSetup

_ALL = ("all", "all-linear", "all_linear")
# role -> the Llama name the memory model uses for activations (what a fused module stands for)
_CANONICAL = {"q": "q_proj", "k": "k_proj", "v": "v_proj", "o": "o_proj", "gate": "gate_proj", "up": "up_proj",
              "down": "down_proj", "qkv": "qkv_fused", "gate_up": "gate_up_fused", "kv": "kv_fused"}


@dataclass(frozen=True)
class ParamCounts:
    """Parameter counts of one model (whole model, not per GPU)."""

    total: int
    embeddings: int
    lm_head: int                                 # 0 when tied to the embeddings
    per_layer: int                               # one decoder layer (dense layers; MoE layers in moe_layer)
    layers: int
    norms: int                                   # norm weights/biases and other non-linear layer parameters, all layers + final norm
    linear_shapes: Mapping[str, tuple[int, int]]  # module name -> (in_features, out_features) of one dense layer
    router: int = 0                              # all layers together
    experts: int = 0                             # all routed + shared expert weights, all layers together
    moe_layer: int = 0                           # one MoE decoder layer
    trainable: int = 0                           # for the setup given to count_params, else total
    linear_total: int = 0                        # parameters in matmul weights (what autocast casts), incl. lm_head
    largest_layer: int = 0                       # largest decoder layer (ZeRO-3 gathers one at a time)
    extra: Mapping[str, int] = field(default_factory=dict)
    modules: Mapping[str, int] = field(default_factory=dict)   # module path inside a layer -> params, all layers


def _llama_linears(shape: ModelShape) -> tuple[tuple[Linear, ...], tuple[Linear, ...]]:
    """The Llama layout from the shape's numbers: (dense layer, MoE layer) linear modules."""
    h = shape.hidden_size
    d = shape.head_dim_
    q_dim, kv_dim, inter = shape.num_heads * d, shape.num_kv_heads * d, shape.intermediate_size
    ab, mb = shape.attention_bias, shape.mlp_bias
    attn = (Linear("self_attn.q_proj", h, q_dim, ab, role="q"), Linear("self_attn.k_proj", h, kv_dim, ab, role="k"),
            Linear("self_attn.v_proj", h, kv_dim, ab, role="v"), Linear("self_attn.o_proj", q_dim, h, mb, role="o"))

    def mlp(prefix: str, width: int, copies: int = 1) -> tuple[Linear, ...]:
        if shape.gated_mlp:
            return (Linear(f"{prefix}.gate_proj", h, width, mb, copies, "gate"),
                    Linear(f"{prefix}.up_proj", h, width, mb, copies, "up"),
                    Linear(f"{prefix}.down_proj", width, h, mb, copies, "down"))
        return (Linear(f"{prefix}.up_proj", h, width, mb, copies, "up"),
                Linear(f"{prefix}.down_proj", width, h, mb, copies, "down"))

    dense = attn + mlp("mlp", inter)
    if not shape.num_experts:
        return dense, ()
    e_inter = shape.moe_intermediate_size or inter
    moe = attn + (Linear("mlp.gate", h, shape.num_experts, role="router"),) + mlp("mlp.experts.*", e_inter, shape.num_experts)
    if shape.shared_experts:
        moe += mlp("mlp.shared_expert", (shape.shared_expert_intermediate_size or e_inter) * shape.shared_experts)
        if shape.shared_expert_intermediate_size:
            moe += (Linear("mlp.shared_expert_gate", h, 1, role="router"),)   # Qwen-MoE's sigmoid gate
    return dense, moe


# The planner re-estimates one shape thousands of times: hashing a ModelShape (and its module lists) for
# an lru_cache lookup costs more than the lookup saves, so the last shape is recognised by identity first.
_last_linears: list = [None, None]
_last_count: list = [None, None]


def layer_linears(shape: ModelShape) -> tuple[tuple[Linear, ...], tuple[Linear, ...]]:
    """(one dense layer's, one MoE layer's) linear modules: the shape's own list, else the Llama layout."""
    if _last_linears[0] is shape:
        return _last_linears[1]
    found = (shape.dense_linears, shape.moe_linears) if (shape.dense_linears or shape.moe_linears) \
        else _llama_linears(shape)
    _last_linears[0], _last_linears[1] = shape, found
    return found


_ATTN_ROLES = ("q", "k", "v", "o", "qkv", "kv")


def hybrid_linears(shape: ModelShape, linears: tuple[Linear, ...]) -> tuple[Linear, ...]:
    """A layer list with its attention modules replaced by the linear-attention mixer (hybrid models)."""
    return tuple(shape.linear_attn_linears) + tuple(m for m in linears if m.role not in _ATTN_ROLES)


def _linear_attn_layers(shape: ModelShape) -> int:
    return min(shape.linear_attn_layers, shape.num_layers) if shape.linear_attn_linears else 0


def _moe_layers(shape: ModelShape) -> int:
    if not shape.num_experts:
        return 0
    if shape.moe_layer_count is not None:
        return min(shape.moe_layer_count, shape.num_layers)
    return max(0, shape.num_layers - shape.first_dense_layers)


def _count(shape: ModelShape) -> ParamCounts:
    if _last_count[0] is shape:
        return _last_count[1]
    counts = _count_cached(shape)
    _last_count[0], _last_count[1] = shape, counts
    return counts


@lru_cache(maxsize=512)
def _count_cached(shape: ModelShape) -> ParamCounts:
    h, vocab = shape.hidden_size, shape.vocab_size
    dense, moe = layer_linears(shape)
    other = shape.layer_other_params
    if other is None:
        other = h * (4 if shape.mlp_bias else 2)    # two norms; models with linear biases use LayerNorm (weight + bias)
    final_norm = shape.final_norm_params if shape.final_norm_params is not None else h * (2 if shape.mlp_bias else 1)

    n_moe = _moe_layers(shape)
    n_dense = shape.num_layers - n_moe
    dense_layer = sum(m.params for m in dense) + other
    moe_layer = (sum(m.params for m in moe) + other) if n_moe else 0
    router = sum(m.params for m in moe if m.role == "router") * n_moe
    experts = sum(m.params for m in moe if m.copies > 1 or ".shared" in m.name) * n_moe
    embeddings = vocab * h
    lm_head = 0 if shape.tie_word_embeddings else vocab * h
    norms = shape.num_layers * other + final_norm
    computed = embeddings + lm_head + n_dense * dense_layer + n_moe * moe_layer + final_norm + shape.extra_params
    linear = n_dense * sum(m.params for m in dense) + n_moe * sum(m.params for m in moe) + vocab * h
    modules: dict[str, int] = {}
    for count, mods in ((n_dense, dense), (n_moe, moe)):
        for m in mods:
            if count:
                modules[m.name] = modules.get(m.name, 0) + count * m.params
    largest = max(dense_layer if n_dense else 0, moe_layer)
    n_lin = _linear_attn_layers(shape)
    if n_lin:
        # hybrid: in n_lin layers the linear-attention mixer (and its own norms) stands for the attention modules
        attn = [m for m in (dense or moe) if m.role in _ATTN_ROLES]
        lin_other = other if shape.linear_attn_other is None else shape.linear_attn_other
        delta = sum(m.params for m in shape.linear_attn_linears) - sum(m.params for m in attn)
        computed += n_lin * (delta + lin_other - other)
        linear += n_lin * delta
        norms += n_lin * (lin_other - other)
        for m in attn:
            modules[m.name] -= n_lin * m.params
        for m in shape.linear_attn_linears:
            modules[m.name] = modules.get(m.name, 0) + n_lin * m.params
        largest = max(largest, largest + delta + lin_other - other)
    total = computed
    if shape.params_total and abs(shape.params_total - computed) > 0.002 * computed:
        # An authoritative count (checkpoint/vendor/log) wins; the difference is parameters this layout does
        # not know (a vision tower, ...), kept as "other" so sums stay honest.
        total = shape.params_total
    elif shape.params_total:
        total = shape.params_total
    shapes = {m.name: (m.in_features, m.out_features) for m in (dense or moe) if m.copies == 1}
    return ParamCounts(
        total=total, embeddings=embeddings, lm_head=lm_head, per_layer=dense_layer if n_dense else moe_layer,
        layers=shape.num_layers, norms=norms, linear_shapes=shapes, router=router, experts=experts,
        moe_layer=moe_layer, trainable=total, linear_total=linear, largest_layer=largest,
        extra={"other": total - computed, "moe_layers": n_moe, "computed": computed}, modules=modules,
    )


@lru_cache(maxsize=256)
def _target_names(targets: tuple[str, ...]) -> tuple[str, ...]:
    names = []
    for raw in targets:
        for part in str(raw).split(","):
            part = part.strip()
            if part:
                names.append(part)
    return tuple(names)


def _matches(module: str, target: str) -> bool:
    """PEFT's rule: the module's full path is the target or ends with "." + target (the layer prefix
    "model.layers.N." stands before `module`; an expert index stands for the "*")."""
    path = "model.layers.0." + module.replace("*", "0")
    return path == target or path.endswith("." + target)


# Names from frameworks with their own model code (litgpt's query/value, torchtune's output_proj and w1/w2/w3,
# Meta's wq/wk/wv/wo) -> the roles they stand for. Used only for a name that matches no module by PEFT's
# rule, so the estimate still counts the adapters that framework would build.
_ROLE_ALIASES = {
    "q_proj": ("q",), "query": ("q",), "q": ("q",), "wq": ("q",), "k_proj": ("k",), "key": ("k",), "k": ("k",),
    "wk": ("k",), "v_proj": ("v",), "value": ("v",), "v": ("v",), "wv": ("v",), "o_proj": ("o",),
    "output_proj": ("o",), "out_proj": ("o",), "wo": ("o",), "dense": ("o",), "proj": ("o",), "projection": ("o",),
    "gate_proj": ("gate",), "w1": ("gate",), "up_proj": ("up",), "w3": ("up",), "fc1": ("up",), "c_fc": ("up",),
    "fc_in": ("up",), "down_proj": ("down",), "w2": ("down",), "fc2": ("down",), "fc_out": ("down",),
    "qkv_proj": ("q", "k", "v"), "c_attn": ("q", "k", "v"), "query_key_value": ("q", "k", "v"),
    "w_pack": ("q", "k", "v"), "wqkv": ("q", "k", "v"), "gate_up_proj": ("gate", "up"),
    "mlp": ("gate", "up", "down"), "attn": ("q", "k", "v", "o"), "attention": ("q", "k", "v", "o"),
    "self_attn": ("q", "k", "v", "o"),
}
_FUSED_ROLE = {"q": "qkv", "k": "qkv", "v": "qkv", "gate": "gate_up", "up": "gate_up"}


def _by_role(target: str, linears: tuple[Linear, ...]) -> list[Linear]:
    roles = _ROLE_ALIASES.get(target.rsplit(".", 1)[-1].lower(), ())
    found: list[Linear] = []
    for role in roles:
        hits = [m for m in linears if m.peft and m.role == role]
        if not hits and role in _FUSED_ROLE:
            hits = [m for m in linears if m.peft and m.role == _FUSED_ROLE[role]]
        if not hits and role == "up":            # a plain MLP has no gate: its first linear is the up role
            hits = [m for m in linears if m.peft and m.role == "gate_up"]
        found += [m for m in hits if m not in found]
    return found


def matched_linears(targets: tuple[str, ...], linears: tuple[Linear, ...],
                    model: tuple[Linear, ...] | None = None) -> list[Linear]:
    """The linear modules of one layer a LoRA target list wraps: by PEFT's rule, and for a name that
    matches nothing in the model (`model`: every layer kind's modules; default this layer's) — another
    framework's module names — by the role it names."""
    names = _target_names(tuple(targets))
    if not names or any(n.lower() in _ALL for n in names):
        return [m for m in linears if m.peft]
    chosen: list[Linear] = []
    for t in names:
        hits = [m for m in linears if m.peft and _matches(m.name, t)]
        if not hits and not any(m.peft and _matches(m.name, t) for m in (model or ())):
            hits = _by_role(t, linears)
        chosen += [m for m in hits if m not in chosen]
    return chosen


_PEFT_FRAMEWORKS = ("llamafactory", "hf", "trl", "axolotl", "ms-swift", "openrlhf")


def unmatched_targets(setup: TrainingSetup, shape: ModelShape) -> tuple[str, ...]:
    """Target names that match no linear module of the model by PEFT's rule (PEFT would refuse them), for
    frameworks that hand the names to PEFT over a transformers model."""
    if setup.framework not in _PEFT_FRAMEWORKS:
        return ()
    names = _target_names(tuple(setup.lora_targets))
    if not names or any(n.lower() in _ALL for n in names):
        return ()
    dense, moe = layer_linears(shape)
    everything = tuple(dense) + tuple(moe) + tuple(shape.linear_attn_linears)
    return tuple(t for t in names if not any(m.peft and _matches(m.name, t) for m in everything)
                 and t not in _OUTSIDE_LAYERS)


# modules outside the decoder layers that LoRA / modules_to_save may name (counted elsewhere, not missing)
_OUTSIDE_LAYERS = ("lm_head", "embed_tokens", "wte", "word_embeddings", "tok_embeddings", "output", "embed_out",
                   "output_layer")


def _canonical_targets(targets: tuple[str, ...], shape: ModelShape) -> dict[str, tuple[int, int]]:
    """LoRA target names -> {Llama role name: (in, out)} of the targeted linears of one layer (what the
    memory model needs to know which layer inputs the adapters keep)."""
    dense, moe = layer_linears(shape)
    layer = dense or moe
    chosen: dict[str, tuple[int, int]] = {}
    for m in matched_linears(targets, tuple(layer)):
        name = _CANONICAL.get(m.role)
        if name and name not in chosen:
            chosen[name] = (m.in_features, m.out_features)
    return chosen


# transformers 5 keeps a MoE layer's routed experts as 3-D stacks (gate_up_proj [E, 2i, h], down_proj [E, h, i]), not
# nn.Linear; PEFT (>= 0.18, utils/transformers_weight_conversion.py `_convert_peft_config_moe`) turns the v4 names
# these model types' LoRA targets meant (gate/up/down, w1/w3/w2, the router `gate`, and all of them for
# "all-linear") into `target_parameters`: gate_up_proj at rank r x 2 (`rank_pattern`), down_proj and gate.weight at r.
# The model types: its `_MODEL_TO_CONVERSION_PATTERN` entries mapped to the "mixtral" and "qwen2_moe" patterns.
PEFT_EXPERT_PARAM_TYPES = frozenset((
    "mixtral", "minimax", "minimax_m2", "afmoe", "deepseek_v2", "deepseek_v3", "deepseek_v32", "dots1",
    "ernie4_5_moe", "glm4_moe", "glm4_moe_lite", "glm_moe_dsa", "glm4v_moe", "longcat_flash", "solar_open", "mellum",
    "qwen3_moe", "beam", "qwen3_omni_moe", "qwen3_next", "hunyuan_v1_moe", "flex_olmo", "olmoe", "sarvam_mla",
    "exaone_moe", "cohere2_moe"))


@dataclass(frozen=True)
class ExpertStack:
    """One 3-D expert parameter LoRA wraps as a parameter (peft/tuners/lora/layer.py ParamWrapper): lora_A is
    (rank * experts) x in, lora_B out x (rank * experts)."""
    in_features: int
    out_features: int
    experts: int
    rank: int

    @property
    def elements(self) -> int:
        return self.experts * self.in_features * self.out_features

    @property
    def lora(self) -> int:
        return self.rank * self.experts * (self.in_features + self.out_features)


def peft_expert_stacks(setup: TrainingSetup, shape: ModelShape) -> tuple[ExpertStack, ...]:
    """The expert stacks of one MoE layer that PEFT's LoRA targets as parameters, in forward order (gate_up, down);
    empty where the experts are nn.Linear (transformers < 5) or PEFT does not convert the model type's targets."""
    from oomdoctor.memory.regime import _transformers_version

    if setup.method != "lora" or setup.quant_bits or setup.use_dora or not shape.num_experts:
        return ()
    if setup.framework not in _PEFT_FRAMEWORKS or (shape.model_type or "").lower() not in PEFT_EXPERT_PARAM_TYPES:
        return ()
    ver = _transformers_version(setup)
    if ver and ver < (5,):
        return ()
    _, moe = layer_linears(shape)
    routed = [m for m in matched_linears(tuple(setup.lora_targets), tuple(moe)) if m.copies > 1]
    r = max(1, int(setup.lora_rank))
    fused = [m for m in routed if m.role in ("gate", "up", "gate_up")]
    down = [m for m in routed if m.role == "down"]
    stacks = []
    if fused:
        # gate and up fuse into one stack: in h, out the sum, rank r per v4 projection
        stacks.append(ExpertStack(fused[0].in_features, sum(m.out_features for m in fused), fused[0].copies,
                                  r * len(fused)))
    if down:
        stacks.append(ExpertStack(down[0].in_features, down[0].out_features, down[0].copies, r))
    return tuple(stacks)


def lora_params(setup: TrainingSetup, shape: ModelShape) -> int:
    """LoRA (and DoRA) adapter parameters: r*(in+out) per wrapped linear (each expert's its own), DoRA adds
    one magnitude per output feature (peft/tuners/lora/layer.py: lora_A r x in, lora_B out x r,
    lora_magnitude_vector out)."""
    r = max(1, int(setup.lora_rank))
    dense, moe = layer_linears(shape)
    n_moe = _moe_layers(shape)
    n_dense = shape.num_layers - n_moe
    n_lin = _linear_attn_layers(shape)
    model = tuple(dense) + tuple(moe) + tuple(shape.linear_attn_linears) if n_lin else None
    targets = tuple(setup.lora_targets)

    def per_layer(mods: tuple[Linear, ...]) -> int:
        return sum(m.copies * (r * (m.in_features + m.out_features) + (m.out_features if setup.use_dora else 0))
                   for m in matched_linears(targets, mods, model))

    total = 0
    for count, mods in ((n_dense, dense), (n_moe, moe)):
        if count:
            total += count * per_layer(tuple(mods))
    stacks = peft_expert_stacks(setup, shape) if n_moe else ()
    if stacks:
        # the routed experts as PEFT wraps them on transformers 5: one adapter per stack, not per expert module; the
        # router's weight is a target parameter too where it is no nn.Linear
        routed = [m for m in matched_linears(targets, tuple(moe), model) if m.copies > 1]
        routers = [m for m in moe if m.role == "router" and not m.peft and not m.name.endswith("_gate")]
        total += n_moe * (sum(st.lora for st in stacks) - per_layer(tuple(routed))
                          + sum(r * (m.in_features + m.out_features) for m in routers[:1]))
    if n_lin:
        # a hybrid's linear-attention layers: their mixer's matches in place of the attention modules'
        layer = tuple(dense or moe)
        total += n_lin * (per_layer(hybrid_linears(shape, layer)) - per_layer(layer))
    return total


def _freeze_trainable(setup: TrainingSetup, shape: ModelShape) -> int:
    counts = _count(shape)
    n = setup.freeze_trainable_layers
    layers = min(abs(n), shape.num_layers) if n else 0
    per = counts.total - counts.embeddings - counts.lm_head - counts.norms
    per_layer = per / max(1, shape.num_layers)
    return int(layers * per_layer + layers * (counts.norms / max(1, 2 * shape.num_layers + 1)) * 2)


def modules_to_save_params(setup: TrainingSetup, shape: ModelShape) -> int:
    """PEFT modules_to_save / LLaMA-Factory additional_target: full trainable copies of whole modules."""
    counts = _count(shape)
    total = 0
    for name in setup.mechanisms.modules_to_save:
        low = name.lower()
        if low in ("embed_tokens", "wte", "word_embeddings", "tok_embeddings", "embed_in"):
            total += counts.embeddings
        elif low in ("lm_head", "output", "embed_out", "output_layer"):
            total += counts.lm_head or counts.embeddings
    return total


# PEFT's prompt-learning types: nothing inside the decoder layers changes, what trains sits in front of them
PROMPT_LEARNING = ("PROMPT_TUNING", "P_TUNING", "PREFIX_TUNING")


def ia3_feedforward(setup: TrainingSetup) -> frozenset:
    """IA3's feedforward modules (scaled at their input): the config's feedforward_modules, else PEFT's default
    for Llama-style models, down_proj (peft/utils/constants.py TRANSFORMERS_MODELS_TO_IA3_FEEDFORWARD_MODULES_MAPPING)."""
    return frozenset(setup.mechanisms.ia3_feedforward or ("down_proj",))


def adapter_params(setup: TrainingSetup, shape: ModelShape) -> int:
    """Parameters of the PEFT adapter the setup names; LoRA's count for LoRA and the types estimated as LoRA."""
    kind = setup.mechanisms.peft_type
    h, tokens = shape.hidden_size, setup.mechanisms.virtual_tokens
    if kind == "PROMPT_TUNING":
        return tokens * h                       # prompt_tuning/model.py: Embedding(num_virtual_tokens, token_dim)
    if kind == "PREFIX_TUNING":
        # prefix_tuning/model.py (no projection): Embedding(num_virtual_tokens, num_layers * 2 * token_dim), token_dim
        # the keys' width
        return tokens * shape.num_layers * 2 * shape.num_kv_heads * shape.head_dim_
    if kind == "P_TUNING":
        # p_tuning/model.py: Embedding(num_virtual_tokens, token_dim) and the MLP encoder's three linears
        return tokens * h + 3 * h * h + 3 * h
    if kind not in ("IA3", "VERA"):
        return lora_params(setup, shape)
    dense, moe = layer_linears(shape)
    ff = ia3_feedforward(setup)
    total = 0
    for count, mods in ((shape.num_layers - _moe_layers(shape), dense), (_moe_layers(shape), moe)):
        for m in matched_linears(tuple(setup.lora_targets), tuple(mods), None) if count else ():
            if kind == "IA3":
                # ia3/layer.py update_layer: (1, in_features) when feedforward, else (out_features, 1)
                total += count * m.copies * (m.in_features if _canonical_name(m) in ff else m.out_features)
            else:
                # vera/layer.py update_layer: vera_lambda_b (out_features), vera_lambda_d (r); A and B are shared
                # frozen buffers
                total += count * m.copies * (m.out_features + max(1, int(setup.lora_rank)))
    return total


def _canonical_name(m: Linear) -> str:
    return m.name.rsplit(".", 1)[-1]


def trainable_params(setup: TrainingSetup, shape: ModelShape) -> int:
    """Parameters the optimizer updates for this setup's method."""
    counts = _count(shape)
    if setup.method in ("lora", "qlora"):
        return adapter_params(setup, shape) + modules_to_save_params(setup, shape)
    if setup.method == "freeze":
        return _freeze_trainable(setup, shape)
    return counts.total


def count_params(shape: ModelShape, setup: TrainingSetup | None = None) -> ParamCounts:
    """Counts for the shape; `trainable` follows `setup` when one is given (else every parameter)."""
    counts = _count(shape)
    if setup is None:
        return counts
    return replace(counts, trainable=trainable_params(setup, shape))
