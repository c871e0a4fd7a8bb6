"""Settings, all from environment variables (see .env.example); a .env file is read if present."""

from __future__ import annotations

import json
import os
from pathlib import Path

import dj_database_url
from redis.asyncio.retry import Retry
from redis.backoff import ExponentialBackoff

from config.env import envbool, envbytes, envfloat, envint, envsecret, envstr, load_dotenv

BASE_DIR = Path(__file__).resolve().parent.parent
load_dotenv(BASE_DIR / ".env")

DEBUG = envbool("DEBUG", False)
SECRET_KEY = envsecret("SECRET_KEY") or ("insecure-dev-key" if DEBUG else "")
if not SECRET_KEY:
    raise RuntimeError("SECRET_KEY is not set (make setup writes one to .env)")
ALLOWED_HOSTS = envstr("ALLOWED_HOSTS", "127.0.0.1,localhost").split(",")
CSRF_TRUSTED_ORIGINS = [o for o in envstr("CSRF_TRUSTED_ORIGINS").split(",") if o]

INSTALLED_APPS = [
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "channels",
    "django_celery_beat",  # schedules of runs, in the database (analyst.sessions.schedules)
    "sandboxes",
    "analyst",
]

MIDDLEWARE = [
    "django.middleware.security.SecurityMiddleware",
    # A strict Content-Security-Policy, a Permissions-Policy and nosniff on every response.
    "analyst.web.security_headers.SecurityHeaders",
    "analyst.api.errors.JsonErrorsUnderApi",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "analyst.audit.current_request.RememberRequest",  # who and from where, for the audit log
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "config.urls"
ASGI_APPLICATION = "config.asgi.application"
WSGI_APPLICATION = None

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "analyst.web.accounts.signup_mode",  # ANALYST_SIGNUP, for the pages' "Sign up" links
                "analyst.web.workspaces.switcher",  # the header's workspace switcher
                "analyst.web.bell.unread_notifications",  # the header's bell
                "analyst.web.oidc.single_sign_on",  # ANALYST_OIDC_NAME, for the "Sign in with" button
            ]
        },
    }
]

# No persistent connections (CONN_MAX_AGE 0): under ASGI each request's sync code runs in a
# thread of its own that ends with the request, and a kept connection was left open behind it.
DATABASES = {
    "default": dj_database_url.parse(envstr("DATABASE_URL", f"sqlite:///{BASE_DIR / 'var' / 'db.sqlite3'}"))
}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # Web and worker write to one file: WAL lets readers go on, IMMEDIATE avoids lock upgrades.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

REDIS_URL = envstr("REDIS_URL", "redis://127.0.0.1:6379/0")
# All of a process's WebSocket clients share one Redis list, which drops new messages once it
# holds `capacity` (default 100): a busy web process would lose live events (clients refill
# gaps from the log, but should rarely need to).
CHANNEL_LAYERS = {
    "default": {
        "BACKEND": "channels_redis.core.RedisChannelLayer",
        # channels_redis waits for messages in blocking pops of 5 s; redis-py (6 and later) gives
        # up on any read after 5 s by default, which failed idle waits and ended their consumers.
        # A Redis restart breaks every pooled connection: a command retries on a new one.
        "CONFIG": {
            "hosts": [
                {"address": REDIS_URL, "socket_timeout": 15, "retry": Retry(ExponentialBackoff(1, 0.05), 3)}
            ],
            "capacity": 2000,
        },
    }
}
# Live views (WebSockets) tick this often: each re-joins its groups (a Redis restart empties them),
# checks the layer still reaches it, replays from the log what it missed and sends a heartbeat;
# a page that hears nothing for 2.5 intervals reconnects.
ANALYST_HEARTBEAT_INTERVAL = envfloat("ANALYST_HEARTBEAT_INTERVAL", 10.0)
CELERY_BROKER_URL = REDIS_URL
CELERY_RESULT_BACKEND = None
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TASK_SERIALIZER = "json"
CELERY_TASK_ACKS_LATE = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_DEFAULT_QUEUE = envstr("CELERY_QUEUE", "celery")
# Celery beat reads its schedules from the database (django-celery-beat): the app's schedules of
# runs (analyst.sessions.schedules) make and change them; `make run` and compose start beat.
CELERY_BEAT_SCHEDULER = "django_celery_beat.schedulers:DatabaseScheduler"
# Each send's time saved at once (by default every 3 minutes), so that a restarted beat does not
# send again a time it sent already (for which the app would start nothing anyway).
CELERY_BEAT_SYNC_EVERY = 1

# Scheduled runs: a failed one is tried again this many times (a schedule may say otherwise), then
# reported by e-mail and webhook. A webhook that fails is tried ANALYST_WEBHOOK_RETRIES times more,
# with backoff; it may reach private addresses (loopback, the LAN) only when allowed here.
ANALYST_SCHEDULE_RETRIES = envint("ANALYST_SCHEDULE_RETRIES", 1)
ANALYST_WEBHOOK_RETRIES = envint("ANALYST_WEBHOOK_RETRIES", 5)
ANALYST_WEBHOOK_PRIVATE_ADDRESSES = envbool("ANALYST_WEBHOOK_PRIVATE_ADDRESSES", False)
# E-mail (Django's settings): sent by SMTP once EMAIL_HOST is set; without it, a line in the
# worker's log says what would have gone out, so nothing fails on a machine with no mail server.
EMAIL_HOST = envstr("EMAIL_HOST")
EMAIL_PORT = envint("EMAIL_PORT", 587)
EMAIL_HOST_USER = envstr("EMAIL_HOST_USER")
EMAIL_HOST_PASSWORD = envsecret("EMAIL_HOST_PASSWORD")
EMAIL_USE_TLS = envbool("EMAIL_USE_TLS", False)
EMAIL_TIMEOUT = 30
DEFAULT_FROM_EMAIL = envstr("DEFAULT_FROM_EMAIL", "analyst@localhost")
EMAIL_BACKEND = envstr(
    "EMAIL_BACKEND",
    "django.core.mail.backends.smtp.EmailBackend" if EMAIL_HOST else "analyst.lib.mail_log.EmailBackend",
)

LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "sessions"
LOGOUT_REDIRECT_URL = "login"

# Accounts. Password logins are throttled (counters in Redis, so every web process sees them):
# after ANALYST_LOGIN_FAILURES failures for one username, or ANALYST_LOGIN_ADDRESS_FAILURES from
# one client address, within ANALYST_LOGIN_WINDOW seconds, further attempts are refused (429)
# until the window passes. The address is REMOTE_ADDR, or the last address in the header named by
# ANALYST_TRUSTED_PROXY_HEADER (such as X-Forwarded-For) when a proxy of yours sets it.
AUTHENTICATION_BACKENDS = [
    "analyst.web.accounts.ThrottledModelBackend",
    "analyst.accounts.oidc_backend.OIDCBackend",  # single sign-on; signs in no one until configured
]
ANALYST_LOGIN_FAILURES = envint("ANALYST_LOGIN_FAILURES", 10)
ANALYST_LOGIN_ADDRESS_FAILURES = envint("ANALYST_LOGIN_ADDRESS_FAILURES", 50)
ANALYST_LOGIN_WINDOW = envint("ANALYST_LOGIN_WINDOW", 900)
ANALYST_TRUSTED_PROXY_HEADER = envstr("ANALYST_TRUSTED_PROXY_HEADER")
# The audit log (analyst/audit) keeps an entry this many days; Celery beat prunes older ones daily.
ANALYST_AUDIT_DAYS = envint("ANALYST_AUDIT_DAYS", 365)
CELERY_BEAT_SCHEDULE = {
    "prune the audit log": {"task": "analyst.tasks.prune_audit_log", "schedule": 24 * 3600.0},
}
_validators = "django.contrib.auth.password_validation."
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": _validators + "UserAttributeSimilarityValidator"},
    {"NAME": _validators + "MinimumLengthValidator", "OPTIONS": {"min_length": 10}},
    {"NAME": _validators + "CommonPasswordValidator"},
    {"NAME": _validators + "NumericPasswordValidator"},
]
# Who may make an account: open (anyone), invite (with a code from `manage.py invite`), closed.
ANALYST_SIGNUP = envstr("ANALYST_SIGNUP", "open").strip().lower()
if ANALYST_SIGNUP not in ("open", "invite", "closed"):
    raise RuntimeError(f"ANALYST_SIGNUP is {ANALYST_SIGNUP!r}; it must be open, invite or closed")
# Single sign-on with OpenID Connect (authorization code with PKCE; analyst/accounts/oidc_*.py),
# shown on the login page as "Sign in with ANALYST_OIDC_NAME" once the issuer and client are set.
# The provider's endpoints come from ISSUER/.well-known/openid-configuration (fetched once per
# process); ID tokens are RS256. An account is made at a first sign-in (whatever ANALYST_SIGNUP
# says). ANALYST_OIDC_GROUP_ROLES ("group=Workspace name:role,...") gives members of a provider's
# group (from the claim ANALYST_OIDC_GROUPS_CLAIM) a role in a workspace, made when missing; set at
# every sign-in, so a workspace named there has exactly the members the provider's groups give.
ANALYST_OIDC_ISSUER = envstr("ANALYST_OIDC_ISSUER").rstrip("/")
ANALYST_OIDC_CLIENT_ID = envstr("ANALYST_OIDC_CLIENT_ID")
ANALYST_OIDC_CLIENT_SECRET = envsecret("ANALYST_OIDC_CLIENT_SECRET")
ANALYST_OIDC_NAME = envstr("ANALYST_OIDC_NAME", "single sign-on")
ANALYST_OIDC_SCOPES = envstr("ANALYST_OIDC_SCOPES", "openid email profile")
ANALYST_OIDC_GROUPS_CLAIM = envstr("ANALYST_OIDC_GROUPS_CLAIM", "groups")
ANALYST_OIDC_GROUP_ROLES: list[tuple[str, str, str]] = []  # (group, workspace name, role)
for _entry in filter(None, (e.strip() for e in envstr("ANALYST_OIDC_GROUP_ROLES").split(","))):
    _group, _, _place = _entry.partition("=")
    _workspace, _, _role = _place.rpartition(":")
    _mapping = (_group.strip(), _workspace.strip(), _role.strip())
    if not (_mapping[0] and _mapping[1] and _mapping[2] in ("owner", "admin", "editor", "viewer")):
        raise RuntimeError(
            f"ANALYST_OIDC_GROUP_ROLES has {_entry!r}; each entry must be group=Workspace name:role,"
            " the role owner, admin, editor or viewer"
        )
    ANALYST_OIDC_GROUP_ROLES.append(_mapping)
if bool(ANALYST_OIDC_ISSUER) != bool(ANALYST_OIDC_CLIENT_ID):
    raise RuntimeError("ANALYST_OIDC_ISSUER and ANALYST_OIDC_CLIENT_ID are set together, or neither")
# Days an invitation into a workspace (a link, or an e-mail holding it) stays usable.
ANALYST_INVITATION_DAYS = envint("ANALYST_INVITATION_DAYS", 7)
# Served over HTTPS (behind a proxy that sets X-Forwarded-Proto): Secure cookies, HSTS for a year,
# http:// redirected to https:// (except the probes below, which call the app directly).
ANALYST_HTTPS = envbool("ANALYST_HTTPS", False)
if ANALYST_HTTPS:
    SESSION_COOKIE_SECURE = CSRF_COOKIE_SECURE = True
    SECURE_HSTS_SECONDS = 365 * 24 * 3600
    SECURE_HSTS_INCLUDE_SUBDOMAINS = True
    SECURE_SSL_REDIRECT = True
    SECURE_REDIRECT_EXEMPT = [r"^livez$", r"^healthz$", r"^metrics$"]
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = BASE_DIR / "var" / "static"
MEDIA_ROOT = Path(envstr("MEDIA_ROOT", str(BASE_DIR / "var" / "media")))
# Request bodies and uploads are spooled on MEDIA_ROOT's filesystem, so that storing an upload is a
# rename (a copy from /tmp on another filesystem took 8-9 s per GB).
FILE_UPLOAD_TEMP_DIR = str(MEDIA_ROOT / ".incoming")
# Bodies are held to their limit as they arrive (analyst/uploads/upload_limit.py): config/asgi.py's
# BodyLimit cuts a body past ANALYST_MAX_UPLOAD (uploads) or DATA_UPLOAD_MAX_MEMORY_SIZE (the rest)
# with a 413, and the first upload handler stops a multipart parse whose files pass the limit.
FILE_UPLOAD_HANDLERS = [
    "analyst.uploads.upload_limit.UploadLimitHandler",
    "django.core.files.uploadhandler.MemoryFileUploadHandler",
    "django.core.files.uploadhandler.TemporaryFileUploadHandler",
]
MEDIA_URL = "media/"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

# The sandbox service: where it listens (and where the SDK finds it), and how it isolates code.
SANDBOXD_URL = envstr("SANDBOXD_URL", "http://127.0.0.1:8787")
SANDBOXD_TOKEN = envsecret("SANDBOXD_TOKEN")
# Several sandboxd hosts (base URLs, comma-separated): a new session goes to the healthy one with
# the most memory available, and stays there; empty: SANDBOXD_URL alone.
SANDBOXD_HOSTS = [h.strip().rstrip("/") for h in envstr("SANDBOXD_HOSTS").split(",") if h.strip()]
SANDBOXD_DRIVER = envstr("SANDBOXD_DRIVER", "auto")
# With bubblewrap and sandboxd as root, kernels are forked from a process per template that has
# imported its modules once (sandboxes/forkserver): shared pages, and no import at each start.
SANDBOXD_FORK_SERVER = envbool("SANDBOXD_FORK_SERVER", True)
# gVisor's platform (how the Sentry traps the guest's system calls): systrap works without KVM and
# is the fastest here; kvm hangs under nested virtualisation; ptrace is the slow fallback.
SANDBOXD_GVISOR_PLATFORM = envstr("SANDBOXD_GVISOR_PLATFORM", "systrap")
SANDBOXD_TEMPLATES_DIR = Path(envstr("SANDBOXD_TEMPLATES_DIR", str(BASE_DIR / "var" / "templates")))
SANDBOXD_DATA_DIR = Path(envstr("SANDBOXD_DATA_DIR", str(BASE_DIR / "var" / "sandboxd")))
SANDBOXD_POOL_SIZE = envint("SANDBOXD_POOL_SIZE", 2)
SANDBOXD_POOL_MAX = envint("SANDBOXD_POOL_MAX", 8)
SANDBOXD_POOL_IDLE = envfloat("SANDBOXD_POOL_IDLE", 120.0)
SANDBOXD_POOL_WARM_UP = envbool("SANDBOXD_POOL_WARM_UP", True)
# After a sandbox makes a new code context, a kernel is started ahead for its next one and kept
# this many seconds unused (0: none; sandboxes/server/spare_kernel.py).
SANDBOXD_CONTEXT_SPARE = envfloat("SANDBOXD_CONTEXT_SPARE", 120.0)
SANDBOXD_MAX_SANDBOXES = envint("SANDBOXD_MAX_SANDBOXES", 64)
# An idle sandbox is paused (its kernels stopped, their state kept on disk) after
# SANDBOXD_IDLE_PAUSE seconds, and resumed on its next use; one running a thread the user started
# waits, at most SANDBOXD_PAUSE_HOLD_LIMIT seconds. Below SANDBOXD_MEMORY_RESERVE of available
# memory, the least recently used idle sandboxes are paused to make room.
SANDBOXD_IDLE_PAUSE = envfloat("SANDBOXD_IDLE_PAUSE", 600.0)
SANDBOXD_PAUSE_HOLD_LIMIT = envfloat("SANDBOXD_PAUSE_HOLD_LIMIT", 3600.0)
SANDBOXD_MEMORY_RESERVE = envbytes("SANDBOXD_MEMORY_RESERVE", 512 << 20)
# A sandbox whose processes use SANDBOXD_IDLE_CPU_SECONDS of CPU within SANDBOXD_IDLE_CPU_WINDOW
# seconds while no cell runs (a process or thread a cell left spinning) is paused, which stops
# them and keeps its state; its next cell says so. 0: no limit.
SANDBOXD_IDLE_CPU_SECONDS = envfloat("SANDBOXD_IDLE_CPU_SECONDS", 30.0)
SANDBOXD_IDLE_CPU_WINDOW = envfloat("SANDBOXD_IDLE_CPU_WINDOW", 60.0)
SANDBOXD_OPEN_FILES = envint("SANDBOXD_OPEN_FILES", 1 << 20)
SANDBOXD_DEFAULT_TTL = envint("SANDBOXD_DEFAULT_TTL", 300)
SANDBOXD_MAX_TTL = envint("SANDBOXD_MAX_TTL", 24 * 3600)
SANDBOXD_MEMORY_LIMIT = envbytes("SANDBOXD_MEMORY_LIMIT", 2 << 30)
SANDBOXD_PROCESS_LIMIT = envint("SANDBOXD_PROCESS_LIMIT", 256)
SANDBOXD_DISK_LIMIT = envbytes("SANDBOXD_DISK_LIMIT", 4 << 30)
SANDBOXD_CELL_TIMEOUT = envfloat("SANDBOXD_CELL_TIMEOUT", 300.0)
# Seconds an interrupted cell (Stop, a timeout) may take to end before its kernel is restarted;
# 0: the driver's own (3 bubblewrap, 10 gVisor, whose signals travel further).
SANDBOXD_INTERRUPT_GRACE = envfloat("SANDBOXD_INTERRUPT_GRACE", 0.0)
SANDBOXD_STDOUT_LIMIT = envbytes("SANDBOXD_STDOUT_LIMIT", 1 << 20)
SANDBOXD_MAX_UPLOAD = envbytes("SANDBOXD_MAX_UPLOAD", 2 << 30)
# sandboxd against its own kernels: the largest message it takes from one, how many it queues
# per socket (so it holds about (queue + 2) x the largest message per kernel socket), what one
# cell's results and errors may hold (then one marker), a listing's page.
SANDBOXD_MAX_KERNEL_MESSAGE = envbytes("SANDBOXD_MAX_KERNEL_MESSAGE", 8 << 20)
SANDBOXD_KERNEL_QUEUE = envint("SANDBOXD_KERNEL_QUEUE", 2)
SANDBOXD_RESULTS_LIMIT = envbytes("SANDBOXD_RESULTS_LIMIT", 16 << 20)
SANDBOXD_LIST_LIMIT = envint("SANDBOXD_LIST_LIMIT", 1000)
# Snapshots (kernel state and files) on local disk; a snapshot larger than the limit is refused.
SANDBOXD_SNAPSHOT_DIR = Path(envstr("SANDBOXD_SNAPSHOT_DIR", str(SANDBOXD_DATA_DIR / "snapshots")))
SANDBOXD_SNAPSHOT_MAX_BYTES = envbytes("SANDBOXD_SNAPSHOT_MAX_BYTES", 2 << 30)
# Seconds a restore (a fork, a resume) may spend unpickling a context's variables, large ones
# loaded later aside; a variable still unpickling then is left out and named.
SANDBOXD_RESTORE_LIMIT = envfloat("SANDBOXD_RESTORE_LIMIT", 5.0)
# Egress (a session's connections, docs/connections.md): a sandbox reaches only the endpoints of
# the connections attached to its session, each through a forwarder sandboxd opens, and
# HTTP(S) through sandboxd's allow-listing proxy. SANDBOXD_EGRESS_ALLOW: hosts (host or host:port,
# comma-separated) every sandbox may reach through the proxy, say a package index mirror. An
# endpoint that resolves to a loopback address is refused unless SANDBOXD_EGRESS_LOOPBACK (a
# database on sandboxd's own machine, in development and the tests); link-local addresses (the
# cloud's metadata service) are refused always.
SANDBOXD_EGRESS_ALLOW = [h.strip() for h in envstr("SANDBOXD_EGRESS_ALLOW").split(",") if h.strip()]
SANDBOXD_EGRESS_LOOPBACK = envbool("SANDBOXD_EGRESS_LOOPBACK", False)
SANDBOXD_SNAPSHOT_STORE = envstr("SANDBOXD_SNAPSHOT_STORE", "local")
SANDBOXD_S3_BUCKET = envstr("SANDBOXD_S3_BUCKET", "")
SANDBOXD_S3_PREFIX = envstr("SANDBOXD_S3_PREFIX", "snapshots/")
SANDBOXD_S3_ENDPOINT_URL = envstr("SANDBOXD_S3_ENDPOINT_URL", "")
SANDBOXD_S3_REGION = envstr("SANDBOXD_S3_REGION", "")
# When sandboxd runs as root, each sandbox runs as an unprivileged host user of its own (never
# root), from SANDBOXD_UID_BASE to SANDBOXD_UID_BASE + SANDBOXD_UID_COUNT - 1, its gid the same
# number: the kernel's per-user budgets are not shared. SANDBOXD_SANDBOX_UID is the old name of
# the base. SANDBOXD_CPU_LIMIT: cores each sandbox's kernel may use (0: no limit), weights equal.
SANDBOXD_UID_BASE = envint("SANDBOXD_UID_BASE", envint("SANDBOXD_SANDBOX_UID", 61000))
SANDBOXD_UID_COUNT = envint("SANDBOXD_UID_COUNT", 4096)
SANDBOXD_CPU_LIMIT = envfloat("SANDBOXD_CPU_LIMIT", 1.0)
# Host variables a kernel may inherit: not secrets, only what its libraries need on this CPU.
SANDBOXD_KERNEL_ENV = {
    name: os.environ[name] for name in ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE") if name in os.environ
}

# The analyst agent.
ANALYST_DEFAULT_MODEL = envstr("ANALYST_DEFAULT_MODEL", "anthropic/claude-sonnet-4-5")
ANALYST_MODELS = [
    m.strip()
    for m in envstr("ANALYST_MODELS", "anthropic/claude-sonnet-4-5,openai/gpt-4.1,ollama/qwen2.5").split(",")
    if m.strip()
]
ANALYST_MAX_TOOL_ROUNDS = envint("ANALYST_MAX_TOOL_ROUNDS", 12)
ANALYST_MAX_TOKENS = envint("ANALYST_MAX_TOKENS", 4096)
ANALYST_CELL_TIMEOUT = envfloat("ANALYST_CELL_TIMEOUT", 120.0)
# Connections: each SQL statement's time limit in seconds, and the rows a result may bring into
# pandas (a notice says when one was cut). Their secrets are sealed at rest with
# ANALYST_CONNECTIONS_KEY (a Fernet key; or ANALYST_CONNECTIONS_KEY_FILE, a file holding it; more
# than one, comma-separated, while rotating: the first seals, any opens). Without either, a key
# derived from SECRET_KEY. `manage.py rotate_connections_key` seals every secret with the first.
ANALYST_SQL_TIMEOUT = envfloat("ANALYST_SQL_TIMEOUT", 60.0)
ANALYST_SQL_MAX_ROWS = envint("ANALYST_SQL_MAX_ROWS", 1_000_000)
ANALYST_CONNECTIONS_KEY = envsecret("ANALYST_CONNECTIONS_KEY")
# How long a model may take to start answering (its headers), then to send more of its answer,
# before the attempt is given up (the first is retried): far under the turn's own limit.
ANALYST_MODEL_FIRST_BYTE_TIMEOUT = envfloat("ANALYST_MODEL_FIRST_BYTE_TIMEOUT", 30.0)
ANALYST_MODEL_IDLE_TIMEOUT = envfloat("ANALYST_MODEL_IDLE_TIMEOUT", 60.0)
ANALYST_TURN_TIMEOUT = envint("ANALYST_TURN_TIMEOUT", 900)
# How long a model's cell waits for its owner's Run or Reject (sessions that approve cells) before
# its turn ends unrun. The wait counts toward ANALYST_TURN_TIMEOUT, which ends it sooner if it comes first.
ANALYST_APPROVAL_TIMEOUT = envint("ANALYST_APPROVAL_TIMEOUT", 600)
# The longest question or cell accepted (characters), from the page, the API and MCP alike.
ANALYST_MAX_INPUT = envint("ANALYST_MAX_INPUT", 1 << 20)
# How much of a cell's output the model sees (the UI keeps it whole).
ANALYST_MODEL_OUTPUT_LIMIT = envint("ANALYST_MODEL_OUTPUT_LIMIT", 8000)
# How much of one cell's output (stdout, stderr, results, errors) the event log stores, which every
# page load replays; then one notice. Large charts and tables are artifacts, counted as their links.
ANALYST_CELL_EVENT_BYTES = envbytes("ANALYST_CELL_EVENT_BYTES", 2 << 20)
# The newest messages (stored rows: questions, answers, tool calls, results) the model gets per
# turn; older ones are left out with a note, from a turn's start on.
ANALYST_HISTORY_LIMIT = envint("ANALYST_HISTORY_LIMIT", 60)
ANALYST_SANDBOX_TTL = envint("ANALYST_SANDBOX_TTL", 24 * 3600)
# After each turn that ran code, snapshot the kernel so an expired sandbox (or a restarted
# sandboxd) comes back with its variables; keep this many per session, the newest: one per turn
# that ran code, which Regenerate and a branch (an edited question) restore the state before.
# A question older than the last ANALYST_SNAPSHOTS_KEPT such turns branches only into an empty
# kernel (with the files), and is asked again in the current kernel.
ANALYST_SNAPSHOT_AFTER_TURN = envbool("ANALYST_SNAPSHOT_AFTER_TURN", True)
ANALYST_SNAPSHOTS_KEPT = envint("ANALYST_SNAPSHOTS_KEPT", 10)
ANALYST_MAX_UPLOAD = envbytes("ANALYST_MAX_UPLOAD", 1 << 30)
# The largest CSV a table's grid downloads (the whole frame, filtered and sorted); past it, 413.
ANALYST_GRID_CSV_MAX_BYTES = envbytes("ANALYST_GRID_CSV_MAX_BYTES", 256 << 20)
# MCP (/mcp and `manage.py mcp`): a file uploaded as base64 in a tool call may be this big (larger
# ones go through the page or POST /api/sessions/<id>/files); read_file returns at most
# ANALYST_MCP_READ_LIMIT bytes of a file; session links point at ANALYST_PUBLIC_URL over stdio (over
# HTTP, at the address the client used).
ANALYST_MCP_MAX_UPLOAD = envbytes("ANALYST_MCP_MAX_UPLOAD", 32 << 20)
ANALYST_MCP_READ_LIMIT = envbytes("ANALYST_MCP_READ_LIMIT", 4 << 20)
# MCP sessions over HTTP (Mcp-Session-Id) each web process holds open: at most
# ANALYST_MCP_SESSIONS_PER_USER per user (past it, 429) and ANALYST_MCP_SESSIONS in all (503); one
# with no request for ANALYST_MCP_SESSION_IDLE seconds is closed (its id then answers 404; 0 for
# each: no bound).
ANALYST_MCP_SESSIONS_PER_USER = envint("ANALYST_MCP_SESSIONS_PER_USER", 10)
ANALYST_MCP_SESSIONS = envint("ANALYST_MCP_SESSIONS", 1000)
ANALYST_MCP_SESSION_IDLE = envfloat("ANALYST_MCP_SESSION_IDLE", 900.0)
ANALYST_PUBLIC_URL = envstr("ANALYST_PUBLIC_URL", "http://127.0.0.1:8000").rstrip("/")
# How the sandbox reads an upload to describe it: a zip is unpacked up to max_unpacked_bytes in
# all, each member at most max_ratio times its packed size; a workbook's first max_sheets sheets
# are described; types and null counts come from the first sample_rows rows; the whole reading
# stops after time_budget seconds (what is left is estimated, and said to be).
ANALYST_READING_LIMITS = {
    "max_unpacked_bytes": envbytes("ANALYST_UNPACK_MAX", 2 << 30),
    "max_ratio": envint("ANALYST_UNPACK_MAX_RATIO", 200),  # a zip bomb packs ~1,000 to 1
    "max_members": envint("ANALYST_UNPACK_MAX_FILES", 100),
    "max_sheets": envint("ANALYST_READ_MAX_SHEETS", 30),
    "sample_bytes": 4 << 20,
    "sample_rows": envint("ANALYST_READ_SAMPLE_ROWS", 10_000),
    "preview_rows": 10,
    "sample_values": 3,
    "time_budget": envfloat("ANALYST_READ_TIME_BUDGET", 20.0),
}
# An upload's placement into the sandbox is tried this often while sandboxd is away, waiting
# ANALYST_PLACE_BACKOFF seconds and doubling (at most a minute), before the file is marked failed.
ANALYST_PLACE_TRIES = envint("ANALYST_PLACE_TRIES", 5)
ANALYST_PLACE_BACKOFF = envfloat("ANALYST_PLACE_BACKOFF", 4.0)
# Assistant text is sent to clients in pieces at most this often.
ANALYST_DELTA_INTERVAL = envfloat("ANALYST_DELTA_INTERVAL", 0.075)
# A running turn renews its lease this often (seconds); a lapsed lease means its worker died.
ANALYST_TURN_LEASE = envint("ANALYST_TURN_LEASE", 15)
# Every worker's reconciler runs this often (seconds): it ends turns whose lease lapsed, sends
# again a queued turn sent ANALYST_REQUEUE_AFTER ago and not started (its message was lost), and
# ends one queued longer than ANALYST_QUEUED_MAX, saying why.
ANALYST_RECONCILE_INTERVAL = envfloat("ANALYST_RECONCILE_INTERVAL", 5.0)
ANALYST_REQUEUE_AFTER = envfloat("ANALYST_REQUEUE_AFTER", 30.0)
ANALYST_QUEUED_MAX = envint("ANALYST_QUEUED_MAX", 600)
# A message is a nudge and its row the truth (analyst/dispatch.py): once a worker takes one it is
# gone from Redis (no ack emulation), and the reconciler sends again the work of a worker that
# died holding it. With kombu's ack emulation, a worker that held a message when Redis went down
# died closing the lost connection (Celery 5.7 restored the message through a client it had just
# dropped: "Unrecoverable error"), and nothing sent meanwhile ever ran; now it logs that the
# message could not be restored and lives on. Publishing gives up within about a second when
# Redis is down: the row is kept and the reconciler sends it later.
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "ack_emulation": False,
    "socket_connect_timeout": 3,
}
CELERY_TASK_PUBLISH_RETRY_POLICY = {
    "max_retries": 2,
    "interval_start": 0,
    "interval_step": 0.2,
    "interval_max": 0.5,
}
# Usage: USD per million input and output tokens by model route ("ollama/*" prices a provider's
# every model); ANALYST_PRICES, a JSON object of the same shape, adds to or overrides these (null
# unprices one). A model without a price shows its tokens and "cost unknown".
ANALYST_PRICES: dict[str, dict[str, float] | None] = {
    "anthropic/claude-sonnet-4-5": {"input": 3, "output": 15},
    "openai/gpt-4.1": {"input": 2, "output": 8},
    "ollama/*": {"input": 0, "output": 0},
    **json.loads(envstr("ANALYST_PRICES", "{}")),
}
for _route, _price in ANALYST_PRICES.items():
    if _price is not None and not (
        isinstance(_price, dict)
        and all(isinstance(_price.get(k), int | float) and _price[k] >= 0 for k in ("input", "output"))
    ):
        raise RuntimeError(f'ANALYST_PRICES[{_route!r}] must be {{"input": <USD>, "output": <USD>}} or null')
# Input plus output tokens a user's chat turns may use per UTC day; 0 means no budget.
ANALYST_DAILY_TOKEN_BUDGET = envint("ANALYST_DAILY_TOKEN_BUDGET", 0)
# Each user's share of the machine (0: no limit); an admin may set other figures for one user
# (analyst.models.UserLimits, in the admin site).
ANALYST_LIMIT_CONCURRENT_TURNS = envint("ANALYST_LIMIT_CONCURRENT_TURNS", 3)
ANALYST_LIMIT_CELLS_PER_MINUTE = envint("ANALYST_LIMIT_CELLS_PER_MINUTE", 60)
ANALYST_LIMIT_STORED_BYTES = envbytes("ANALYST_LIMIT_STORED_BYTES", 5 << 30)
ANALYST_LIMIT_LIVE_SANDBOXES = envint("ANALYST_LIMIT_LIVE_SANDBOXES", 3)
# Requests of one user's saved while the task queue was unreachable, waiting for it (they do not
# count as running turns until sent); past it, a new one is refused.
ANALYST_LIMIT_WAITING_TURNS = envint("ANALYST_LIMIT_WAITING_TURNS", 3)
# What the sessions of a team workspace may store together (uploads, charts, saved kernels), on
# top of each user's limit; its admins may set another figure for it (0: no limit).
ANALYST_WORKSPACE_STORAGE = envbytes("ANALYST_WORKSPACE_STORAGE", 10 << 30)

# Operations: /healthz and /metrics.
# Workers refresh a heartbeat in Redis this often (seconds); /healthz fails after three missed.
ANALYST_WORKER_BEAT = envfloat("ANALYST_WORKER_BEAT", 10.0)
# A turn queued longer than this (seconds) counts in analyst_turns_queued_too_long.
ANALYST_QUEUED_TOO_LONG = envfloat("ANALYST_QUEUED_TOO_LONG", 60.0)
# Keys of heartbeats and metrics in Redis start with this, so deployments may share a Redis.
ANALYST_REDIS_PREFIX = envstr("ANALYST_REDIS_PREFIX", "analyst")
# When set, /metrics needs `Authorization: Bearer <token>`; unset, it is open (keep it internal).
METRICS_TOKEN = envsecret("METRICS_TOKEN")

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": envstr("LOG_LEVEL", "INFO")},
    # httpx logs every request at INFO: one line per cell and per model call is noise.
    "loggers": {"httpx": {"level": "WARNING"}, "httpcore": {"level": "WARNING"}},
}
