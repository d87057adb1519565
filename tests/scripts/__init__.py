"""Tests of the experiment scripts."""
