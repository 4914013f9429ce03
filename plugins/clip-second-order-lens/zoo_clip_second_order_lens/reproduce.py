"""``zoo reproduce clip-second-order-lens``: the second-order lens on a tiny CLIP trained in code on digits.

Per seed s: the tiny CLIP trained with seed s (``model.trained_clip``, InfoNCE on digits with template captions,
cached) gives the second-order and first-order effects of its 3 x 128 neurons (blocks 0-2; block 3 has no later
heads) on the 1347 training images. Rows:

* ``second_order``: over the ``TOP`` neurons of largest mean second-order norm, the mean ``selectivity`` (fraction
  of images carrying 90% of the squared deviation from the mean effect) and ``explained`` (share of that deviation,
  over all images, captured by one direction); ``accuracy_drop``: zero-shot test accuracy lost when mean-ablating
  (per token, training-image means) the ``K`` neurons of largest second-order norm; reported only:
  ``digits_per_neuron`` (distinct digit names among the 5 OMP atoms, over the caption/word dictionary, of the top
  neurons' directions: polysemanticity), the zero-shot accuracy, and the second-order/first-order norm ratio.
* ``first_order``: the same statistics for the first-order (direct) effects of the ``TOP`` neurons of largest
  direct norm; ``accuracy_drop`` of mean-ablating the ``K`` neurons of largest direct norm.
* ``random``: ``accuracy_drop`` of mean-ablating ``K`` random neurons (seed 1000 + s).
* ``output_embedding``: ``selectivity`` and ``explained`` of the normalised image embedding itself (the control:
  a dense, many-directional quantity).
"""
from __future__ import annotations

from functools import cache

import numpy as np

from zoo.claims import Check, Claim, Row

from .plugin import CLAIM

TOP, K, ENERGY, ATOMS = 32, 24, 0.9, 5
SELECT_MARGIN, DIRECTION_MARGIN, RANDOM_MARGIN, FIRST_ORDER_MARGIN = 0.2, 0.2, 0.05, 0.02
QUICK_STEPS = 40


@cache
def _experiment(seed: int, quick: bool) -> dict[str, dict[str, float]]:
    import torch

    from zoo.task import torch_threads
    from zoo_task_digits.task import load_split

    from .lens import lens_statistics, omp
    from .model import DIGITS, second_order_effects, text_dictionary, train_clip, trained_clip, zero_shot_accuracy

    with torch_threads(1), torch.no_grad():
        model = train_clip(seed, steps=QUICK_STEPS)[0] if quick else trained_clip(seed)
        x, _, xt, yt = load_split("digits")
        if quick:
            x = x[:200]
        eff = second_order_effects(model, x)
        n_layers, m = eff["second_order"].shape[1:3]
        so = eff["second_order"].flatten(1, 2).double().numpy()  # (N, L*M, E)
        fo = eff["first_order"].flatten(1, 2).double().numpy()
        means = eff["activations"].mean(0)  # (L, T, M)
        clean = zero_shot_accuracy(model, xt, yt)

        def drop(neurons: np.ndarray) -> float:
            ablate = {}
            for layer in range(n_layers):
                mask = torch.zeros(m, dtype=torch.bool)
                sel = neurons[neurons // m == layer] % m
                mask[torch.as_tensor(sel, dtype=torch.long)] = True
                if mask.any():
                    ablate[int(eff["layers"][layer])] = (mask, means[layer])
            return clean - zero_shot_accuracy(model, xt, yt, ablate=ablate)

        so_norm, fo_norm = np.linalg.norm(so, axis=2).mean(0), np.linalg.norm(fo, axis=2).mean(0)
        top_so, top_fo = np.argsort(-so_norm, kind="stable"), np.argsort(-fo_norm, kind="stable")
        st_so = lens_statistics(so[:, top_so[:TOP]], energy=ENERGY)
        st_fo = lens_statistics(fo[:, top_fo[:TOP]], energy=ENERGY)
        emb = torch.nn.functional.normalize(eff["embedding"], dim=-1).double().numpy()
        st_emb = lens_statistics(emb, energy=ENERGY)
        dic, texts = text_dictionary(model)
        digits_per = []
        for v in st_so["direction"]:
            idx, _, _ = omp(v, dic, atoms=ATOMS)
            digits_per.append(len({d for i in idx for d in DIGITS if d in texts[i].split()}))
        rng = np.random.default_rng(1000 + seed)
        return {
            "second_order": {"selectivity": float(st_so["selectivity"].mean()),
                             "explained": float(st_so["explained"].mean()),
                             "explained_significant": float(st_so["explained_significant"].mean()),
                             "accuracy_drop": drop(top_so[:K]), "digits_per_neuron": float(np.mean(digits_per)),
                             "zero_shot_accuracy": clean, "norm_ratio": float(so_norm.mean() / fo_norm.mean())},
            "first_order": {"selectivity": float(st_fo["selectivity"].mean()),
                            "explained": float(st_fo["explained"].mean()), "accuracy_drop": drop(top_fo[:K])},
            "random": {"accuracy_drop": drop(rng.choice(len(so_norm), K, replace=False))},
            "output_embedding": {"selectivity": float(st_emb["selectivity"][0]),
                                 "explained": float(st_emb["explained"][0])},
        }


def _row(name: str):
    def row(*, seed: int, quick: bool) -> dict[str, float]:
        return _experiment(seed, quick)[name]
    return row


REPRODUCTION = Claim(
    plugin="clip-second-order-lens", claim=CLAIM, task=None, seeds=(0, 1, 2), quick_seeds=(0,),
    rows=[Row(n, _row(n)) for n in ("second_order", "first_order", "random", "output_embedding")],
    checks=[Check("second_order", "selectivity", "output_embedding", margin=SELECT_MARGIN, higher=False),
            Check("second_order", "explained", "output_embedding", margin=DIRECTION_MARGIN),
            Check("second_order", "accuracy_drop", "random", margin=RANDOM_MARGIN),
            Check("second_order", "accuracy_drop", "first_order", margin=FIRST_ORDER_MARGIN)],
    settings={"model": "tiny CLIP: ViT 4 blocks x width 64, 4 heads, 128 neurons, 2x2 patches on 8x8 digits; text "
                       "tower 2 blocks; joint space 32",
              "training": "InfoNCE, 300 steps, batch 128, AdamW 2e-3, 100 warmup steps, cosine",
              "images": "digits training split (1347)", "zero_shot_test": "digits test split (450)",
              "top_neurons": TOP, "ablated_neurons": K, "energy": ENERGY, "omp_atoms": ATOMS,
              "quick": f"{QUICK_STEPS} training steps, 200 images, seed 0"},
    notes=f"margins fixed before any run of this claim: the top-{TOP} neurons' mean selectivity is below the image "
          f"embedding's by >= {SELECT_MARGIN:g} (a fraction of images); one direction explains >= {DIRECTION_MARGIN:g} "
          f"more of their effect's deviation than of the embedding's; mean-ablating the top-{K} second-order "
          f"neurons costs >= {RANDOM_MARGIN:g} more zero-shot accuracy than {K} random neurons and >= "
          f"{FIRST_ORDER_MARGIN:g} more than the top-{K} first-order neurons. The paper's '<2% of images' uses its own "
          "top-k mean-ablation accuracy criterion on ImageNet; ours is an energy fraction on 1347 digits, reported "
          "as measured. Disclosure: a first recorded run trained the model 400 steps at batch 64 and lr 3e-3; two of "
          "its three seeds collapsed to chance zero-shot accuracy (0.10; seed 0 reached 0.68), so the checks measured "
          "untrained models. The recipe was reverted to the one piloted on seed 0 before (300 steps, batch 128, lr "
          "2e-3: 0.94 zero-shot) and the claim rerun with the margins unchanged.",
)
