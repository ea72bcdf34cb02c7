"""Its owner corrects a submission's model card after the upload: checked as at upload, the card it
replaces kept and dated on the submission's page, no quota spent, the predictions and scores untouched."""

from __future__ import annotations

import pytest
from django.urls import reverse

from leaderboard.forms import ModelCardForm
from leaderboard.models import ModelCardRevision, Submission
from tests.demo import PUBLIC_CARD


def url(submission: Submission) -> str:
    return reverse("leaderboard:submission_card_edit", args=[submission.pk])


def as_posted(submission: Submission, **changes: str) -> dict[str, str]:
    """The edit form as its page fills it in, with `changes`."""
    form = ModelCardForm(instance=submission)
    shown = {name: form[name].value() for name in form.fields}
    posted = {
        name: "" if value is None else str(value) for name, value in shown.items() if value is not False
    }
    return {**posted, **changes}


@pytest.fixture
def private(make_submission):
    return make_submission(model_name="Vecchio nome", description="")


@pytest.fixture
def public(make_submission):
    return make_submission(model_name="Pubblico", is_public=True, **PUBLIC_CARD)


def test_the_owner_corrects_the_card_and_the_card_it_replaces_is_kept(client, owner, private):
    client.force_login(owner)
    submissions = Submission.objects.count()
    response = client.post(
        url(private), as_posted(private, model_name="Nome giusto", description="Corretto.")
    )
    assert response.status_code == 302 and response["Location"] == private.get_absolute_url()
    private.refresh_from_db()
    assert (private.model_name, private.description) == ("Nome giusto", "Corretto.")
    (revision,) = ModelCardRevision.objects.filter(submission=private)
    assert (revision.card["model_name"], revision.card["description"]) == ("Vecchio nome", "")
    assert Submission.objects.count() == submissions  # nothing uploaded, no quota spent
    page = client.get(private.get_absolute_url()).content.decode()
    assert 'id="card-corrected"' in page and revision.replaced_at.strftime("%Y-%m-%d") in page


def test_the_submission_page_offers_its_owner_alone_the_correction(client, owner, staff, private):
    client.force_login(owner)
    assert f'href="{url(private)}"' in client.get(private.get_absolute_url()).content.decode()
    client.force_login(staff)
    assert f'href="{url(private)}"' not in client.get(private.get_absolute_url()).content.decode()


def test_a_public_submission_keeps_a_whole_card(client, owner, public):
    client.force_login(owner)
    response = client.post(url(public), as_posted(public, model_size=""))
    assert response.status_code == 400
    assert 'href="#id_model_size"' in response.content.decode()  # the error summary names the field
    public.refresh_from_db()
    assert public.model_size == PUBLIC_CARD["model_size"]
    assert not ModelCardRevision.objects.exists()


def test_the_dialect_and_the_visibility_are_not_the_cards_to_change(client, owner, private):
    client.force_login(owner)
    client.post(url(private), as_posted(private, model_name="Altro", dialect="sqlite", is_public="on"))
    private.refresh_from_db()
    assert (private.model_name, private.dialect, private.is_public) == ("Altro", "mysql", False)


def test_saving_an_unchanged_card_keeps_no_revision_and_says_so(client, owner, private):
    client.force_login(owner)
    response = client.post(url(private), as_posted(private), follow=True)
    assert "Nothing changed in the model card" in response.content.decode()
    assert not ModelCardRevision.objects.exists()


def test_only_its_owner_corrects_a_card(client, staff, private):
    assert client.get(url(private)).status_code == 302  # to the login page
    client.force_login(staff)
    assert client.get(url(private)).status_code == 404
    assert client.post(url(private), as_posted(private, model_name="Intruso")).status_code == 404
    private.refresh_from_db()
    assert private.model_name == "Vecchio nome"
