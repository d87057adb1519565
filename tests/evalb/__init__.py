"""Tests of lpcfg_cli.evalb."""
