"""A form's page as its HTML shows it (templates/accounts/_form.html): the summary of its errors, its fields
in order and the fields marked "required if public". Read from what was sent, as a person's browser reads it."""

from __future__ import annotations

from html.parser import HTMLParser


class FormPage(HTMLParser):
    def __init__(self, html: str) -> None:
        super().__init__()
        self.ids: set[str] = set()
        self.summary: dict[str, str | None] | None = None  # the summary's attributes
        self.summary_links: list[tuple[str, str]] = []  # (the id a link goes to, its text)
        self.fields: list[str] = []  # the names of the form's fields, in order (not the nav's language menu)
        self.summary_before_fields = False
        self.public_required: list[str] = []  # the ids of the fields marked "required if public"
        self._in_summary = 0  # depth of <div> inside the summary
        self._link: str | None = None
        self._link_text = ""
        self._label_for: str | None = None
        self._in_field = 0  # depth of <div> inside a field's
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        classes = (attributes.get("class") or "").split()
        if attributes.get("id"):
            self.ids.add(attributes["id"] or "")
        if "error-summary" in classes:
            self.summary = attributes
            self.summary_before_fields = not self.fields
        if tag == "div" and (self._in_summary or "error-summary" in classes):
            self._in_summary += 1
        if tag == "div" and (self._in_field or "field" in classes):
            self._in_field += 1
        if self._in_summary and tag == "a":
            self._link, self._link_text = (attributes.get("href") or "").removeprefix("#"), ""
        if tag == "label":
            self._label_for = attributes.get("for")
        if "public-required" in classes and self._label_for:
            self.public_required.append(self._label_for)
        name = attributes.get("name")
        if self._in_field and tag in ("input", "select", "textarea") and name and name not in self.fields:
            self.fields.append(name)

    def handle_endtag(self, tag: str) -> None:
        if tag == "div" and self._in_summary:
            self._in_summary -= 1
        if tag == "div" and self._in_field:
            self._in_field -= 1
        if tag == "a" and self._link is not None:
            self.summary_links.append((self._link, " ".join(self._link_text.split())))
            self._link = None

    def handle_data(self, data: str) -> None:
        if self._link is not None:
            self._link_text += data
