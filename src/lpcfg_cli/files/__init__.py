"""Files: streams with the command line's conventions, and model files that are safe to load.

Modules, lowest first: ``streams`` (``-`` for stdin and stdout, atomic outputs, line
reading that pauses with the input), ``archive`` (the ``.npz`` container, never pickle),
``model_file`` (one archive and one JSON header with a format version, for every kind of
model), ``packed_arrays`` (how a parsing model stores its parameters compactly).
"""
