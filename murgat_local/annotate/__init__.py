"""`murgat annotate`: human labels for the three subtasks, made on a local page.

`source` reads what is labelled (split as the scorer splits it), `questions` decides what to
ask next (pure), `store` keeps every answer (SQLite, WAL), `export` writes the labels in the
`human:PATH` format, `session` ties them for one annotator, `agreement` compares annotators and
judges, `server` is the HTTP API and the page (`page/`).
"""

from .export import LabelsBusy, LabelsLock, label_record, to_labelled, write_labels
from .questions import Question, check_answer, next_question, questions
from .session import Session, SessionError, agreement_report
from .source import Item, Source, SourceError, load_source
from .store import Store, StoreBusy

__all__ = [
    "Item",
    "LabelsBusy",
    "LabelsLock",
    "Question",
    "Session",
    "SessionError",
    "Source",
    "SourceError",
    "Store",
    "StoreBusy",
    "agreement_report",
    "check_answer",
    "label_record",
    "load_source",
    "next_question",
    "questions",
    "to_labelled",
    "write_labels",
]
