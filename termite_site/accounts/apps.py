from django.apps import AppConfig


class AccountsConfig(AppConfig):
    name = "termite_site.accounts"
    label = "accounts"
