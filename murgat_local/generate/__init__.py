"""Generating responses: responder strategies, what a responder sees, QA, and the program
interpreter (`program/`) with its tools on the engines (`program_tools.py`)."""
