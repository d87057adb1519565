"""Tests of lpcfg_cli.wcfg."""
