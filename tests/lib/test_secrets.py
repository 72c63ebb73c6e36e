"""Secrets stay out of packs: secret files by name, high-confidence secrets by content.

The private keys in tests/data/secrets were generated for these tests (openssl genrsa /
genpkey / ecparam / pkcs8, ssh-keygen) and protect nothing. Token-shaped secrets are
built here from a seeded generator in each provider's documented format, or are the
providers' own documented examples (AWS's AKIAIOSFODNN7EXAMPLE, the jwt.io token).
"""

from __future__ import annotations

import json
import random
import re
import string
from pathlib import Path

import pytest

import ctxtools
from ctxtools.quoting import numbered
from ctxtools.secrets import KINDS, Finding, find_secrets, redact, secret_filename

DATA = Path(__file__).resolve().parents[1] / "data"
KEYS = DATA / "secrets"
ALNUM = string.ascii_letters + string.digits


def rand(n: int, alphabet: str = ALNUM, seed: int = 0) -> str:
    rng = random.Random(f"{seed}:{n}:{alphabet}")
    return "".join(rng.choice(alphabet) for _ in range(n))


LOWER = string.ascii_lowercase + string.digits
UPPER = string.ascii_uppercase + string.digits
HEX = "0123456789abcdef"


def _discord() -> str:
    import base64

    bot_id = base64.b64encode(b"123456789012345678").decode().rstrip("=")
    return bot_id + "." + rand(6, ALNUM + "_-") + "." + rand(38, ALNUM + "_-")


DISCORD = _discord()


def marker(kind: str) -> str:
    return f"[secret redacted: {kind}]"


# ---------------------------------------------------------------------------------------
# Secret files by name
# ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "kind"),
    [
        (".env", "dotenv"),
        ("app/.env", "dotenv"),
        (".env.local", "dotenv"),
        (".env.production", "dotenv"),
        ("deploy/prod.env", "dotenv"),
        (".envrc", "dotenv"),
        ("certs/server.pem", "PEM file"),
        ("config/master.key", "private key file"),
        ("SERVER.KEY", "private key file"),
        (".ssh/id_rsa", "ssh key"),
        ("id_ed25519", "ssh key"),
        ("keys/id_ecdsa_sk", "ssh key"),
        ("id_dsa.old", "ssh key"),
        ("client.p12", "pkcs12"),
        ("client.pfx", "pkcs12"),
        ("release.jks", "java keystore"),
        ("home/.aws/credentials", "aws credentials"),
        (".aws/credentials", "aws credentials"),
        ("credentials.json", "credentials"),
        ("client_secret_1234.apps.googleusercontent.com.json", "credentials"),
        ("config/secrets.yml", "credentials"),
        (".netrc", "netrc"),
        (".pgpass", "pgpass"),
        (".git-credentials", "git credentials"),
        (".docker/config.json", "docker credentials"),
        ("infra/terraform.tfstate", "terraform state"),
        ("putty.ppk", "putty key"),
    ],
)
def test_secret_files_by_name(path, kind):
    assert secret_filename(path) == kind


@pytest.mark.parametrize(
    "path",
    [
        ".env.example",
        ".env.sample",
        ".env.template",
        ".env.dist",
        ".env.local.example",
        ".env.example.local",
        "deploy/prod.env.example",
        "example.env.sample",
        "id_rsa.pub",
        ".ssh/id_ed25519.pub",
        "ctxtools/secrets.py",
        "tests/test_secrets.py",
        "env.py",
        "src/environment.ts",
        "dotenv.py",
        "keyboard.py",
        "keys.py",
        "credentials.py",
        "aws/credentials.md",
        "config.json",
        ".npmrc",
        "package.json",
        "docs/pem.md",
        "certs/cert.crt",
        "",
        "dir/",
    ],
)
def test_not_secret_files(path):
    assert secret_filename(path) is None


def test_the_test_keys_are_secret_files_by_name():
    assert secret_filename("tests/data/secrets/rsa_traditional.pem") == "PEM file"
    assert secret_filename("tests/data/secrets/id_ed25519") == "ssh key"
    assert secret_filename("tests/data/secrets/lookalikes.py.txt") is None
    assert secret_filename("tests/data/secrets/id_ed25519.pub") is None


# ---------------------------------------------------------------------------------------
# Private keys
# ---------------------------------------------------------------------------------------

PRIVATE = [
    "rsa_traditional.pem",
    "rsa_encrypted.pem",
    "ec.pem",
    "pkcs8_ed25519.pem",
    "pkcs8_encrypted.pem",
    "id_ed25519",
]


@pytest.mark.parametrize("name", PRIVATE)
def test_private_key_blocks_become_one_marker_and_keep_their_lines(name):
    text = (KEYS / name).read_text(encoding="ascii")
    out, findings = redact(text)
    assert findings == [Finding("private key", 1)]
    assert out == marker("private key") + "\n" * text.count("\n")
    assert "PRIVATE KEY" not in out


def _gutter(lines: list[str], numbers, padded: bool = False) -> str:
    """LINES numbered as a pack or an excerpt prints them (``12<TAB>``), or PADDED as they
    were printed before (``  12│ ``: text of an earlier version is redacted as well)."""
    if not padded:
        return "".join(numbered(n, t) + "\n" for n, t in zip(numbers, lines, strict=True))
    width = len(str(max(numbers)))
    return "".join(f"{n:>{width + 2}}│ {t}\n" for n, t in zip(numbers, lines, strict=True))


def _number_of(line: str) -> str:
    return line.split("\t")[0] if "\t" in line else line.split("│")[0].strip()


# A window mark or a cut needs a key of a few lines (pkcs8_ed25519.pem's body is one).
_SHAPES = [
    (name, shape)
    for name in PRIVATE
    for shape in ("excerpt gutter", "padded gutter", "map numbers", "windows", "cut", "padded cut")
    if shape in ("excerpt gutter", "padded gutter", "map numbers")
    or name != "pkcs8_ed25519.pem"
]


@pytest.mark.parametrize(("name", "shape"), _SHAPES)
def test_a_key_as_an_output_prints_it_is_redacted_and_keeps_its_numbers(name, shape):
    # ctx-excerpt prints "12<TAB>line" ("  12│ line" before) and a "⋮" between windows,
    # ctx-repomap "12:line": the block rule ran into the gutter and stopped at the first
    # line (curl's test certificates came out of ctx-excerpt whole).
    lines = (KEYS / name).read_text(encoding="ascii").splitlines()
    n = len(lines)
    padded = shape.startswith("padded")
    if shape in ("excerpt gutter", "padded gutter"):
        text = _gutter(lines, range(1, n + 1), padded)
    elif shape == "map numbers":
        text = "".join(f"{i}:{t}\n" for i, t in enumerate(lines, 1))
    elif shape == "windows":  # lines 1-3, a window mark, the rest
        text = _gutter(lines[:3], range(1, 4)) + "⋮\n" + _gutter(lines[4:], range(5, n + 1))
    else:  # the excerpt stops inside the block
        text = _gutter(lines[: n // 2], range(1, n // 2 + 1), padded)
    out, findings = redact("before\n" + text)
    assert findings == [Finding("private key", 2)]
    assert out.count("\n") == text.count("\n") + 1
    body = [t for t in lines if re.fullmatch(r"[A-Za-z0-9+/=]{16,}", t)]
    assert body and not any(t in out for t in body)
    assert "PRIVATE KEY" not in out
    if shape in ("excerpt gutter", "padded gutter", "cut", "padded cut"):  # numbers kept
        got = out.splitlines()[1:]
        assert [_number_of(ln) for ln in got] == [str(i) for i in range(1, len(got) + 1)]
    if shape == "map numbers":
        assert [ln.split(":")[0] for ln in out.splitlines()[2:]] == [
            str(i) for i in range(2, n + 1)
        ]


@pytest.mark.parametrize("name", ["cert.pem", "ed25519_public.pem", "id_ed25519.pub"])
def test_public_material_is_left_alone(name):
    text = (KEYS / name).read_text(encoding="ascii")
    out, findings = redact(text)
    assert findings == []
    assert out is text


def test_a_key_inside_code_keeps_line_numbers_and_the_code_around_it():
    key = (KEYS / "ec.pem").read_text(encoding="ascii")
    text = f'import ssl\n\nKEY = """{key}"""  # keep\nprint(KEY)\n'
    out, findings = redact(text)
    assert findings == [Finding("private key", 3)]
    lines = out.split("\n")
    assert len(lines) == len(text.split("\n"))
    assert lines[2] == 'KEY = """' + marker("private key")
    assert lines[2 + key.count("\n")] == '"""  # keep'
    assert lines[-2] == "print(KEY)"


def test_a_key_in_a_json_service_account_file():
    key = (KEYS / "pkcs8_ed25519.pem").read_text(encoding="ascii")
    doc = {
        "type": "service_account",
        "project_id": "demo-project",
        "private_key_id": "0123456789abcdef0123456789abcdef01234567",
        "private_key": key,
        "client_email": "bot@demo-project.iam.gserviceaccount.com",
    }
    text = json.dumps(doc, indent=2)
    out, findings = redact(text)
    assert findings == [Finding("private key", 5)]
    assert json.loads(out)["private_key"] == marker("private key") + "\n"
    assert json.loads(out)["private_key_id"] == doc["private_key_id"]


def test_a_key_in_concatenated_string_literals():
    key = (KEYS / "ec.pem").read_text(encoding="ascii").splitlines()
    text = "KEY = (\n" + "".join(f'    "{line}\\n"\n' for line in key) + ")\nx = 1\n"
    out, findings = redact(text)
    assert findings == [Finding("private key", 2)]
    assert out.count("\n") == text.count("\n")
    expected = 'KEY = (\n    "' + marker("private key") + "\n" * (len(key) - 1)
    assert out == expected + '\\n"\n)\nx = 1\n'


def test_a_key_cut_short_is_still_redacted():
    key = (KEYS / "rsa_traditional.pem").read_text(encoding="ascii")
    cut = key[: key.index("\n", 400)]  # an excerpt that stops inside the block
    out, findings = redact("before\n" + cut)
    assert findings == [Finding("private key", 2)]
    assert out == "before\n" + marker("private key") + "\n" * cut.count("\n")
    encrypted = (KEYS / "rsa_encrypted.pem").read_text(encoding="ascii")
    out, _ = redact(encrypted[: encrypted.index("\n", 300)])
    assert "DEK-Info" not in out and "Proc-Type" not in out


# ---------------------------------------------------------------------------------------
# Tokens
# ---------------------------------------------------------------------------------------

TOKENS = [
    ("AWS access key", "AKIAIOSFODNN7EXAMPLE"),
    ("AWS access key", "ASIA" + rand(16, string.ascii_uppercase + "234567")),
    ("GitHub token", "ghp_" + rand(36)),
    ("GitHub token", "ghs_" + rand(36, seed=1)),
    ("GitHub token", "github_pat_" + rand(22) + "_" + rand(59)),
    ("GitLab token", "glpat-" + rand(20, ALNUM + "_-")),
    ("Slack token", "xoxb-123456789012-1234567890123-" + rand(24)),
    ("Slack webhook", "https://hooks.slack.com/services/T0A1B2C3D/B0A1B2C3D/" + rand(24)),
    ("Anthropic key", "sk-ant-api03-" + rand(93, ALNUM + "_-") + "AA"),
    ("OpenAI key", "sk-proj-" + rand(120, ALNUM + "_-")),
    ("OpenAI key", "sk-" + rand(20) + "T3BlbkFJ" + rand(20, seed=2)),
    ("Google API key", "AIza" + rand(35, ALNUM + "_-")),
    ("Stripe key", "sk_live_" + rand(24)),
    ("Stripe key", "rk_test_" + rand(99)),
    ("Stripe key", "whsec_" + rand(32)),
    ("npm token", "npm_" + rand(36)),
    ("PyPI token", "pypi-AgEIcHlwaS5vcmc" + rand(70, ALNUM + "_-")),
    ("Hugging Face token", "hf_" + rand(34, string.ascii_letters)),
    ("SendGrid key", "SG." + rand(22, ALNUM + "_-") + "." + rand(43, ALNUM + "_-")),
    (
        "JWT",
        "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4gRG9l"
        "IiwiaWF0IjoxNTE2MjM5MDIyfQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c",
    ),
    # Issue 21: the formats the first rule set missed (each built here in its format).
    ("GitLab token", "glpat-" + rand(27, ALNUM + "_-") + ".01." + rand(9, LOWER)),
    ("GitLab token", "glrt-t1_" + rand(20, ALNUM)),
    ("GitLab token", "gldt-" + rand(20, ALNUM + "_-")),
    ("GitLab token", "glptt-" + rand(40, HEX)),
    ("Slack token", "xapp-1-A0" + rand(9, UPPER) + "-1234567890123-" + rand(64, HEX)),
    ("DigitalOcean token", "dop_v1_" + rand(64, HEX)),
    ("Shopify token", "shpat_" + rand(32, HEX)),
    ("Twilio key", "SK" + rand(32, HEX)),
    ("Discord token", DISCORD),
    ("Telegram bot token", "1234567890:AA" + rand(33, ALNUM + "_-")),
    ("Databricks token", "dapi" + rand(32, HEX)),
    ("Doppler token", "dp.pt." + rand(43)),
    ("Mailgun key", "key-" + rand(32, HEX)),
    ("age secret key", "AGE-SECRET-KEY-1" + rand(58, "QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L")),
    ("Vault token", "hvs." + rand(95, ALNUM + "_-")),
    ("Google OAuth secret", "GOCSPX-" + rand(28, ALNUM + "_-")),
    ("Postman key", "PMAK-" + rand(24, HEX) + "-" + rand(34, HEX)),
    ("Square token", "sq0atp-" + rand(22, ALNUM + "_-")),
    ("Linear key", "lin_api_" + rand(40)),
    ("Grafana token", "glsa_" + rand(32) + "_" + rand(8, HEX)),
    ("New Relic key", "NRAK-" + rand(27, UPPER + string.digits)),
    ("Pulumi token", "pul-" + rand(40, HEX)),
    ("Supabase token", "sbp_" + rand(40, HEX)),
    ("Dynatrace token", "dt0c01." + rand(24, UPPER + string.digits) + "." + rand(64, UPPER)),
]


@pytest.mark.parametrize(
    ("kind", "token"), TOKENS, ids=[f"{k}-{i}" for i, (k, _) in enumerate(TOKENS)]
)
@pytest.mark.parametrize(
    "template",
    ['API_KEY = "{}"\n', "token: {}\n", "export X={}", "curl -H 'Authorization: Bearer {}' x"],
)
def test_tokens_are_replaced_and_their_context_kept(kind, token, template):
    text = "line one\n" + template.format(token)
    out, findings = redact(text)
    assert findings == [Finding(kind, 2)]
    assert out == "line one\n" + template.format(marker(kind))


@pytest.mark.parametrize(
    "line",
    [
        "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
        'AWS_SECRET_ACCESS_KEY="wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"',
        '"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",',
        "awsSecretKey: wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    ],
)
def test_aws_secret_keys_by_their_key_name_only_the_value_goes(line):
    out, findings = redact(line)
    assert findings == [Finding("AWS secret key", 1)]
    assert out == line.replace("wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", marker("AWS secret key"))


def test_value_only_secrets():
    npmrc = "registry=https://registry.npmjs.org/\n//registry.npmjs.org/:_authToken=" + rand(36)
    out, findings = redact(npmrc)
    assert findings == [Finding("npm token", 2)]
    assert out.endswith(":_authToken=" + marker("npm token"))
    azure = "DefaultEndpointsProtocol=https;AccountName=demo;AccountKey=" + rand(86, ALNUM + "+/")
    out, findings = redact(azure + "==;EndpointSuffix=core.windows.net")
    assert findings == [Finding("Azure storage key", 1)]
    assert out == (
        "DefaultEndpointsProtocol=https;AccountName=demo;AccountKey="
        + marker("Azure storage key")
        + ";EndpointSuffix=core.windows.net"
    )


def test_several_findings_in_order_with_their_lines():
    key = (KEYS / "ec.pem").read_text(encoding="ascii")
    github = "ghp_" + rand(36)
    text = f"a = '{github}'\n{key}b = 'AKIAIOSFODNN7EXAMPLE'\nc = 'AKIAIOSFODNN7EXAMPLE'\n"
    out, findings = redact(text)
    last = 2 + key.count("\n")
    assert findings == [
        Finding("GitHub token", 1),
        Finding("private key", 2),
        Finding("AWS access key", last),
        Finding("AWS access key", last + 1),
    ]
    assert out.count("\n") == text.count("\n")
    assert out.split("\n")[last - 1] == f"b = '{marker('AWS access key')}'"


def test_tokens_inside_longer_words_are_not_tokens():
    assert redact("XAKIAIOSFODNN7EXAMPLE")[1] == []
    assert redact("AKIAIOSFODNN7EXAMPLEX")[1] == []
    assert redact("my_ghp_" + rand(36))[1] == []
    assert redact("ghp_" + rand(37))[1] == []
    assert redact("task-proj-" + rand(60))[1] == []


def test_every_kind_is_exercised():
    from tests.lib.test_secrets_shapes import PROVIDER_TOKENS, SHAPES

    tested = {kind for kind, _ in TOKENS} | {"private key", "AWS secret key", "Azure storage key"}
    tested |= {kind for kind, _, _ in VALUES} | {kind for kind, _ in PROVIDER_TOKENS}
    tested |= {f.kind for text, _ in SHAPES for f in redact(text)[1]}
    assert tested | {"npm token"} == set(KINDS)


# A private-key line of a PuTTY file, an SSH2 encrypted key (their bodies made here).
PPK = (
    "PuTTY-User-Key-File-3: ssh-ed25519\nEncryption: none\nComment: test\n"
    "Public-Lines: 2\n" + rand(64, ALNUM + "+/") + "\n" + rand(16, ALNUM) + "\n"
    "Private-Lines: 2\n" + rand(64, ALNUM + "+/", seed=5) + "\n" + rand(20, ALNUM, seed=6) + "\n"
    "Private-MAC: " + rand(64, HEX) + "\n"
)
SSH2 = (
    '---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----\nComment: "rsa-key-20260101"\n'
    + "".join(rand(70, ALNUM + "+/", seed=k) + "\n" for k in range(4))
    + "---- END SSH2 ENCRYPTED PRIVATE KEY ----\n"
)
PASSWORD = "Tr0ub4dor&3x" + rand(6, seed=9)

# (kind, text, the secret in it): secrets found by their place, only the value replaced.
VALUES = [
    ("PuTTY private key", PPK, PPK[PPK.index("Private-Lines") : PPK.index("Private-MAC")]),
    ("private key", SSH2, SSH2.rstrip("\n")),
    ("password in URL", f"DATABASE_URL=postgres://app:{PASSWORD}@db:5432/app", PASSWORD),
    ("password in URL", f"mysql://root:{PASSWORD}@localhost/x", PASSWORD),
    ("password in URL", "DATABASE_URL=postgres://app:wq9t2bx@db/app", "wq9t2bx"),
    ("password in URL", f"mongodb+srv://u:{PASSWORD}@cluster0.example.net/", PASSWORD),
    ("password in URL", f"REDIS_URL=redis://:{PASSWORD}@cache:6379/0", PASSWORD),
    ("password in URL", f"see https://deploy:{PASSWORD}@git.example.com/x.git", PASSWORD),
    (
        "docker auth",
        '{"auths": {"r.io": {"auth": "dXNlcjpUcjB1YjRkb3IzeDk="}}}',
        "dXNlcjpUcjB1YjRkb3IzeDk=",
    ),
    (
        "kubeconfig key",
        "    client-key-data: " + rand(80, ALNUM + "+/") + "==",
        rand(80, ALNUM + "+/") + "==",
    ),
    ("kubeconfig token", "  user:\n    token: " + rand(40, ALNUM + "._-"), rand(40, ALNUM + "._-")),
    ("password", f"db:\n  password: {PASSWORD}\n", PASSWORD),
    ("password", f'[database]\npassword = "{PASSWORD}"\n', PASSWORD),
    ("password", f'{{"api_key": "{PASSWORD}"}}', PASSWORD),
    ("password", f'db_password = "{PASSWORD}"\n', PASSWORD),
    ("password", f"export PROD_DB_PASSWORD={PASSWORD}\n", PASSWORD),
    ("password", f"export X_PASSWORD='{PASSWORD}'\n", PASSWORD),
    ("password", f'client_secret: "{PASSWORD}"\n', PASSWORD),
    ("password", f"connect(user='app', password='{PASSWORD}')", PASSWORD),
]


@pytest.mark.parametrize(("kind", "text", "secret"), VALUES, ids=[v[0] for v in VALUES])
def test_secrets_found_by_their_place(kind, text, secret):
    out, findings = redact(text)
    assert [f.kind for f in findings] == [kind]
    kept = marker(kind) + "\n" * secret.count("\n")  # the lines are kept
    assert secret not in out and out == text.replace(secret, kept, 1)


@pytest.mark.parametrize(
    "text",
    [
        'password = "changeme"',
        "password: ${DB_PASSWORD}",
        'password = "<password>"',
        "password = os.environ['DB_PASSWORD']",
        'PASSWORD = ""',
        "password = settings.DB_PASSWORD",
        "db_password: db_password",
        "password=PASSWORD",
        'password = "{password}"',
        'password="%(password)s"',
        "password: !vault |",
        'password = "xxxxxxxx"',
        "password = get_password(user)",
        "api_key = self.api_key",
        'help="Enter your password"',
        "mysql://USER:PASSWORD@HOST/db",
        "postgres://user:password@localhost/db",
        "redis://:${REDIS_PASSWORD}@cache",
        "redis://:pw@cache",
        "https://user:xxxxxx@example.com",
        "http://[::1]:8000/",
        '"auth": "bearer"',
        "token: ${{ secrets.GITHUB_TOKEN }}",
        "if password == 'hunter2hunter2':",
        "    token: TextGenerationStreamOutputToken",
        'HEADER_ACCESS_TOKEN = "X-Xet-Access-Token"',
        'TEST_SECRET = "lcccccccX2kcccccccY2jcccccccssIC"',
        # expressions through -> and :: (redis's src/acl.c, C++/Rust paths, PHP)
        "        password = c->argv[2];",
        "password = c->argv[j+2]->ptr;",
        'let password = Config::get("db.password");',
        "$password = $request->input('password');",
        "token = req->headers[AUTH_HEADER];",
    ],
)
def test_keyword_placeholders_and_names_are_left_alone(text):
    assert redact(text)[1] == []


# Issue 21, item 5: an escape sequence separates like a space.
@pytest.mark.parametrize(
    "template",
    [
        '{{"log": "line1\\n{}"}}',
        "a\\t{}",
        "q=x%20{}",
        "token%3D{}",
        "\\u0022{}\\u0022",
        "\\r\\n{}",
    ],
)
def test_a_token_after_an_escape_sequence_is_found(template):
    token = "ghp_" + rand(36)
    out, findings = redact(template.format(token))
    assert findings == [Finding("GitHub token", 1)] and token not in out


def test_an_aws_secret_with_json_escaped_slashes():
    secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"
    text = json.dumps({"aws_secret_access_key": secret}).replace("/", "\\/")
    assert "\\/" in text
    out, findings = redact(text)
    assert findings == [Finding("AWS secret key", 1)]
    assert "EXAMPLEKEY" not in out and json.loads(out)["aws_secret_access_key"] == marker(
        "AWS secret key"
    )


# Issue 21, item 6: capitals that start like an AWS key id are not one.
@pytest.mark.parametrize(
    "word",
    ["ASIAPACIFICSOUTHEAST", "AKIAEXAMPLEIDENTITY", "ACCAUNTSRECEIVABLEX", "ABIAWORDSANDMORELL"],
)
def test_word_like_aws_prefixes_are_not_keys(word):
    assert redact(f'REGIONS = ["{word}"]')[1] == []


def test_an_aws_key_id_of_letters_only_is_found_where_it_is_called_one():
    key = "AKIA" + "QWERTYUIOPASDFGH"
    assert redact(f"aws_access_key_id = {key}")[1] == [Finding("AWS access key", 1)]
    assert redact(f'"AccessKeyId": "{key}"')[1] == [Finding("AWS access key", 1)]


# ---------------------------------------------------------------------------------------
# No false positives
# ---------------------------------------------------------------------------------------


def test_lookalikes_are_left_alone():
    text = (KEYS / "lookalikes.py.txt").read_text(encoding="utf-8")
    assert "BEGIN RSA PRIVATE KEY" in text and "ghp_" in text and "sk-proj-" in text
    out, findings = redact(text)
    assert findings == []
    assert out is text


def test_real_code_of_this_project_and_its_test_data_has_no_secrets():
    """The library's own sources (this module's patterns among them) and every file of
    tests/data but the private keys made for these tests: many languages, transcripts,
    CJK and invalid UTF-8."""
    package = Path(ctxtools.__file__).resolve().parent
    paths = sorted(package.rglob("*.py")) + sorted(p for p in DATA.rglob("*") if p.is_file())
    checked = 0
    for path in paths:
        if path.parent == KEYS and path.name in PRIVATE:
            continue
        text = path.read_bytes().decode("utf-8", "surrogateescape")
        assert find_secrets(text) == [], path
        checked += 1
    assert checked > 40


def test_text_without_secrets_comes_back_unchanged():
    for text in ["", "\n", "plain words\n", "日本語のテキスト\n", "bad \udcff bytes"]:
        out, findings = redact(text)
        assert (out, findings) == (text, [])
        assert out is text


def test_same_input_same_output():
    key = (KEYS / "id_ed25519").read_text(encoding="ascii")
    text = "x\n" + key + "AKIAIOSFODNN7EXAMPLE\n" + "中文 " + "ghp_" + rand(36) + "\n"
    assert redact(text) == redact(text)
    assert redact(text)[0].count("\n") == text.count("\n")


def test_blocks_side_by_side_are_separate_findings():
    key = (KEYS / "rsa_traditional.pem").read_text(encoding="ascii")
    lines = key.count("\n")
    out, findings = redact(key * 3)
    assert findings == [Finding("private key", 1 + i * lines) for i in range(3)]
    assert out == (marker("private key") + "\n" * lines) * 3
    # A BEGIN line with no body is no key, even right before a real one.
    text = "-----BEGIN RSA PRIVATE KEY-----\n" + key
    assert redact(text)[1] == [Finding("private key", 2)]


def test_a_symlink_is_judged_by_its_target(tmp_path):
    from ctxtools.secrets import secret_path

    (tmp_path / ".env").write_text("DB_PASSWORD=x\n")
    (tmp_path / ".aws").mkdir()
    (tmp_path / ".aws" / "credentials").write_text("[default]\n")
    (tmp_path / "settings.txt").symlink_to(".env")
    (tmp_path / "aws.ini").symlink_to(tmp_path / ".aws" / "credentials")
    (tmp_path / "plain.txt").write_text("x\n")
    assert secret_path("settings.txt", tmp_path / "settings.txt") == "dotenv"
    assert secret_path("aws.ini", tmp_path / "aws.ini") == "aws credentials"
    assert secret_path("plain.txt", tmp_path / "plain.txt") is None
    assert secret_path(".env", None) == "dotenv"


def test_the_gates_never_hide_a_match(monkeypatch):
    """Every rule's gate matches wherever its pattern does: with the RE2 gates and with
    every rule run on every text (as without RE2), the findings are the same."""
    import sys

    from ctxtools.secrets import scan

    parts = ["é ç ü \udce9 " * 20 + "\n"]  # characters of several bytes come first
    parts += [f"x = '{token}'\n" for _, token in TOKENS] + [t + "\n" for _, t, _ in VALUES]
    parts += [(KEYS / name).read_text(encoding="ascii") for name in PRIVATE]
    parts += [(KEYS / "lookalikes.py.txt").read_text(encoding="utf-8")]
    text = "".join(parts) + "# café\ndb_password: Tr0ub4dor&3xZ\n"
    gated = find_secrets(text)
    assert len(gated) >= len(TOKENS) + len(VALUES)
    assert text[gated[-1][0] : gated[-1][1]] == "Tr0ub4dor&3xZ"
    monkeypatch.setitem(sys.modules, "re2", None)  # import re2 fails
    scan._compiled.cache_clear()
    try:
        assert scan._compiled()[0] is None
        assert find_secrets(text) == gated
    finally:
        scan._compiled.cache_clear()
