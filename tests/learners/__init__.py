"""Tests of lpcfg_cli.learners."""
