"""The rule table: what ``redact`` recognises as a secret, as data.

Each rule is ``(kind, gate, pattern, group, checks)``:

* ``gate``: an RE2 pattern that matches wherever ``pattern`` can (usually its fixed
  prefix). All gates run together as one RE2 set, one pass over a text; a rule's
  ``pattern`` runs only on a text its gate matched. The gates are what keeps a scan fast:
  running sixty Python patterns, or even sixty substring tests, over every text would cost
  several times more.
* ``pattern``: a Python regex; ``group`` is the part of its match that is replaced.
* ``checks``: what a match must pass besides the pattern (``ctxtools.secrets.scan``):
  ``edge`` the character before it is not a letter, digit, ``_`` or ``-``, unless that is
  the tail of an escape sequence (``\\n``, ``\\t``, ``\\/``, ``\\u0022``, ``%3D``): escapes
  separate; ``aws-id`` an AWS key id's 16 characters hold a digit, or its line names AWS;
  ``hex-mix`` a hex body holds a digit and a letter; ``discord`` a Discord token's first part
  is a base64 user id; ``docker`` a docker ``auth`` value decodes to ``user:password``;
  ``url`` a URL's password is not a placeholder or a template (``url_password``);
  ``value`` the value looks like a credential, not a placeholder, a template or a name
  (``credential_value``); ``bare`` the same for a value without quotes, where a dotted or
  snake_case name is taken for a variable; ``lines`` the pattern is run only on the lines
  where the gate matches (a keyword's gate matches in many texts, its pattern is slow);
  ``at`` the pattern is matched only where the gate's empty group stands, to the line's end
  (the gate finds the key, the pattern reads the value after it).

The formats are the providers' published token formats (a format is a fact; the
regexes and this table are ours). Guesses by entropy are not made; keyword rules
(``password = "…"``) need a value that looks like a credential, and they, like every rule,
are measured for false positives on real code by ``bench/bench_secrets.py``.
"""

from __future__ import annotations

from ctxtools.secrets.providers import PROVIDERS

# Not followed by a character that would make the match the head of a longer word.
E = r"(?![A-Za-z0-9_\-])"

# A PEM private key: the BEGIN line, a body that holds at least one base64 run (so a
# parser's `"-----BEGIN RSA PRIVATE KEY-----"` constant is not a key), the END line. The
# body may be on real lines, or on one line with literal "\n" (a JSON service-account
# file), or in string literals. The END label must repeat the BEGIN label.
_PEM_BEGIN = (
    r"-----BEGIN (?P<label>(?:RSA |DSA |EC |OPENSSH |ENCRYPTED |DH |PGP |SSH2 )?"
    r"PRIVATE KEY(?: BLOCK)?)-----"
)
# A body character: base64, whitespace, a header's ": , . -", a string literal's quotes and
# escaped newlines, and what an output puts before each line (an excerpt's or a pack's
# ``12<TAB>`` or earlier ``  12│ ``, the ``⋮`` between two windows, a map's ``12:``, a
# diff's ``+``); never "-----", so a body cannot run into the next BEGIN or END line and
# each BEGIN costs at most one pass over its own body.
_PEM_BODY = r"(?:[A-Za-z0-9+/=\s:,.\\\"'│⋮]|-(?!----))"
# Between two lines of a block as an output prints them: the line break and the next
# line's gutter or window mark.
_PEM_SEP = r"(?:\s|\\n|[\"'+]|\d+[│\t]|⋮)+"
_PEM_HAS_BODY = r"(?=" + _PEM_BODY + r"{0,400}?[A-Za-z0-9+/]{40})"
PEM = _PEM_BEGIN + _PEM_HAS_BODY + _PEM_BODY + r"{0,20000}-----END (?P=label)-----"
# A block cut short (a truncated file, an excerpt): BEGIN, then its header and base64
# lines as far as they go.
PEM_CUT = (
    _PEM_BEGIN
    + _PEM_HAS_BODY
    + r"(?:" + _PEM_SEP + r"(?:[A-Za-z0-9+/=]{16,}|[A-Za-z][A-Za-z-]*:[^\n\\\"']*))+"
    + r"(?:(?:\s|\d+[│\t])*[A-Za-z0-9+/=]{1,15}(?=\s*\Z))?"  # a last line cut mid-way by the end
)
# The SSH2 (RFC 4716 style) encrypted key of some commercial SSH clients: four dashes and
# spaces around its BEGIN and END lines; the same body rule, or cut short.
SSH2 = (
    r"---- BEGIN SSH2 ENCRYPTED PRIVATE KEY ----"
    r"(?=[\s\S]{0,400}?[A-Za-z0-9+/]{40})"
    r"(?:[^-]|-(?!--- END SSH2 ENCRYPTED PRIVATE KEY ----)){0,20000}"
    r"(?:---- END SSH2 ENCRYPTED PRIVATE KEY ----)?"
)
# PuTTY's .ppk: the private part is the base64 lines that follow "Private-Lines: N".
PUTTY = (
    r"Private-Lines: *\d+\r?\n"
    r"(?:(?:[ \t]*\d+│ ?|\d+\t)?[A-Za-z0-9+/=]{1,128}(?:\r?\n|\Z)){1,400}"
)

# Keys whose value is a credential in config files and code: the key's last word (or
# words) names one: DB_PASSWORD, db-password, client_secret, apiKey, SECRET_KEY, token,
# CLOUDFLARE_API_TOKEN, signing_key, insert_key, ACME_CLIENT_ID, license-key...
_CRED_WORDS = (
    r"pass(?:word|wd|phrase)?|pwd|secret|token|api[_\-]?key|credentials?"
    r"|(?:client|access|account|app|secret|api)[_\-]?id"
)
# ...or a name that ends in "_key"/"-key"/"Key" (encryption_key, MAILGUN_PUB_KEY,
# signingKey), or an environment-style name that ends in "_ID".
# The gate of the keyword rules: a key's last word, then the start of a separator; RE2
# finds these, and the rules' patterns (the separator and the value) run only at its
# empty group, right after the key (``at``): a Python pattern that looked for the key
# itself would try every position of every line that holds "key=" or "id=".
KEY_GATE = (
    r"(?:(?i:" + _CRED_WORDS + r")|[A-Za-z0-9][_\-.](?i:key)|[a-z0-9]Key|_ID)()"
    r"[\"'`]?\]?[ \t]*(?:=|:|\?=)"
)
_SEP = r"[\"'`]?\]?[ \t]*(?:=|:=|=>|:(?!:)|\?=)[ \t]*"
# KEY = "value": code, JSON, TOML, HCL, a shell's export X="…", a notebook's \"…\".
# (a typed declaration: DB_PASSWORD: str = "…", apiKey: string = '…')
_TYPED = r"[ \t]*:[ \t]*[A-Za-z_][\w.\[\]|, ]{0,40}?[ \t]*=[ \t]*"
KEYWORD_QUOTED = (
    r"(?:" + _SEP + r"|" + _TYPED + r")(?P<q>\\?[\"'`])(?P<s>(?:(?!(?P=q))[^\r\n\\]){1,256})(?P=q)"
)
# KEY=value unquoted, wherever it stands (a line's start, after a diff's "+", a map's
# "12:", a compose list's "- ", mid-line "PGPASSWORD=x psql", after an escaped "\n"):
# the value runs to white space, a quote or a backslash, less a closing ";,)]}", or to the
# next "&name=" or ";name=" (a form's fields, a cookie's attributes: pass=1&id=x).
KEYWORD_BARE = (
    _SEP
    + r"(?P<s>[^\s\"'`\\]{1,256}?)(?=[;,)\]}]*(?:[\s\"'`\\]|\Z)|[;&][A-Za-z_][\w.\-]*=)"
)
# <password>…</password>, <apiKey>…</apiKey>: an XML element named like a key.
XML_ELEMENT = (
    r"<(?P<t>[A-Za-z0-9_.:\-]*?(?:(?i:"
    + _CRED_WORDS
    + r")|[A-Za-z0-9][_\-.](?i:key)|[a-z0-9]Key))>"
    r"(?P<s>[^<>\s]{1,256})</(?P=t)>"
)
# --password x, --password=x, -api-key x: a command-line flag named like a key.
CLI_FLAG = (
    r"(?<![A-Za-z0-9_\-])--?[A-Za-z0-9_\-]*?(?i:" + _CRED_WORDS + r"|[_\-]key)"
    r"(?:=|[ \t]+)(?P<q>[\"']?)(?P<s>[^\s\"'\-][^\s\"']{0,255})(?P=q)(?![^\s;|&)])"
)
FLAG_GATE = r"(?i)(?:^|[ \t])--?[a-z0-9_\-]*(?:pass|pwd|secret|token|key|credential|id)[a-z]*[ \t=]"
QUERY_GATE = r"(?i)[?&;][a-z0-9_.\-]*(?:pass|pwd|secret|token|key|credential|id|sig|signature)="
# A credential in a URL query: ?api_key=…, &token=…, &client_secret=….
URL_QUERY = (
    r"[?&;](?:[A-Za-z0-9_.\-]*?(?i:" + _CRED_WORDS + r"|key|sig|signature))"
    r"=(?P<s>[^&\s#\"'<>`;]{6,256})"
)
# An Authorization header's credentials: Bearer, Basic, Token, Bot...; a bare "Bearer x".
AUTH_HEADER = (
    r"(?i:(?:proxy-)?authorization[\"']?[ \t]*[:=][ \t]*[\"']?(?:bearer|basic|token|bot|"
    r"digest|apikey|sso-key)?[ \t]*|bearer[ \t]+)(?P<s>[A-Za-z0-9._~+/\-]{8,}=*)"
)
# mysql -pSECRET (the password glued to -p), curl -u user:SECRET.
MYSQL_P = r"\bmysql(?:dump|admin|import|sh|slap)?\b[^\n]*?[ \t]-p(?P<s>[^\s\"'\-][^\s\"']*)"
CURL_USER = (
    r"\bcurl\b[^\n]*?[ \t](?:-u|--user)(?:[ \t]+|=)?[\"']?[^\s:\"']*:(?P<s>[^\s\"']+?)"
    r"(?=[\"']?(?:\s|\Z))"
)
# NuGet.config: <add key="ClearTextPassword" value="…" />.
NUGET = (
    r"(?i:key)[ \t]*=[ \t]*\"ClearTextPassword\"[ \t]+(?i:value)[ \t]*=[ \t]*"
    r"\"(?P<s>[^\"]{1,256})\""
)

_AWS_GATE = "AKIA|ASIA|ABIA|ACCA|A3T"
_GITLAB = r"gl(?:pat|rt|dt|ptt|oas|cbt|imt|ft|soat|agent|ffct|ddt|wt)-"

Rule = tuple[str, str, str, str | int, tuple[str, ...]]

FORMATS: tuple[Rule, ...] = (
    ("private key", "PRIVATE KEY", PEM, 0, ()),
    ("private key", "PRIVATE KEY", PEM_CUT, 0, ()),
    ("private key", "BEGIN SSH2 ENCRYPTED PRIVATE KEY", SSH2, 0, ()),
    ("PuTTY private key", "Private-Lines:", PUTTY, 0, ()),
    # AWS: an access key id is a 4-letter type prefix and 16 base32 characters.
    (
        "AWS access key",
        _AWS_GATE,
        r"(?:AKIA|ASIA|ABIA|ACCA|A3T[A-Z0-9])[A-Z2-7]{16}(?![A-Za-z0-9])",
        0,
        ("edge", "aws-id"),
    ),
    (
        "AWS secret key",
        r"(?i)aws[_-]?secret|secret[_-]?access[_-]?key",
        r"(?i:aws[_\-]?secret[_\-]?(?:access[_\-]?)?key|secret[_\-]?access[_\-]?key)"
        r"[\"']?\s*(?::|=|=>|:=)\s*[\"']?(?P<s>(?:[A-Za-z0-9+]|\\?/){40})(?![A-Za-z0-9/+=])",
        "s",
        (),
    ),
    # GitHub: ghp_ (classic), gho_ (OAuth), ghu_/ghs_ (app user/server), ghr_ (refresh);
    # fine-grained github_pat_<22>_<59>.
    (
        "GitHub token",
        "gh[pousr]_|github_pat_",
        r"(?:gh[pousr]_[A-Za-z0-9]{36}|github_pat_[A-Za-z0-9_]{80,})" + E,
        0,
        ("edge",),
    ),
    # GitLab: personal, runner, deploy, pipeline-trigger, OAuth-app, CI-job, mail, feed,
    # SCIM, agent, feature-flag tokens; routable ones carry dotted parts after the body.
    (
        "GitLab token",
        _GITLAB,
        _GITLAB + r"[A-Za-z0-9_\-]{20,}(?:\.[A-Za-z0-9_\-]{2,}){0,3}" + E,
        0,
        ("edge",),
    ),
    (
        "Anthropic key",
        "sk-ant-",
        r"sk-ant-(?:api|admin|oat|ort)\d\d-[A-Za-z0-9_\-]{80,}" + E,
        0,
        ("edge",),
    ),
    (
        "OpenAI key",
        "sk-",
        r"sk-(?:(?:proj|svcacct|admin)-[A-Za-z0-9_\-]{40,}|[A-Za-z0-9]{20}T3BlbkFJ"
        r"[A-Za-z0-9]{20})" + E,
        0,
        ("edge",),
    ),
    ("Google API key", "AIza", r"AIza[0-9A-Za-z_\-]{35}" + E, 0, ("edge",)),
    ("Google OAuth secret", "GOCSPX-", r"GOCSPX-[A-Za-z0-9_\-]{28}" + E, 0, ("edge",)),
    (
        "Stripe key",
        "(?:sk|rk)_(?:live|test)_|whsec_",
        r"(?:(?:sk|rk)_(?:live|test)_[0-9A-Za-z]{24,}|whsec_[A-Za-z0-9]{32,})" + E,
        0,
        ("edge",),
    ),
    ("npm token", "npm_", r"npm_[A-Za-z0-9]{36}" + E, 0, ("edge",)),
    ("npm token", "_authToken", r"_authToken\s*=\s*(?P<s>(?!\$\{)[^\s\"']{16,})", "s", ()),
    ("PyPI token", "pypi-AgE", r"pypi-AgE[A-Za-z0-9_\-]{50,}" + E, 0, ("edge",)),
    ("Hugging Face token", "hf_", r"hf_[A-Za-z]{34}" + E, 0, ("edge",)),
    (
        "SendGrid key",
        r"SG\.",
        r"SG\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9_\-]{43}" + E,
        0,
        ("edge",),
    ),
    (
        "Azure storage key",
        "AccountKey=",
        r"AccountKey=(?P<s>[A-Za-z0-9+/]{86}==)",
        "s",
        (),
    ),
    (
        "JWT",
        r"\.ey[A-Za-z0-9_\-]{10}",
        r"ey[A-Za-z0-9_\-]{10,}\.ey[A-Za-z0-9_\-]{10,}\.[A-Za-z0-9_\-]{10,}=*" + E,
        0,
        ("edge",),
    ),
    # DigitalOcean personal (dop), OAuth (doo) and refresh (dor) tokens: v1 and 64 hex.
    ("DigitalOcean token", "do[opr]_v1_", r"do[opr]_v1_[a-f0-9]{64}" + E, 0, ("edge",)),
    # Shopify admin (shpat), custom-app (shpca), private-app (shppa) tokens, shared secret.
    (
        "Shopify token",
        "shp(?:at|ca|pa|ss)_",
        r"shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}" + E,
        0,
        ("edge",),
    ),
    # Twilio API key SID: SK and 32 hex.
    ("Twilio key", "SK[0-9a-fA-F]{32}", r"SK[0-9a-fA-F]{32}" + E, 0, ("edge", "hex-mix")),
    # Discord bot token: base64 of the bot's numeric id, a 6-character timestamp, an HMAC.
    (
        "Discord token",
        r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.",
        r"[MNO][A-Za-z0-9_\-]{23,27}\.[A-Za-z0-9_\-]{6}\.[A-Za-z0-9_\-]{27,40}" + E,
        0,
        ("edge", "discord"),
    ),
    # Telegram bot token: the bot's numeric id, a colon, 35 characters starting AA.
    (
        "Telegram bot token",
        "[0-9]{8}:AA",
        r"(?<![0-9])[0-9]{8,10}:AA[A-Za-z0-9_\-]{33}" + E,
        0,
        (),
    ),
    ("Databricks token", "dapi[a-f0-9]", r"dapi[a-f0-9]{32}(?:-\d)?" + E, 0, ("edge",)),
    # Doppler: personal, service, service-account, CLI, SCIM and audit tokens.
    (
        "Doppler token",
        r"dp\.(?:pt|st|sa|ct|scim|audit)\.",
        r"dp\.(?:pt|st|sa|ct|scim|audit)\.[A-Za-z0-9]{40,44}" + E,
        0,
        ("edge",),
    ),
    ("Mailgun key", "key-[0-9a-f]{32}", r"key-[0-9a-f]{32}" + E, 0, ("edge", "hex-mix")),
    # age: Bech32, upper case, 58 data characters.
    (
        "age secret key",
        "AGE-SECRET-KEY-1",
        r"AGE-SECRET-KEY-1[QPZRY9X8GF2TVDW0S3JN54KHCE6MUA7L]{58}" + E,
        0,
        (),
    ),
    # HashiCorp Vault service (hvs.) and batch (hvb.) tokens.
    ("Vault token", r"hv[sb]\.", r"hv[sb]\.[A-Za-z0-9_\-]{90,}" + E, 0, ("edge",)),
    ("Postman key", "PMAK-", r"PMAK-[a-f0-9]{24}-[a-f0-9]{34}" + E, 0, ("edge",)),
    (
        "Square token",
        "sq0(?:atp|csp)-",
        r"sq0(?:atp|csp)-[A-Za-z0-9_\-]{22,60}" + E,
        0,
        ("edge",),
    ),
    ("Linear key", "lin_api_", r"lin_api_[A-Za-z0-9]{40}" + E, 0, ("edge",)),
    ("Grafana token", "glsa_", r"glsa_[A-Za-z0-9]{32}_[A-Fa-f0-9]{8}" + E, 0, ("edge",)),
    ("New Relic key", "NRAK-", r"NRAK-[A-Za-z0-9]{27}" + E, 0, ("edge",)),
    ("Pulumi token", "pul-", r"pul-[a-f0-9]{40}" + E, 0, ("edge",)),
    ("Supabase token", "sbp_", r"sbp_[a-f0-9]{40}" + E, 0, ("edge",)),
    (
        "Dynatrace token",
        r"dt0c01\.",
        r"dt0c01\.[A-Z0-9]{24}\.[A-Z0-9]{64}" + E,
        0,
        ("edge",),
    ),
)
# The rules that need a context (a key, a URL, a header, a flag): after the formats, so
# where two overlap at the same start and length the provider's format names the kind.
GENERIC: tuple[Rule, ...] = (
    # A password in a URL's user part: scheme://user:password@host (postgres, mysql,
    # mongodb+srv, redis://:password@, amqp, https...).
    (
        "password in URL",
        r"://[^\s:/?#@]*:[^\s/?#@]+@",
        r"://[^\s:/?#@\"'<>\\]{0,256}:(?P<s>[^\s/?#@\"'<>\\]{1,256})@",
        "s",
        ("url",),
    ),
    # docker config.json: "auth" is base64 of user:password; kubeconfig's client key and
    # bearer token wherever the file lives.
    (
        "docker auth",
        '"auth"',
        r"\"auth\"\s*:\s*\"(?P<s>[A-Za-z0-9+/]{8,}={0,2})\"",
        "s",
        ("docker",),
    ),
    (
        "kubeconfig key",
        "client-key-data:",
        r"client-key-data:[ \t]*(?P<s>[A-Za-z0-9+/]{20,}={0,2})",
        "s",
        (),
    ),
    (
        "kubeconfig token",
        "token:",
        r"(?m)^[ \t]*(?:-[ \t]+)?token:[ \t]*(?P<s>[A-Za-z0-9._~+/=\-]{20,})[ \t]*$",
        "s",
        ("bare",),
    ),
    ("password", "ClearTextPassword", NUGET, "s", ("url",)),
    ("password in command", r"\bmysql", MYSQL_P, "s", ("lines", "url")),
    ("password in command", r"\bcurl\b", CURL_USER, "s", ("lines", "url")),
    (
        "authorization header",
        r"(?i)authorization|bearer[ \t]",
        AUTH_HEADER,
        "s",
        ("lines", "token"),
    ),
    ("credential in URL", QUERY_GATE, URL_QUERY, "s", ("lines", "url")),
    (
        "password",
        r"(?i)<[a-z0-9_.:\-]*(?:pass|pwd|secret|token|key|credential|id)[a-z]*>",
        XML_ELEMENT,
        "s",
        ("lines", "url"),
    ),
    ("password", KEY_GATE, KEYWORD_QUOTED, "s", ("at", "value")),
    ("password", KEY_GATE, KEYWORD_BARE, "s", ("at", "bare")),
    ("password in command", FLAG_GATE, CLI_FLAG, "s", ("lines", "bare")),
)
RULES = FORMATS + PROVIDERS + GENERIC
FIRST_GENERIC = len(FORMATS) + len(PROVIDERS)
