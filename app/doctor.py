"""`companion doctor`'s checks that ask the services themselves: the database and its migrations, the model server
and its models, Telegram's getMe, Matrix's login. Each gives one `Finding` that says exactly what is wrong; a secret
shows no more than its first 4 characters. Plain blocking HTTP with short timeouts: the doctor runs alone."""

from __future__ import annotations

import json
import urllib.error
import urllib.request
from dataclasses import dataclass
from typing import Any

from bot.settings import Settings, masked
from brain.i18n import Renderer, Text, tr

TIMEOUT_S = 5.0
OK, WARN, FAIL = "ok", "warn", "fail"


@dataclass(frozen=True)
class Finding:
    status: str  # OK, WARN (works, but something is missing) or FAIL (doctor exits non-zero)
    message: Text  # shown in the installation's language (DEFAULT_LOCALE)

    @property
    def text(self) -> str:
        """The message in English (for logs and tests; `companion doctor` renders it in the installation's)."""
        return Renderer("en")(self.message)


def _call(url: str, *, data: dict[str, Any] | None = None, token: str | None = None) -> tuple[int, dict[str, Any]]:
    """(HTTP status, JSON body) of a GET, or a POST of `data`; OSError when nothing answers."""
    body = json.dumps(data).encode() if data is not None else None
    request = urllib.request.Request(url, data=body, method="POST" if body is not None else "GET")
    if body is not None:
        request.add_header("Content-Type", "application/json")
    if token is not None:
        request.add_header("Authorization", f"Bearer {token}")
    try:
        with urllib.request.urlopen(request, timeout=TIMEOUT_S) as response:
            status, raw = response.status, response.read()
    except urllib.error.HTTPError as refused:
        status, raw = refused.code, refused.read()
    try:
        parsed = json.loads(raw or b"{}")
    except ValueError:
        parsed = {}
    return status, parsed if isinstance(parsed, dict) else {}


def _unreachable(problem: Exception) -> str:
    reason = getattr(problem, "reason", None) or problem
    return f"{type(reason).__name__}: {reason}" if str(reason) else type(reason).__name__


def check_telegram(settings: Settings) -> Finding:
    """getMe with TELEGRAM_TOKEN: the token is accepted, and the bot's name."""
    assert settings.telegram_token is not None
    token = settings.telegram_token.get_secret_value()
    base = settings.telegram_base_url or "https://api.telegram.org"
    try:
        status, body = _call(f"{base}/bot{token}/getMe")
    except OSError as problem:
        return Finding(FAIL, tr("Telegram: the Bot API at {base} cannot be reached ({problem})", base=base,
                                problem=_unreachable(problem)))
    if status in (401, 404):
        return Finding(FAIL, tr("Telegram: TELEGRAM_TOKEN {token} was refused (getMe: {status} {description}); check "
                                "the token @BotFather gave you", token=masked(token), status=status,
                                description=body.get("description", "Unauthorized")))
    if status != 200 or not body.get("ok"):
        return Finding(FAIL, tr("Telegram: getMe answered {status} {description}", status=status,
                                description=body.get("description", "")))
    bot = body.get("result", {}).get("username")
    webhook, processes = settings.telegram_webhook_url, settings.telegram_processes
    if webhook and processes > 1:
        mode = tr("webhook at {url} in {count} processes", url=webhook, count=processes)
    elif webhook:
        mode = tr("webhook at {url}", url=webhook)
    elif processes > 1:
        mode = tr("long polling in {count} processes", count=processes)
    else:
        mode = tr("long polling")
    return Finding(OK, tr("Telegram: the token is accepted, the bot is @{bot} ({mode})", bot=bot, mode=mode))


def check_matrix(settings: Settings) -> Finding:
    """The homeserver answers, and MATRIX_ACCESS_TOKEN (whoami) or MATRIX_PASSWORD (a login, logged out again at
    once) is accepted for MATRIX_USER_ID."""
    assert settings.matrix_homeserver is not None and settings.matrix_user_id is not None
    home, user = settings.matrix_homeserver, settings.matrix_user_id
    api = f"{home}/_matrix/client/v3"
    try:
        status, _ = _call(f"{home}/_matrix/client/versions")
        if status != 200:
            return Finding(FAIL, tr("Matrix: {home} is no Matrix homeserver (/_matrix/client/versions answered "
                                    "{status}); check MATRIX_HOMESERVER", home=home, status=status))
        if settings.matrix_access_token is not None:
            token = settings.matrix_access_token.get_secret_value()
            status, body = _call(f"{api}/account/whoami", token=token)
            if status != 200:
                return Finding(FAIL, tr("Matrix: MATRIX_ACCESS_TOKEN {token} was refused by {home} ({status} "
                                        "{error})", token=masked(token), home=home, status=status,
                                        error=body.get("errcode", "")))
            if body.get("user_id") != user:
                return Finding(FAIL, tr("Matrix: MATRIX_ACCESS_TOKEN belongs to {owner}, not MATRIX_USER_ID {user}",
                                        owner=body.get("user_id"), user=user))
            return Finding(OK, tr("Matrix: logged in as {user} with MATRIX_ACCESS_TOKEN", user=user))
        assert settings.matrix_password is not None
        status, body = _call(f"{api}/login", data={
            "type": "m.login.password", "identifier": {"type": "m.id.user", "user": user},
            "password": settings.matrix_password.get_secret_value(), "initial_device_display_name": "companion doctor"})
        if status != 200:
            return Finding(FAIL, tr("Matrix: MATRIX_PASSWORD was refused for {user} by {home} ({status} {error})",
                                    user=user, home=home, status=status, error=body.get("errcode", "")))
        _call(f"{api}/logout", data={}, token=str(body.get("access_token")))  # no device left behind
        return Finding(OK, tr("Matrix: logged in as {user} with MATRIX_PASSWORD", user=user))
    except OSError as problem:
        return Finding(FAIL, tr("Matrix: nothing answers at MATRIX_HOMESERVER {home} ({problem})", home=home,
                                problem=_unreachable(problem)))


def _has_model(available: set[str], name: str) -> bool:
    return name in available or (":" not in name and f"{name}:latest" in available)


def check_models(settings: Settings) -> Finding:
    """The model server answers and has the models the settings name (`ollama pull` fetches a missing one)."""
    host = settings.ollama_host
    try:
        status, body = _call(f"{host}/api/tags")
    except OSError as problem:
        return Finding(WARN, tr("no model server at OLLAMA_HOST {host} ({problem}): commands and buttons work, free "
                                "text uses the rule-based parser only", host=host, problem=_unreachable(problem)))
    if status != 200:
        return Finding(FAIL, tr("the model server at {host} answered {status} to /api/tags; is OLLAMA_HOST an Ollama "
                                "server?", host=host, status=status))
    available = {str(m.get("name")) for m in body.get("models", []) if isinstance(m, dict)}
    wanted = {"OLLAMA_MODEL_PRIMARY": settings.ollama_model_primary, "OLLAMA_MODEL_FAST": settings.ollama_model_fast}
    if settings.embedder == "ollama":
        wanted["EMBEDDING_MODEL"] = settings.embedding_model
    missing = [f"{setting}={name}" for setting, name in wanted.items() if not _has_model(available, name)]
    if missing:
        if available:
            return Finding(FAIL, tr("the model server at {host} lacks {missing} (`ollama pull <name>` fetches it; it "
                                    "has: {available})", host=host, missing=", ".join(missing),
                                    available=", ".join(sorted(available))))
        return Finding(FAIL, tr("the model server at {host} lacks {missing} (`ollama pull <name>` fetches it; it has "
                                "no models)", host=host, missing=", ".join(missing)))
    return Finding(OK, tr("model server at {host} with {models}", host=host,
                          models=", ".join(sorted(set(wanted.values())))))


def check_migrations(libpq_uri: str, heads: set[str], known: set[str]) -> Finding:
    """The database answers, and its schema is at the migrations' head (without migrating it)."""
    import psycopg

    try:
        with psycopg.connect(libpq_uri, connect_timeout=int(TIMEOUT_S)) as connection:
            exists = connection.execute("SELECT to_regclass('alembic_version') IS NOT NULL").fetchone()
            current = set()
            if exists is not None and exists[0]:
                current = {row[0] for row in connection.execute("SELECT version_num FROM alembic_version")}
    except psycopg.Error as problem:
        first = str(problem).strip().splitlines()[0] if str(problem).strip() else type(problem).__name__
        return Finding(FAIL, tr("database: cannot connect ({problem}); check DATABASE_URL", problem=first))
    if current == heads:
        return Finding(OK, tr("database reachable and migrated"))
    if current - known:
        return Finding(FAIL, tr("database at migration {revision}, which this version does not know: a newer "
                                "companion migrated it", revision=", ".join(sorted(current - known))))
    if not current:
        return Finding(WARN, tr("database reachable but empty: the first start (or `companion migrate`) creates the "
                                "tables"))
    return Finding(WARN, tr("database at migration {revision}, the code at {head}: the next start (or `companion "
                            "migrate`) applies the rest", revision=", ".join(sorted(current)),
                            head=", ".join(sorted(heads))))
