"""treebank."""
