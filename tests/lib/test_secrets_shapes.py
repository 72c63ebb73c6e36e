"""Issue 27: secrets in everyday shapes, the provider formats the first tables lacked, the
prefixes a rendering puts before a line, and code that only looks like an assignment.

Every token here is built from a seeded generator in its provider's published format
(prefix, alphabet, length); none is real.
"""

from __future__ import annotations

import base64
import os
import random
import string

import pytest

from ctxtools.secrets import redact, secret_filename, secret_path
from ctxtools.secrets.names import secret_content
from ctxtools.secrets.providers import PROVIDERS

ALNUM = string.ascii_letters + string.digits
URLSAFE = ALNUM + "_-"
HEX = "0123456789abcdef"
UPPER = string.ascii_uppercase + string.digits
LOWER = string.ascii_lowercase + string.digits


def rand(n: int, alphabet: str = ALNUM, seed: int = 0) -> str:
    rng = random.Random(f"shapes:{seed}:{n}:{alphabet}")
    return "".join(rng.choice(alphabet) for _ in range(n))


def uuid(seed: int = 0) -> str:
    h = rand(32, HEX, seed)
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def marker(kind: str) -> str:
    return f"[secret redacted: {kind}]"


PROVIDER_TOKENS = [
    ("Django secret key", "django-insecure-" + rand(50, LOWER + "!@#$%^&*(-_=+)")),
    (
        "1Password secret key",
        "A3-" + rand(6, UPPER) + "-" + "-".join(rand(5, UPPER, k) for k in range(5)),
    ),
    ("1Password token", "ops_eyJ" + rand(120, ALNUM + "+/")),
    ("Alibaba access key", "LTAI" + rand(20)),
    ("Artifactory key", "AKCp" + rand(69)),
    ("Artifactory token", "cmVmdG" + rand(58)),
    ("Atlassian token", "ATATT3xFfGF0" + rand(180, URLSAFE)),
    ("Bitbucket token", "ATCTT3xFfGN0" + rand(180, URLSAFE)),
    ("AWS Bedrock key", "ABSK" + rand(120, ALNUM + "+/")),
    (
        "AWS Bedrock key",
        "bedrock-api-key-"
        + base64.b64encode(b"bedrock.amazonaws.com/?Action=x" + rand(40).encode()).decode(),
    ),
    ("Azure AD client secret", "aB7" + "8Q~" + rand(34, ALNUM + "_~.")),
    ("Cloudflare origin CA key", "v1.0-" + rand(24, HEX) + "-" + rand(146, HEX)),
    ("Dropbox token", "sl." + rand(135, URLSAFE)),
    ("Dropbox token", rand(11, LOWER) + "AAAAAAAAAA" + rand(43, LOWER)),
    ("Grafana token", "glc_" + rand(80, ALNUM + "+/") + "=="),
    ("Grafana token", "eyJrIjoi" + rand(60, ALNUM) + "=="),
    ("Terraform token", rand(14) + ".atlasv1." + rand(67, URLSAFE)),
    ("Heroku key", "HRKU-AA" + rand(58, URLSAFE)),
    (
        "Teams webhook",
        "https://acme.webhook.office.com/webhookb2/"
        + uuid()
        + "@"
        + uuid(1)
        + "/IncomingWebhook/"
        + rand(32, HEX)
        + "/"
        + uuid(2),
    ),
    ("Notion token", "ntn_" + rand(11, string.digits) + rand(35)),
    ("OpenShift token", "sha256~" + rand(43, URLSAFE)),
    ("Perplexity key", "pplx-" + rand(48)),
    ("Groq key", "gsk_" + rand(52)),
    ("xAI key", "xai-" + rand(80)),
    ("Replicate token", "r8_" + rand(37)),
    ("OpenRouter key", "sk-or-v1-" + rand(64, HEX)),
    ("API key (sk-)", "sk-" + rand(32, HEX)),
    ("LangSmith key", "lsv2_pt_" + rand(32, HEX) + "_" + rand(10, HEX)),
    ("LangSmith key", "lsv2_sk_" + rand(32, HEX, 1) + "_" + rand(10, HEX, 1)),
    ("Tavily key", "tvly-" + rand(32)),
    ("Tavily key", "tvly-dev-" + rand(32, ALNUM, 1)),
    ("Firecrawl key", "fc-" + rand(32, HEX)),
    ("Pinecone key", "pcsk_" + rand(5) + "_" + rand(64)),
    ("Google OAuth token", "ya29." + rand(150, URLSAFE)),
    (
        "Discord webhook",
        "https://discord.com/api/webhooks/1184923847561234567/" + rand(68, URLSAFE),
    ),
    ("PlanetScale token", "pscale_tkn_" + rand(43, URLSAFE)),
    ("RubyGems key", "rubygems_" + rand(48, HEX)),
    ("Brevo key", "xkeysib-" + rand(64, HEX) + "-" + rand(16)),
    (
        "Sentry token",
        "sntrys_eyJpYXQiOjE3MDAwMDAwMDAsInVybCI6Imh0dHBzOi8vc2VudHJ5LmlvIn0_"
        + rand(43, ALNUM + "+/"),
    ),
    ("Sentry token", "sntryu_" + rand(64, HEX)),
    ("Slack token", "xoxe.xoxp-1-" + rand(150, UPPER)),
    ("Slack token", "xoxe-1-" + rand(140, ALNUM)),
    ("Square token", "EAAA" + rand(60, URLSAFE)),
    ("Facebook token", "EAAB" + rand(120)),
    ("Vault token", "s." + rand(23) + "7"),
    ("Adobe client secret", "p8e-" + rand(32)),
    ("Clojars token", "CLOJARS_" + rand(60, LOWER)),
    ("Defined Networking token", "dnkey-" + rand(26, LOWER) + "-" + rand(52, LOWER)),
    ("Duffel token", "duffel_live_" + rand(43, URLSAFE)),
    ("EasyPost key", "EZAK" + rand(54)),
    ("Flutterwave key", "FLWSECK_TEST-" + rand(32, HEX) + "-X"),
    ("Fly.io token", "fm2_" + rand(200, ALNUM + "+/") + "=="),
    ("Frame.io token", "fio-u-" + rand(64, URLSAFE)),
    ("GitLab token", "GR1348941" + rand(20, URLSAFE)),
    ("GitLab session", "_gitlab_session=" + rand(32, LOWER)),
    ("Hugging Face token", "api_org_" + rand(34, string.ascii_letters)),
    ("Harness token", "pat." + rand(22, URLSAFE) + "." + rand(24) + "." + rand(20)),
    ("Infracost key", "ico-" + rand(32)),
    ("Intra42 secret", "s-s4t2ud-" + rand(64, HEX)),
    ("Mailchimp key", rand(32, HEX) + "-us12"),
    ("Mailgun key", "pubkey-" + rand(32, HEX)),
    ("Mapbox token", "pk." + rand(60) + "." + rand(22)),
    ("MaxMind key", rand(6) + "_" + rand(29) + "_mmk"),
    ("New Relic key", "NRJS-" + rand(19, HEX)),
    ("New Relic key", "NRII-" + rand(32, ALNUM + "-")),
    ("Octopus key", "API-" + rand(26, UPPER)),
    ("Plaid token", "access-production-" + uuid(3)),
    ("Prefect key", "pnu_" + rand(36)),
    ("ReadMe key", "rdme_" + rand(70, LOWER)),
    ("Scalingo token", "tk-us-" + rand(48, URLSAFE)),
    ("SettleMint token", "sm_pat_" + rand(16)),
    ("Shippo token", "shippo_live_" + rand(40, HEX)),
    ("SonarQube token", "squ_" + rand(40, HEX)),
    ("Sourcegraph token", "sgp_" + rand(16, HEX) + "_" + rand(40, HEX)),
    ("Twitter bearer token", "A" * 22 + rand(90, ALNUM + "%")),
    ("Typeform token", "tfp_" + rand(59, URLSAFE)),
    ("Yandex token", "AQVN" + rand(36, URLSAFE)),
    ("ClickHouse key", "4b1d" + rand(38)),
    ("Lob key", "live_" + rand(35, HEX)),
    (
        "Slack webhook",
        "hooks.slack.com/services/T" + rand(10, UPPER) + "/B" + rand(10, UPPER) + "/" + rand(24),
    ),
]


def test_every_provider_kind_has_a_token_here():
    assert {kind for kind, _ in PROVIDER_TOKENS} >= {row[0] for row in PROVIDERS}


# Wherever the token stands: a source line, prose, a diff hunk, the map's "N:" prefix, an
# excerpt's gutter, a notebook cell, a compose list.
TEMPLATES = [
    'SERVICE_KEY = "{}"\n',
    "2024-05-01 INFO rotated to {} today\n",
    "@@ -1 +1,2 @@\n+SERVICE={}\n",
    "12:HANDLE={}\n",
    "41\t    client.login('{}')\n",
    "  41│     client.login('{}')\n",
    '    "tok = \\"{}\\"\\n",\n',
    "      - SERVICE={}\n",
]


@pytest.mark.parametrize(
    ("kind", "token"), PROVIDER_TOKENS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(PROVIDER_TOKENS)]
)
@pytest.mark.parametrize("template", TEMPLATES)
def test_provider_formats_are_found_in_every_place(kind, token, template):
    text = template.format(token)
    out, findings = redact(text)
    assert token not in out
    assert findings, text


def _django_key(seed: int) -> str:
    rng = random.Random(seed)
    return "django-insecure-" + "".join(
        rng.choice(string.ascii_lowercase + string.digits + "!@#$%^&*(-_=+)") for _ in range(50)
    )


@pytest.mark.parametrize("seed", range(40))
def test_django_secret_keys_whatever_their_characters(seed):
    key = _django_key(seed)
    for text in (f"SECRET_KEY = '{key}'\n", f'SECRET_KEY="{key}"\n'):
        out, findings = redact(text)
        assert key not in out, text
        assert [f.kind for f in findings] == ["Django secret key"]
    # Without its prefix, in the same alphabet, the key is still found by its key name.
    bare = key.removeprefix("django-insecure-").replace("%", "!")
    assert bare not in redact(f"SECRET_KEY = '{bare}'\n")[0]


@pytest.mark.parametrize("seed", range(40))
def test_url_passwords_with_sub_delimiters(seed):
    rng = random.Random(seed)
    pw = "".join(rng.choice(ALNUM + "!$&()*+,;=-._~") for _ in range(14))
    text = f'DATABASE_URL = "postgres://admin:{pw}@db.internal:5432/app"\n'
    out, findings = redact(text)
    assert pw not in out and [f.kind for f in findings] == ["password in URL"]


def test_a_short_simple_url_password():
    out, _ = redact("postgres://admin:hunter2@db.example.com/app")
    assert out == "postgres://admin:" + marker("password in URL") + "@db.example.com/app"


@pytest.mark.parametrize("seed", range(40))
def test_unquoted_values_holding_underscores(seed):
    token = rand(32, URLSAFE, seed)
    if "_" not in token:
        token = token[:10] + "_" + token[11:]
    out, findings = redact(f"API_TOKEN={token}\n")
    assert token not in out and findings


SECRET = "Xk29aLmQ0pZr7TbWc3YhN8vD"

# (text, what must be left around the marker): item 4's key names and contexts.
SHAPES = [
    (f"token: {SECRET}\n", "token: {}\n"),
    (f"export CLOUDFLARE_API_TOKEN={SECRET}\n", "export CLOUDFLARE_API_TOKEN={}\n"),
    (f"ACME_CLIENT_ID={SECRET}\n", "ACME_CLIENT_ID={}\n"),
    (f'signing_key = "{SECRET}"\n', 'signing_key = "{}"\n'),
    (f"insert_key: {SECRET}\n", "insert_key: {}\n"),
    (f"client_secret={SECRET}\n", "client_secret={}\n"),
    (f"GET /v2/items?api_key={SECRET}&page=2\n", "GET /v2/items?api_key={}&page=2\n"),
    (f"Authorization: Bearer {SECRET}\n", "Authorization: Bearer {}\n"),
    (f"curl -H 'Authorization: Bearer {SECRET}' x\n", "curl -H 'Authorization: Bearer {}' x\n"),
    (f"PGPASSWORD={SECRET} psql -h db -U app\n", "PGPASSWORD={} psql -h db -U app\n"),
    (f"mysql -u root -p{SECRET} app < dump.sql\n", "mysql -u root -p{} app < dump.sql\n"),
    (f"ctl login --password {SECRET} --yes\n", "ctl login --password {} --yes\n"),
    (f"ctl login --password={SECRET}\n", "ctl login --password={}\n"),
    (
        f"<server><password>{SECRET}</password></server>\n",
        "<server><password>{}</password></server>\n",
    ),
    (
        f"<config><bittrexSecretAccessKey>{SECRET}</bittrexSecretAccessKey></config>\n",
        "<config><bittrexSecretAccessKey>{}</bittrexSecretAccessKey></config>\n",
    ),
    (f"    environment:\n      - password={SECRET}\n", "    environment:\n      - password={}\n"),
    (f"RUN DB_PASSWORD={SECRET} ./migrate.sh\n", "RUN DB_PASSWORD={} ./migrate.sh\n"),
    (f'"cmd": "set -e\\nDB_PASSWORD={SECRET}\\nrun"\n', '"cmd": "set -e\\nDB_PASSWORD={}\\nrun"\n'),
    (f'    "password = \\"{SECRET}\\"\\n",\n', '    "password = \\"{}\\"\\n",\n'),
    (
        f"curl -u deploy:{SECRET} https://ci.example.com\n",
        "curl -u deploy:{} https://ci.example.com\n",
    ),
    (
        f'<add key="ClearTextPassword" value="{SECRET}" />\n',
        '<add key="ClearTextPassword" value="{}" />\n',
    ),
    # Item 6's prefixes: a diff hunk's "+", the map's "1:", an excerpt's gutter.
    (f"+DB_PASSWORD={SECRET}\n", "+DB_PASSWORD={}\n"),
    (f"1:DB_PASSWORD={SECRET}\n", "1:DB_PASSWORD={}\n"),
    (f"12\tDB_PASSWORD={SECRET}\n", "12\tDB_PASSWORD={}\n"),
    (f"  12│ DB_PASSWORD={SECRET}\n", "  12│ DB_PASSWORD={}\n"),
    # A form's next field, a cookie's next attribute: the value ends before them.
    (f"curl -d user=ci&pass={SECRET}&submit=1\n", "curl -d user=ci&pass={}&submit=1\n"),
    (f"Set-Cookie: token={SECRET};Path=/\n", "Set-Cookie: token={};Path=/\n"),
]


@pytest.mark.parametrize(("text", "left"), SHAPES, ids=[s[1].strip()[:30] for s in SHAPES])
def test_everyday_shapes_only_the_value_goes(text, left):
    out, findings = redact(text)
    assert len(findings) == 1
    assert out == left.format(marker(findings[0].kind))


@pytest.mark.parametrize(
    "text",
    [
        "auth_pass = sentinel.sentinel_auth_pass;",  # redis sentinel.c (item 8)
        "password = self->cfg.password;",
        "expected_key = AWSS3Storage.prefix + folder + key",
        "return self.model.objects.filter(session_key=session_key).exists()",
        "lookup_key = (_make_id(receiver), _make_id(sender))",
        'BACKEND_SESSION_KEY = "_auth_user_backend"',
        "dollarToken = +dollarToken;",
        "Token::Number(text.parse().unwrap_or(0.0))",
        "<key>GraphDocumentVersion</key>",
        "token = request.headers.get('X-Token')",
        "--password $DB_PASSWORD",
        "mysql -u root -p$MYSQL_PWD app",
        "curl -u $USER:$TOKEN https://x",
        "Authorization: Bearer ${TOKEN}",
        "?api_key={api_key}&page=1",
        "<password>${db.password}</password>",
        "client_id = settings.GITHUB_CLIENT_ID",
        "password: Optional[str] = None",
        'SECRET_KEY = "%(secret)s"',
        "PASSWORD=%DB_PASSWORD%",
        "_normalized_key = _pep_440_key",  # pip's vendored distlib
        'EXTENSION_ID = "io.modelcontextprotocol/ui"',  # the mcp package
        # base64 of zero bytes opens as a Twitter bearer token does (redis's slowlog.tcl)
        "sadd set foo {" + "A" * 130 + "}",
        'EMPTY = "' + "A" * 86 + '=="',
        "".join(c * 40 for c in "ABCDEFGHIJKLMNOPQ"),  # curl's tests/data/test651 filler
        # a form's short field, a cookie's: the next "&name=" or ";name=" is not the value
        'curl -d "user=foobar&pass=12345&id=blablabla&ding=submit"',  # curl's MANUAL.md
        "Set-Cookie: XToken=xt;Domain=.z.x.com;Path=/",  # curl's tests/data/test171
        # a file's path, and a chain cut at the line's end (ansible's module docs)
        "account_key: /etc/pki/cert/private/account.key",
        "credentials: /path/to/credentials",
        "error_key: errors/404.htm",
        "ssh_key=~/.ssh/id_rsa.pub",
        "self.api_key = self.module.params. get('api_key')",
        # optional chaining (playwright's mcp/config.ts)
        "const browserToken = browser.launchOptions?.channel ?? browser?.browserName;",
        # near misses of the model APIs' formats: inside a word, short, no letter in hex
        "risk-0123456789abcdef0123456789abcdef (a task id)",
        "sk-01234567890123456789012345678901",
        "gsk_" + "a1" * 25 + " is short",
        "xai-grok-2-1212",
        "fc-" + "ab12" * 7,
        "lsv2_pt_notakey",
        "the ya29. prefix marks a Google access token",
    ],
)
def test_code_and_templates_are_not_secrets(text):
    assert redact(text)[1] == []


# --- item 7: secret files by another name ---------------------------------------------------


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        (".env~", "dotenv"),
        (".env_old", "dotenv"),
        (".env-prod", "dotenv"),
        ("env.txt", "dotenv"),
        ("dotenv", "dotenv"),
        (".envrc.local", "dotenv"),
        ("certs/key.pem.bak", "PEM file"),
        ("server.key.orig", "private key file"),
        (".pypirc.bak", "pypirc"),
        ("credentials.json.bak", "credentials"),
        (".netrc.bak", "netrc"),
        (".git-credentials~", "git credentials"),
        ("home/.aws/credentials.bak", "aws credentials"),
        (".kube/config.bak", "kubeconfig"),
        ("infra/terraform.tfstate.1", "terraform state"),
        ("config/secrets.yaml.bak", "credentials"),
    ],
)
def test_copies_and_variants_of_secret_files(path, kind):
    assert secret_filename(path) == kind


@pytest.mark.parametrize(
    "path",
    [
        "migrations/env.py",
        "environment.yml",
        "src/env.ts",
        "env.d.ts",
        ".env.example",
        ".env-example",
        "env.example",
        ".envrc.example",
        "envoy.yaml",
        "README.md.bak",
        "setup.py.orig",
        "notes.1",
        "x/.env.sample~",
    ],
)
def test_code_and_templates_named_like_env_are_not_secrets(path):
    assert secret_filename(path) is None


def test_a_dotenv_by_its_content(tmp_path):
    dotenv = tmp_path / "config.txt"
    dotenv.write_text("# deploy\nDEBUG=1\n\nexport DB_PASSWORD=Xk29aLmQ0pZr7TbWc3YhN8vD\n")
    assert secret_content(dotenv) == "dotenv (by its content)"
    os.link(dotenv, tmp_path / "settings")  # a hard link: same content, another name
    assert secret_path("settings", tmp_path / "settings") == "dotenv (by its content)"
    plain = tmp_path / "notes.txt"
    plain.write_text("DB_PASSWORD=x is set in the vault.\nSee the runbook.\n")
    assert secret_content(plain) is None
    flags = tmp_path / "flags.txt"
    flags.write_text("DEBUG=1\nWORKERS=4\n")  # KEY=value, but no credential named
    assert secret_content(flags) is None
    code = tmp_path / "settings.sh"
    code.write_text("DB_PASSWORD=Xk29aLmQ0pZr7TbWc3YhN8vD\n")  # code by its name: not read
    assert secret_content(code) is None


def test_only_a_dotenv_head_is_read(tmp_path):
    from ctxtools.secrets import names

    long = tmp_path / "config.txt"
    # KEY=value lines past the head, then a line no dotenv holds: only the head is judged
    long.write_text("API_TOKEN=Xk29aLmQ0pZr7TbWc3YhN8vD\n" * 200 + "not a dotenv line\n")
    assert len(names._head(long)) == names.SNIFF_BYTES
    assert secret_content(long) == "dotenv (by its content)"
    short = tmp_path / "short.txt"
    short.write_bytes(b"A=1\n")
    assert names._head(short) == b"A=1\n"
    assert secret_content(tmp_path) is None  # a directory: cannot be read, no secret
    assert secret_content(tmp_path / "gone.txt") is None
