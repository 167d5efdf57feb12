"""reportpage: read the page `ollama-audit report` writes, as a browser's
parser would (html.parser), for test_report.py and test_report_browser.py.

Page(text) parses once and keeps: problems (bad nesting, external
addresses, active content), the visible text, per section (the fleet,
each store) the headline totals: the exact byte counts of the cards, and
per store section its findings as listed (code, model, text, remedy)."""

import html.parser
import re

VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
ACTIVE = {"script", "iframe", "object", "embed", "link", "img", "base", "form", "frame"}


class Page(html.parser.HTMLParser):
    def __init__(self, text):
        super().__init__(convert_charrefs=True)
        self.stack = []
        self.problems = []
        self.text = []
        self.tags = {}
        self.sections = {}   # id -> {key: value} of the cards' data-key elements
        self.section = None
        self.key = None
        self.model_cells = {}  # section id -> names of the models table
        self._in_name = False
        self.findings = {}     # section id -> [{"code", "model", "text", "remedy"}]
        self._finding = None   # the finding being read, and which part of it
        self._part = None
        self.feed(text)
        self.close()
        if self.stack:
            self.problems.append("unclosed at the end: %s" % self.stack)

    def handle_starttag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        a = dict(attrs)
        for k, v in attrs:
            if k in ("src", "href", "xlink:href", "action", "srcset") and not (v or "").startswith("#"):
                self.problems.append("external address %s=%r on <%s>" % (k, v, tag))
            if k.startswith("on"):
                self.problems.append("event handler %s on <%s>" % (k, tag))
        if tag in ACTIVE:
            self.problems.append("<%s> in the page" % tag)
        if tag == "section":
            self.section = a.get("id")
            self.sections[self.section] = {}
            self.model_cells[self.section] = []
        if "data-key" in a:
            self.key = a["data-key"]
        self._finding_start(tag, a)
        if tag == "td" and a.get("class") == "name":
            self._in_name = True
            self.model_cells[self.section].append("")
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.tags[tag] = self.tags.get(tag, 0) + 1
        for k, v in attrs:
            if k in ("src", "href", "xlink:href") and not (v or "").startswith("#"):
                self.problems.append("external address %s=%r on <%s/>" % (k, v, tag))

    def handle_endtag(self, tag):
        if tag in VOID:
            return
        if not self.stack or self.stack[-1] != tag:
            self.problems.append("</%s> closes <%s>" % (tag, self.stack[-1] if self.stack else "nothing"))
            if tag in self.stack:
                while self.stack and self.stack.pop() != tag:
                    pass
            return
        self.stack.pop()
        self._finding_end(tag)
        if tag == "td":
            self._in_name = False
        if tag == "section":
            self.section = None

    def handle_data(self, data):
        self.text.append(data)
        if self.key is not None and self.section is not None:
            m = re.match(r"\s*(\d+)", data)
            if m:
                self.sections[self.section][self.key] = int(m.group(1))
            self.key = None
        if self._in_name:
            self.model_cells[self.section][-1] += data
        if self._finding is not None:
            self._finding[self._part or "text"] += data

    # A finding: <li><span class="sev S">S</span><code>CODE</code> <b>MODEL</b>
    # TEXT<span class="remedy">REMEDY</span></li>
    def _finding_start(self, tag, a):
        if tag == "li" and self.section and self.section.startswith("store-"):
            self._finding = {"sev": "", "code": "", "model": "", "text": "", "remedy": ""}
            self._part = None
        elif self._finding is not None:
            cls = (a.get("class") or "").split()
            part = {"code": "code", "b": "model"}.get(tag)
            self._part = "sev" if "sev" in cls else "remedy" if "remedy" in cls else part or self._part

    def _finding_end(self, tag):
        if self._finding is None:
            return
        if tag == "li":
            f = {k: v.strip() for k, v in self._finding.items()}
            if f["code"]:
                f["remedy"] = f["remedy"].lstrip("\u2192").strip()
                f["model"] = f["model"] or None
                self.findings.setdefault(self.section, []).append(f)
            self._finding = None
        elif tag in ("span", "code", "b"):
            self._part = None

    def visible(self):
        return "".join(self.text)

    def stores(self):
        """The store sections' totals, in page order."""
        return [v for k, v in self.sections.items() if k and k.startswith("store-")]


def du_numbers(doc, i=0):
    """The totals of store i of `du --format json` as the page's cards name them."""
    st = doc["stores"][i]
    tot = st["totals"]
    unique = sum(m["unique_bytes"] for m in st["models"])
    return {"referenced": tot["referenced_bytes"], "unique": unique,
            "junk": sum(j["disk_bytes"] for j in tot["junk"].values()),
            "reclaimable": tot["reclaimable_bytes"], "blobs": tot["blobs_bytes"],
            "manifests": len(st["models"])}
