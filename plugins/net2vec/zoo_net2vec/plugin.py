"""zoo hooks for net2vec: specs only (no torch import)."""
from __future__ import annotations

from zoo import ClaimSpec, Paper, ToolSpec, hookimpl

PAPER = Paper(title="Net2Vec: Quantifying and Explaining how Concepts are Encoded by Filters in Deep Neural Networks",
              year=2018, arxiv="1801.03454", url="https://arxiv.org/abs/1801.03454", catalog=52)

CLAIM = ("Most concepts need multiple filters, and filter embeddings beat single-filter activations: on ShapesCNN "
         "(3 training seeds) layers conv1-conv3 with the 4 shape and 4 colour concepts of the synthetic shapes "
         "images, Net2Vec embeddings segment (set IoU) and classify (pooled-response probe) better than the best "
         "single filter, and refitting on the top-weighted filter alone loses over 10% of the IoU for most concepts")


@hookimpl
def zoo_tools() -> list[ToolSpec]:
    return [ToolSpec(name="net2vec", function="zoo_net2vec.tool:net2vec_tool", paper=PAPER,
                     inputs="one or more layers: flattened maps (N, K*h*w) with channels=K, or pooled (N, K); "
                            "concepts from labels (N,) / labels= (N, C) 0/1; masks= (N, C, H, W) or (N, H, W) object "
                            "masks for segmentation; N >= 4 with positives and negatives of every concept",
                     outputs="layers: {name: {seg_iou, single_iou, single_filter, topk_iou, k90, probe_acc, "
                             "single_probe_acc, top_fraction, filter_sharing, similarity (C x C)}}; a bar-chart PNG "
                             "with out_dir",
                     description="Net2Vec concept embeddings (learned weights over a layer's filters) for "
                                 "segmentation and classification against the best single filter")]


@hookimpl
def zoo_claims() -> list[ClaimSpec]:
    return [ClaimSpec(plugin="net2vec", claim=CLAIM, reproduce="zoo_net2vec.reproduce:REPRODUCTION", task=None,
                      paper=PAPER)]
