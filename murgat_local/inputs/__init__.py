"""What the commands read: responses to score and multiple-choice datasets to answer."""

from .datasets import DatasetItem, match_option, read_dataset, render_options
from .responses import InputError, ResponseItem, read_responses

__all__ = [
    "DatasetItem",
    "InputError",
    "ResponseItem",
    "match_option",
    "read_dataset",
    "read_responses",
    "render_options",
]
