"""VQToken (Zhang & Fu 2025) for zoo: adaptive vector quantisation of a video's token grid into a small codebook, with
the token hash that keeps every token's (t, h, w) position, measured on video_tokens."""

__version__ = "0.1.0"
