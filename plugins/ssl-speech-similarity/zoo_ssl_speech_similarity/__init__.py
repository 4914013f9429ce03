"""zoo plugin ssl-speech-similarity: inter-/intra-model similarity at the neuron level (max correlation) and the
layer level (CKA / CCA / RSA layer x layer matrices), after the similarity analysis of speech SSL models (catalog 98).
"""

__version__ = "0.1.0"
