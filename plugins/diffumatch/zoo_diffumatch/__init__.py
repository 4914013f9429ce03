"""DiffuMatch (Pierson, Li, Dai & Ovsjanikov 2025) for zoo: a diffusion (score) prior over functional maps, trained
by denoising score matching on ground-truth maps and distilled (score distillation) into the map regulariser, in
place of Laplacian commutativity and orthogonality; measured on shape_match."""

__version__ = "0.1.0"
