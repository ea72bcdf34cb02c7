import re

import pytest
from django.core import mail
from django.urls import reverse

pytestmark = pytest.mark.django_db


def test_changing_the_password_needs_the_old_one(client, owner, password):
    client.force_login(owner)
    url = reverse("accounts:password_change")
    new = "another-long-passphrase-77"
    bad = client.post(url, {"old_password": "wrong", "new_password1": new, "new_password2": new})
    assert "old_password" in bad.context["form"].errors
    good = client.post(url, {"old_password": password, "new_password1": new, "new_password2": new})
    assert good.url == reverse("accounts:password_change_done")
    owner.refresh_from_db()
    assert owner.check_password(new)


def test_the_password_change_page_needs_a_login(client):
    response = client.get(reverse("accounts:password_change"))
    assert response.status_code == 302
    assert response.url.startswith(reverse("accounts:login"))


def test_a_password_reset_mails_a_link_that_sets_a_new_password(client, owner):
    response = client.post(reverse("accounts:password_reset"), {"email": owner.email})
    assert response.url == reverse("accounts:password_reset_done")
    assert len(mail.outbox) == 1
    link = re.search(r"https?://[^/]+(/\S+)", mail.outbox[0].body).group(1)
    form_page = client.get(link, follow=True)
    assert form_page.context["validlink"]
    new = "brand-new-passphrase-123"
    done = client.post(form_page.redirect_chain[-1][0], {"new_password1": new, "new_password2": new})
    assert done.url == reverse("accounts:password_reset_complete")
    owner.refresh_from_db()
    assert owner.check_password(new)


def test_a_reset_for_an_unknown_address_sends_nothing_and_reveals_nothing(client, owner):
    response = client.post(reverse("accounts:password_reset"), {"email": "nobody@example.org"})
    assert response.url == reverse("accounts:password_reset_done")
    assert mail.outbox == []
