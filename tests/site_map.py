"""The site map: every URL pattern of the site's URLconf, to be filled with real ids.

The crawler (tests/test_crawl.py), the check of every answer's security headers
(tests/termite_site/test_security_headers.py) and the browser's walk of every page on a phone
(tests/e2e/test_newcomer_path.py) start from it, so that a new page is visited by each without anyone
listing it. The admin's pages (Django's and django-rq's dashboard) are left out: their templates and styles
are not the site's, and the crawler reaches them by their own seeds.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass

from django.urls import URLPattern, URLResolver, get_resolver

PARAMETER = re.compile(r"<(?:\w+:)?(\w+)>")


@dataclass(frozen=True)
class SiteRoute:
    name: str  # with its namespaces: "leaderboard:submission_detail"
    route: str  # as declared, from the root: "submissions/<int:pk>/"

    @property
    def parameters(self) -> list[str]:
        return PARAMETER.findall(self.route)

    def path(self, ids: Mapping[str, object]) -> str | None:
        """The route with `ids` in place of its parameters, or None when one of them has no id."""
        if not all(name in ids for name in self.parameters):
            return None
        return "/" + PARAMETER.sub(lambda match: str(ids[match.group(1)]), self.route)


def site_routes() -> list[SiteRoute]:
    """Every URL pattern of the site, the admin's aside, in the URLconf's order."""
    routes = []

    def walk(patterns, prefix: str, namespaces: tuple[str, ...]) -> None:
        for pattern in patterns:
            route = prefix + str(pattern.pattern)
            if isinstance(pattern, URLResolver):
                walk(pattern.url_patterns, route, (*namespaces, *filter(None, [pattern.namespace])))
            elif isinstance(pattern, URLPattern) and not route.startswith(("^", "admin/")):
                routes.append(SiteRoute(name=":".join((*namespaces, pattern.name or "")), route=route))

    walk(get_resolver().url_patterns, "", ())
    return routes


def site_paths(ids: Mapping[str, object]) -> list[str]:
    """Every route of the site whose parameters all have an id in `ids`, filled with them."""
    return sorted({path for route in site_routes() if (path := route.path(ids)) is not None})
