"""Tests of lpcfg_cli.engine."""
