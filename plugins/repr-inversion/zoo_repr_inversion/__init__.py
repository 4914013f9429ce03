"""Inverting visual representations with up-convolutional networks (Dosovitskiy & Brox 2016) for zoo: decoders
trained from features back to images, reconstruction MSE/PSNR per representation (HOG, LBP, CNN layers, softmax)."""

__version__ = "0.1.0"
