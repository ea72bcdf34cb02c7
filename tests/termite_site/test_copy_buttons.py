"""Copy buttons (templates/site/_copy.html): every long value a participant may want to copy, a hash, a new
API token, a new invitation link or the citation, has a button beside it that names what it copies, and the
value is in the page whole (a phone may show it cut short; static/js/site.js copies it whole)."""

from __future__ import annotations

from html.parser import HTMLParser

import pytest
from django.urls import reverse
from django.utils import timezone

from tests.factories import run_make
from tests.leaderboard.scored import scored_fields

pytestmark = pytest.mark.django_db

FILE_SHA256 = "f1" * 32
TRANSCRIPT_SHA256 = "7a" * 32


class CopyButtons(HTMLParser):
    """A page's copy buttons: for each, the id of the element it copies, its accessible name (its text, the
    part shown only to a screen reader included), whether a live region follows it, and that element's text."""

    def __init__(self, html: str) -> None:
        super().__init__()
        self.names: dict[str, str] = {}  # the id copied: the button's accessible name
        self.live_after: set[str] = set()  # the ids whose button a live region follows
        self.texts: dict[str, str] = {}  # an element's id: its text
        self._open: list[str] = []  # the ids of the elements being read, innermost last
        self._button: str | None = None
        self._after_button: str | None = None
        self.feed(html)

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        attributes = dict(attrs)
        if self._after_button and attributes.get("role") == "status" and attributes.get("aria-live"):
            self.live_after.add(self._after_button)
        self._after_button = None
        if tag == "button" and "copy" in (attributes.get("class") or "").split():
            self._button = attributes.get("data-copy") or ""
            self.names[self._button] = ""
        elif attributes.get("id"):
            self._open.append(attributes["id"] or "")
            self.texts[self._open[-1]] = ""

    def handle_endtag(self, tag: str) -> None:
        if tag == "button" and self._button is not None:
            self.names[self._button] = " ".join(self.names[self._button].split())
            self._after_button, self._button = self._button, None
        elif tag in ("code", "pre") and self._open:
            self._open.pop()

    def handle_data(self, data: str) -> None:
        if self._button is not None:
            self.names[self._button] += data
        elif self._open:
            self.texts[self._open[-1]] += data

    def copied(self) -> dict[str, tuple[str, str]]:
        """Each button's accessible name with the text it copies, by the id of what it copies."""
        assert self.live_after == set(self.names), "each button is followed by the live region that confirms"
        return {target: (name, self.texts.get(target, "")) for target, name in self.names.items()}


def buttons_on(response) -> dict[str, tuple[str, str]]:
    assert response.status_code == 200
    return CopyButtons(response.content.decode()).copied()


def test_a_submission_has_a_button_for_its_files_sha256_and_its_transcripts(client, make_submission):
    submission = make_submission(
        file_sha256=FILE_SHA256,
        portal_protocol="termite-2turn-it/1",
        portal_endpoint_host="llm.example.org",
        portal_run_at=timezone.now(),
        transcript_sha256=TRANSCRIPT_SHA256,
        **scored_fields(15),
    )
    buttons = buttons_on(client.get(submission.get_absolute_url()))
    # Beside the two citations of a public ranked row (tests/leaderboard/test_citation.py).
    assert set(buttons) == {"file-sha256", "portal-transcript-sha256", "citation-bibtex", "citation-text"}
    assert (buttons["file-sha256"], buttons["portal-transcript-sha256"]) == (
        ("Copy the sha256 of the predictions file", FILE_SHA256),
        ("Copy the sha256 of the transcript", TRANSCRIPT_SHA256),
    )


def test_an_uploaded_private_submission_has_a_button_for_its_files_sha256_only(client, make_submission):
    """No transcript, and no citation: a private submission cannot be cited."""
    submission = make_submission(file_sha256=FILE_SHA256, **{**scored_fields(15), "is_public": False})
    client.force_login(submission.user)
    assert set(buttons_on(client.get(submission.get_absolute_url()))) == {"file-sha256"}


def test_a_protocol_run_has_a_button_for_its_transcripts_sha256(client, owner, demo_version):
    run = run_make(user=owner, version=demo_version, transcript_sha256=TRANSCRIPT_SHA256)
    client.force_login(owner)
    assert buttons_on(client.get(reverse("leaderboard:run_detail", args=[run.pk]))) == {
        "transcript-sha256": ("Copy the sha256 of the transcript", TRANSCRIPT_SHA256)
    }


def test_a_new_api_token_has_a_button(client, owner):
    client.force_login(owner)
    response = client.post(reverse("accounts:token_create"), {"name": "cluster"})
    assert buttons_on(response) == {"new-token": ("Copy the new API token", response.context["new_token"])}
    assert buttons_on(client.get(reverse("accounts:profile"))) == {}  # shown once, then gone with its token


def test_a_new_invitation_link_has_a_button(client, owner, make_team):
    team = make_team()
    client.force_login(owner)
    response = client.post(reverse("accounts:team_invitation_create", args=[team.slug]))
    assert buttons_on(response) == {
        "new-link": ("Copy the new invitation link", response.context["new_link"])
    }


def test_the_staff_see_a_button_for_each_databases_sha256(client, staff, demo_version):
    client.force_login(staff)
    found = buttons_on(client.get(reverse("staff:version", args=[demo_version.label])))
    assert found == {
        f"sha256-{db.slug}": (f"Copy the sha256 of {db.display_name}", db.sqlite_sha256)
        for db in demo_version.databases.all()
    }
    assert all(len(sha256) == 64 for _name, sha256 in found.values())


def test_the_about_page_has_a_button_for_the_bibtex(client):
    ((name, bibtex),) = buttons_on(client.get(reverse("about"))).values()
    assert name == "Copy the BibTeX of both papers"
    assert bibtex.startswith("@misc{ranaldi2024contamination,") and bibtex.rstrip().endswith("}")
