# Companion: slim Python base, non-root user, `companion run` as entry point.
FROM python:3.11-slim

ENV PYTHONDONTWRITEBYTECODE=1 PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 \
    COMPANION_DATA_DIR=/data

RUN useradd --create-home --uid 10001 companion && mkdir -p /data && chown companion /data
WORKDIR /app
COPY pyproject.toml requirements.lock README.md ./
COPY brain ./brain
COPY app ./app
COPY bot ./bot
COPY adapters ./adapters
COPY rules ./rules
COPY benchmarks ./benchmarks
COPY migrations ./migrations
COPY locales ./locales
RUN pip install -r requirements.lock && pip install --no-deps -e . && pybabel compile --directory locales --domain messages

USER companion
VOLUME ["/data"]
HEALTHCHECK --interval=60s --timeout=20s --start-period=30s --retries=3 CMD ["companion", "doctor"]
ENTRYPOINT ["companion"]
CMD ["run"]
