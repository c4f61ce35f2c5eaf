"""Reading `murgat report`'s page: its elements and attributes, and the summary.json value a table
cell names."""

from __future__ import annotations

import json
import pathlib
from html.parser import HTMLParser


class Page(HTMLParser):
    """Elements (tag, attrs) and the text of each <script>."""

    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.elements, self.scripts, self._in = [], [], None
        self.feed(text)

    def handle_starttag(self, tag, attrs):
        self.elements.append((tag, dict(attrs)))
        if tag == "script":
            self._in = dict(attrs)
            self.scripts.append([dict(attrs), ""])

    def handle_endtag(self, tag):
        if tag == "script":
            self._in = None

    def handle_data(self, data):
        if self._in is not None:
            self.scripts[-1][1] += data


def _expected(where):
    path, key = where
    summary = json.loads(pathlib.Path(path).read_text())
    for k in json.loads(key):
        summary = summary[k]
    return summary
