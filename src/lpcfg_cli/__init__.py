"""lpcfg: learn latent-variable PCFGs from treebanks and parse with them."""

__version__ = "0.1.0"
