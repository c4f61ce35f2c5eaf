"""Helpers and data shared by the tests (on the path through pytest's `pythonpath`): import them
as `support.<module>`; shared fixtures live in the conftest.py files, never imported by name."""
