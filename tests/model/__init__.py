"""Tests of lpcfg_cli.model."""
