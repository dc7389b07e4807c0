# Companion. Two stages: `build` installs the pinned dependencies (requirements.lock) and the project into a
# virtualenv, with uv and the network; the runtime stage gets only that virtualenv and the code, runs as a user
# without privileges, and has tini as PID 1, so the embedded PostgreSQL's processes are reaped and stop cleanly.
# tests/deploy/test_dockerfile.py runs the build stage's commands in a clean virtualenv (CI has no container
# engine); the README's "Self-hosting" section says how to build and run it.
ARG PYTHON_IMAGE=python:3.11-slim-bookworm
# uv as its authors ship it for Dockerfiles, at the Makefile's version.
ARG UV_IMAGE=ghcr.io/astral-sh/uv:0.13.9

FROM ${UV_IMAGE} AS uv

FROM ${PYTHON_IMAGE} AS build
COPY --from=uv /uv /usr/local/bin/uv
ENV VENV=/opt/companion \
    UV_COMPILE_BYTECODE=1
WORKDIR /app
RUN python3 -m venv --without-pip "$VENV"
# The dependencies first, in a layer of their own: a change of the code alone does not install them again.
# The lock is a constraint: it pins every version, and the developer tools it also holds stay out of the image.
COPY pyproject.toml requirements.lock ./
RUN uv pip install --quiet --python "$VENV/bin/python" --constraint requirements.lock \
        --requirement pyproject.toml
COPY README.md ./
COPY app ./app
COPY adapters ./adapters
COPY benchmarks ./benchmarks
COPY bot ./bot
COPY brain ./brain
COPY rules ./rules
COPY migrations ./migrations
COPY locales ./locales
# Editable: the migrations and the catalogues are found beside the code, in /app. Compiled once here, since the
# user that runs the image cannot write bytecode into /app.
RUN uv pip install --quiet --python "$VENV/bin/python" --no-deps --editable . \
    && "$VENV/bin/pybabel" compile --directory locales --domain messages \
    && "$VENV/bin/python" -m compileall -q app adapters bot brain rules migrations

FROM ${PYTHON_IMAGE}
RUN apt-get update && apt-get install --yes --no-install-recommends tini && rm -rf /var/lib/apt/lists/* \
    && useradd --create-home --uid 10001 companion && mkdir /data && chown companion /data
COPY --from=build /opt/companion /opt/companion
COPY --from=build /app /app
ENV PATH=/opt/companion/bin:$PATH \
    PYTHONUNBUFFERED=1 \
    COMPANION_DATA_DIR=/data \
    TELEGRAM_WEBHOOK_LISTEN=0.0.0.0:8443
WORKDIR /app
USER companion
VOLUME ["/data"]
# Telegram's webhook (TELEGRAM_WEBHOOK_LISTEN), and the metrics port that METRICS_LISTEN is to use.
EXPOSE 8443 9464
HEALTHCHECK --interval=60s --timeout=20s --start-period=60s --retries=3 CMD ["companion", "doctor"]
ENTRYPOINT ["tini", "--", "companion"]
CMD ["run"]
