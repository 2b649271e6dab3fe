"""What the memory-efficient optimizers keep: GaLore, APOLLO, Adam-mini, Muon, LOMO/AdaLomo (issue #25).

Each rule is read from the optimizer's own code, at the release LLaMA-Factory v0.9.4 installs
(requirements/galore.txt galore-torch, apollo.txt apollo-torch, adam-mini.txt adam-mini; Muon is vendored in
src/llamafactory/third_party/muon/muon.py), and from how LLaMA-Factory wires them
(src/llamafactory/train/trainer_utils.py @v0.9.4):

- GaLore (`_create_galore_optimizer`, :198-283) and APOLLO (`_create_apollo_optimizer`, :286-367) give the
  low-rank rule to the 2-D weights of the linear modules `galore_target` / `apollo_target` names, `all` meaning
  every linear layer but the output layer (`find_all_linear_modules`); the embeddings, the output layer, norms
  and biases keep plain AdamW states.
- GaLore's projector (jiaweizzhao/GaLore galore_torch/galore_projector.py:12-21 @2cc66f8) projects an m x n
  gradient onto its smaller side: the moments are rank x max(m, n), the projection matrix rank x min(m, n), from an
  SVD of the fp32 gradient (:69-99). A bf16/fp16 weight's projection matrix is a cast copy; an fp32 weight's is a
  slice of the SVD's factor (`B = Vh[:rank, :]`, no copy) that keeps the whole min(m, n) x min(m, n) factor alive.
- APOLLO (zhuhanqing/APOLLO apollo_torch/apollo.py:130-182, random_projector.py:138-175 @76b3472) keeps the same
  rank x max(m, n) moments and a rank x min(m, n) random projection (LLaMA-Factory's default `apollo_proj:
  random`), and scales the full gradient (`scaled_grad = p.grad * grad_scaling_factor`): one full-size temporary.
- The layer-wise variants (`galore_layerwise`, `apollo_layerwise`; transformers' `*_layerwise` optim names) build
  one optimizer per parameter and step it from a post-accumulate-grad hook that then zeroes the gradient
  (trainer_utils.py:246-270): no whole gradient set, as torchtune's optimizer_in_bwd.
- Adam-mini (zyushun/Adam-mini adam_mini/adam_mini.py:202-340 @402aadf) keeps a full first moment `m` and one
  second moment per block (a head, a neuron, a token row, or a whole matrix); only the parameters its
  `adam_block_names` name (`{"bias"}`, :118) keep a full `v`, a few thousand elements a layer, not counted.
- Muon (LLaMA-Factory third_party/muon/muon.py:159-214) keeps one momentum buffer for the 2-D weights that are not
  embeddings or the head (trainer_utils.py `_create_muon_optimizer`) and AdamW's two moments for the rest; its
  Newton-Schulz step (:48-72) works on bf16 copies of one matrix at a time.
- LOMO / AdaLomo (transformers `optim: lomo | adalomo`, OpenLMLab/LOMO lomo_optim) update each parameter in its
  gradient hook during backward and keep no moments (AdaLomo: a factored row/column second moment).
"""

from __future__ import annotations

from oomdoctor.facts import ModelShape, TrainingSetup
from oomdoctor.memory.params import ParamCounts

BNB_8BIT = 1.0 + 4.0 / 256      # bitsandbytes block-wise 8-bit state: a uint8 code + an fp32 absmax per 256 elements


def low_rank_kind(setup: TrainingSetup) -> str:
    """'galore' or 'apollo' when the run's optimizer projects the weights' gradients to a low rank, else ''."""
    opt = (setup.optimizer or "").lower()
    if setup.method != "full":
        return ""
    if setup.galore or opt.startswith("galore"):
        return "galore"
    if setup.apollo or opt.startswith("apollo"):
        return "apollo"
    return ""


def steps_in_backward(setup: TrainingSetup) -> bool:
    """Whether the optimizer steps each parameter in its gradient hook and frees the gradient there: GaLore's and
    APOLLO's layer-wise variants, transformers' `*_layerwise` names, LOMO and AdaLomo."""
    opt = (setup.optimizer or "").lower()
    kind = low_rank_kind(setup)
    mech = setup.mechanisms
    layerwise = mech.galore_layerwise if kind == "galore" else mech.apollo_layerwise
    if kind and (layerwise or opt.endswith("layerwise")):
        return True
    return opt in ("lomo", "adalomo")


def extra_flag(setup: TrainingSetup) -> str:
    """'adam_mini' or 'muon' when LLaMA-Factory's switch of that name is on for a full run, else ''."""
    if setup.method != "full":
        return ""
    mech = setup.mechanisms
    return "adam_mini" if mech.adam_mini else ("muon" if mech.muon else "")


# the names the report gives them (memory.note.low_memory_optimizer)
NAMES = {"galore": "GaLore", "apollo": "APOLLO", "adam_mini": "Adam-mini", "muon": "Muon"}


def special_kind(setup: TrainingSetup) -> str:
    """Which of GaLore, APOLLO, Adam-mini or Muon keeps this run's states (a key of NAMES), else ''."""
    return low_rank_kind(setup) or extra_flag(setup)


def _rank(setup: TrainingSetup, kind: str) -> int:
    """The projection rank the config states; else the default of the framework that reads it (LLaMA-Factory
    hparams/finetuning_args.py: galore_rank 16, apollo_rank 16; transformers' optim_args rank: 128)."""
    rank = setup.mechanisms.galore_rank if kind == "galore" else setup.mechanisms.apollo_rank
    if rank:
        return max(1, rank)
    return 16 if setup.framework == "llamafactory" else 128


def _targets(counts: ParamCounts, layers: int) -> list[tuple[int, int, int]]:
    """(in, out, how many) of the decoder's dense linear weights: what `all` targets."""
    return [(i, o, layers) for i, o in counts.linear_shapes.values() if i > 0 and o > 0]


def projector_bytes(kind: str, i: int, o: int, rank: int, w: int) -> float:
    """The bytes one m x n weight's projection matrix holds: rank x min(m, n) in the weight's dtype; for GaLore over
    an fp32 weight the SVD factor it is sliced from, min(m, n) x min(m, n) fp32 (galore_projector.py:85, 90:
    `Vh[:rank, :]` / `U[:, :rank]` are views, cast to a copy only for a non-fp32 weight)."""
    small = min(i, o)
    if kind == "galore":
        return float(small * small * 4) if w == 4 else float(min(rank, small) * small * w)
    return float(rank * small * w)


def special_optimizer_bytes(setup: TrainingSetup, shape: ModelShape, counts: ParamCounts, T: int,
                            w: int) -> tuple[float, float] | None:
    """(state bytes, largest step temporary) of GaLore, APOLLO, Adam-mini or Muon over `T` trainable parameters
    whose states are `w` bytes an element; None for any other optimizer."""
    kind = low_rank_kind(setup)
    flag = "" if kind else extra_flag(setup)
    if not kind and not flag:
        return None
    eight_bit = "8bit" in (setup.optimizer or "").lower()
    per_state = BNB_8BIT if eight_bit else float(w)
    targets = _targets(counts, max(1, shape.num_layers))
    target_total = min(T, sum(i * o * n for i, o, n in targets))
    rest = T - target_total
    largest_rest = max(counts.embeddings, counts.lm_head, 0)
    # the other parameters' AdamW step, one parameter at a time: sqrt(v) and m / sqrt(v) of the largest
    # (galore_torch/adamw.py:113-123); bitsandbytes' 8-bit kernel updates in place
    rest_temp = 0.0 if eight_bit else 2.0 * largest_rest * w
    if kind:
        rank = _rank(setup, kind)
        states = rest * 2.0 * per_state
        temp = rest_temp
        for i, o, n in targets:
            r = min(rank, i, o) if kind == "galore" else rank
            big, small = max(i, o), min(i, o)
            states += n * (2.0 * r * big * per_state + projector_bytes(kind, i, o, rank, w))
            if kind == "galore":
                # the SVD of the fp32 gradient (a cast copy unless fp32) and its factors U, S, Vh, then the step's
                # full-size update: project_back (adamw.py:126) or, 8-bit, the weight's clone beside it
                svd = i * o * (0 if w == 4 else 4) + (i + o) * small * 4.0
                step = i * o * w * (2.0 if eight_bit else 1.0)
                temp = max(temp, svd, step)
            else:
                # the fp32 copy the random projector is made from, then the scaled full gradient
                temp = max(temp, i * o * (0 if w == 4 else 4.0), i * o * float(w))
        return states, temp
    largest = max((i * o for i, o, _ in targets), default=0)
    if flag == "adam_mini":
        # a full first moment everywhere; one second moment per block: per row of a matrix at most
        rows = sum(o * n for _, o, n in targets) + counts.embeddings // max(1, shape.hidden_size) * 2
        states = T * float(w) + rows * float(w)
        # the step's full-size update of the largest matrix (`update = (state["m"] * stepsize)`, :270)
        return states, max(largest, largest_rest) * float(w)
    # Muon: one momentum buffer per hidden matrix, AdamW's two moments for embeddings, head, norms
    states = target_total * float(w) + rest * 2.0 * w
    small = max((min(i, o) for i, o, _ in targets), default=0)
    ns = largest * (w + 3 * 2.0) + 3 * small * small * 2.0     # nesterov g, bf16 X and its two successors; A, B
    return states, max(ns, rest_temp)
