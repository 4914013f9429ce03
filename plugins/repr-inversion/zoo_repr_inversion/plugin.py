"""zoo hooks for repr-inversion: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Inverting Visual Representations with Convolutional Networks", year=2016, arxiv="1506.02753",
              url="https://arxiv.org/abs/1506.02753", catalog=99)

CLAIM = ("Colours and rough positions can be reconstructed even from the predicted class probabilities, and shallow "
         "features (HOG) reconstruct images better than a network's last hidden layer: on the synthetic shapes images "
         "(ShapesCNN, 3 seeds), up-convolutional decoders trained from the 12 softmax probabilities give "
         "reconstructions on which the ShapesCNN reads the right colour and quadrant well above chance, and the HOG "
         "decoder reaches a higher held-out PSNR than the fc-layer decoder")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="repr-inversion", function="zoo_repr_inversion.tool:inversion_tool", paper=PAPER,
                     inputs="one or more layers (N, D) (representations of the same N images) and the images: "
                            "images= (N, C, H, W) or (N, H, W), or images='<task>' (e.g. 'digits_classify') for "
                            "that task's probe data, the set zoo analyze ran on (probe_seed= its --seed, default 0), "
                            "or target= a layer to invert to; N >= 8, finite values",
                     outputs="layers: {name: {mse, psnr, nmse}} on a held-out split; mean_image_mse, mean_image_psnr "
                             "(the no-information baseline), peak; a PNG of held-out reconstructions with out_dir",
                     description="Up-convolutional decoders from each representation back to the images "
                                 "(Dosovitskiy & Brox): what a layer keeps, as reconstruction MSE/PSNR")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="repr-inversion", claim=CLAIM, reproduce="zoo_repr_inversion.reproduce:REPRODUCTION",
                      task=None, paper=PAPER)]
