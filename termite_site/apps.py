from django.apps import AppConfig


class TermiteSiteConfig(AppConfig):
    name = "termite_site"
    verbose_name = "Termite Portal"
