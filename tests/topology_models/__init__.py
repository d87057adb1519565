"""Tests of lpcfg_cli.topology_models."""
