"""Tests of lpcfg_cli.treebank."""
