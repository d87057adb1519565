"""Tests of lpcfg_cli.grammar."""
