"""Tests of lpcfg_cli.lm."""
