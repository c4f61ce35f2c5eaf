"""A response whose citations are visual, for the routing tests."""

from __future__ import annotations

VISUAL = {
    "id": "v1",
    "video": "colors",
    "model_generation": "The screen is red (visual, 0:00). The screen is green (visual, 0:01). So A.\nAnswer: A",
}
