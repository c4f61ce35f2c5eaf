"""Meta-evaluation: how far a judge's annotations agree with people's labels."""

from .agreement import FACT_MATCH, evaluate, match_facts, with_chance_agreement
from .views import ResponseView, from_labels, from_record, label_views

__all__ = [
    "FACT_MATCH",
    "ResponseView",
    "evaluate",
    "from_labels",
    "from_record",
    "label_views",
    "match_facts",
    "with_chance_agreement",
]
