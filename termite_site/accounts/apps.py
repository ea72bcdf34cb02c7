from django.apps import AppConfig
from django.db.models.signals import post_delete, post_save


class AccountsConfig(AppConfig):
    name = "termite_site.accounts"
    label = "accounts"

    def ready(self) -> None:
        from termite_site.accounts import backends  # noqa: PLC0415 (models load after the app registry)

        user = self.get_model("User")
        post_save.connect(backends.forget_changed_user, sender=user, dispatch_uid="accounts-user-saved")
        post_delete.connect(backends.forget_changed_user, sender=user, dispatch_uid="accounts-user-deleted")
