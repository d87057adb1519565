"""Tests of lpcfg_cli.parsing."""
