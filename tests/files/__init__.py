"""Tests of lpcfg_cli.files."""
