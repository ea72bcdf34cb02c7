# Termite Portal: gunicorn serving the Django site; the same image runs the rq workers
# (`python manage.py rqworker scoring protocol imports`: scoring, protocol runs, and databases staff add).
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 \
    PYTHONUNBUFFERED=1 \
    PIP_NO_CACHE_DIR=1 \
    TERMITE_DATA_DIR=/data

RUN groupadd --system termite && useradd --system --gid termite --home-dir /app termite

WORKDIR /app
COPY requirements.txt .
RUN pip install --disable-pip-version-check -r requirements.txt

COPY --chown=termite:termite . .
# The project's bytecode, compiled once here: PYTHONDONTWRITEBYTECODE keeps every process from caching it,
# so each command, worker and web worker compiled every module of the project it imported (issue 31).
RUN python -m compileall -q termite_site evaluation leaderboard
# collectstatic needs settings to import; the build-time secrets below are never used at run time.
RUN SECRET_KEY=build-only TERMITE_GOLD_KEY=q1v4JQn3bX9b0vJ6wq2m3Zs0xWlC1yH8d7m5P2aTQ0U= DEBUG=0 \
    TERMITE_DATA_DIR=/app/var python manage.py collectstatic --noinput \
    && mkdir -p /data && chown termite:termite /data

USER termite
EXPOSE 8000
CMD ["gunicorn", "termite_site.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--access-logfile", "-"]
