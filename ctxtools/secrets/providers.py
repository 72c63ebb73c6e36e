"""Provider token formats, as data: a token that carries its own prefix or shape, found
wherever it stands (a log line, prose, a URL), whatever key it is assigned to.

Each row is ``(kind, gate, pattern, checks)`` as in ``ctxtools.secrets.rules`` (the
replaced group is the whole match). The formats are the providers' published token
formats: a prefix, an alphabet and a length are facts; the regexes are ours, written
from those facts. Tokens without a format of their own (a 32-character hex key of some
service) are found by the key they are assigned to (``rules.GENERIC``), not here.
"""

from __future__ import annotations

# Not followed by a character that would make the match the head of a longer word.
E = r"(?![A-Za-z0-9_\-])"
B64 = r"[A-Za-z0-9+/]"
URLSAFE = r"[A-Za-z0-9_\-]"
HEX = r"[a-f0-9]"
UUID = r"[a-f0-9]{8}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{4}-[a-f0-9]{12}"

# (kind, gate, pattern); every row also gets the "edge" check unless listed in NO_EDGE.
_ROWS: tuple[tuple[str, str, str], ...] = (
    # Django's generated development keys: django-insecure- and 50 characters of its
    # alphabet (which holds "$ ( ) %": no template check applies to this format).
    ("Django secret key", "django-insecure-", r"django-insecure-[a-z0-9!@#$%^&*(\-_=+)]{50}"),
    # 1Password: the account Secret Key (A3-, then six groups) and service-account tokens.
    ("1Password secret key", "A3-", r"A3-[A-Z0-9]{6}(?:-[A-Z0-9]{5,6}){5}" + E),
    ("1Password token", "ops_eyJ", r"ops_eyJ[A-Za-z0-9+/=_\-]{60,}"),
    # Alibaba Cloud AccessKey ids start LTAI.
    ("Alibaba access key", "LTAI", r"LTAI[A-Za-z0-9]{12,24}" + E),
    # JFrog Artifactory: API keys start AKCp, reference tokens cmVmd (base64 of "ref").
    ("Artifactory key", "AKCp", r"AKCp[A-Za-z0-9]{60,80}" + E),
    ("Artifactory token", "cmVmd", r"cmVmd[A-Za-z0-9]{50,70}" + E),
    # Atlassian API tokens (ATATT3...) and Bitbucket/other app passwords (ATBB...).
    ("Atlassian token", "ATATT3|ATBB", r"(?:ATATT3|ATBB)[A-Za-z0-9_=\-]{24,}" + E),
    # Amazon Bedrock API keys: long-lived ABSK + base64; short-lived bedrock-api-key- +
    # base64 of "bedrock.amazonaws.com...".
    ("AWS Bedrock key", "ABSK", r"ABSK" + B64 + r"{100,}={0,2}"),
    (
        "AWS Bedrock key",
        "bedrock-api-key-",
        # (split so that this file does not hold the whole prefix)
        r"bedrock-api-key-YmVkcm9jay5hbWF6b25hd3Mu" r"Y29t[A-Za-z0-9+/=]*",
    ),
    # Azure AD (Entra) client secrets: three characters, a digit, Q~, then 31-34 more.
    ("Azure AD client secret", "Q~", r"[A-Za-z0-9_~.]{3}\dQ~[A-Za-z0-9_~.\-]{31,34}" + E),
    # Cloudflare Origin CA keys: v1.0-, 24 hex, -, 146 hex.
    ("Cloudflare origin CA key", r"v1\.0-", r"v1\.0-" + HEX + r"{24}-" + HEX + r"{146}" + E),
    # Dropbox short-lived (sl.) and long-lived (11 characters, ten A's, 43 more) tokens.
    ("Dropbox token", r"sl\.", r"sl\.[A-Za-z0-9_\-=]{100,}"),
    ("Dropbox token", "AAAAAAAAAA", r"[a-z0-9]{11}AAAAAAAAAA[a-z0-9_=\-]{43}" + E),
    # Grafana: Cloud tokens (glc_ + base64), legacy API keys (base64 JSON {"k":...).
    ("Grafana token", "glc_", r"glc_" + B64 + r"{32,}={0,2}"),
    ("Grafana token", "eyJrIjoi", r"eyJrIjoi" + B64 + r"{40,}={0,2}"),
    # HCP Terraform / Terraform Enterprise: 14 characters, .atlasv1., 60-70 more.
    ("Terraform token", r"\.atlasv1\.", r"[A-Za-z0-9]{14}\.atlasv1\.[A-Za-z0-9_=\-]{60,70}" + E),
    ("Heroku key", "HRKU-", r"HRKU-[A-Za-z0-9_\-]{60}" + E),
    # Microsoft Teams incoming webhooks (the URL is the credential).
    (
        "Teams webhook",
        r"webhook\.office\.com|\.logic\.azure\.com",
        r"https://[A-Za-z0-9.\-]+\.(?:webhook\.office\.com/webhookb2|logic\.azure\.com"
        r"[:0-9]*/workflows)/[^\s\"'<>`]{20,}",
    ),
    # Notion: ntn_ (2024) and secret_ + 43 (internal integrations, older).
    ("Notion token", "ntn_", r"ntn_[0-9]{11}[A-Za-z0-9]{35}" + E),
    ("OpenShift token", "sha256~", r"sha256~[A-Za-z0-9_\-]{43}" + E),
    ("Perplexity key", "pplx-", r"pplx-[A-Za-z0-9]{48}" + E),
    # The model APIs a coding agent's environment carries: Groq (gsk_ and 52), xAI (xai-
    # and 80), Replicate (r8_ and 37), OpenRouter (sk-or-v1- and 64 hex), the many
    # OpenAI-compatible APIs whose keys are sk- and 32 hex (DeepSeek's among them), and
    # the agents' tools: LangSmith (lsv2_pt_/lsv2_sk_, 32 hex, _, 10 hex), Tavily (tvly-),
    # Firecrawl (fc- and 32 hex), Pinecone (pcsk_, a short id, _, the key); Google's
    # OAuth access tokens (ya29.).
    ("Groq key", "gsk_", r"gsk_[A-Za-z0-9]{52}" + E),
    ("xAI key", "xai-", r"xai-[A-Za-z0-9]{80}" + E),
    ("Replicate token", "r8_", r"r8_[A-Za-z0-9]{37}" + E),
    ("OpenRouter key", "sk-or-v1-", r"sk-or-v1-" + HEX + r"{64}" + E),
    ("API key (sk-)", "sk-[a-f0-9]{32}", r"sk-" + HEX + r"{32}" + E),
    ("LangSmith key", "lsv2_", r"lsv2_(?:pt|sk)_" + HEX + r"{32}_" + HEX + r"{10}" + E),
    ("Tavily key", "tvly-", r"tvly-(?:[a-z]{3,4}-)?[A-Za-z0-9]{32,}" + E),
    ("Firecrawl key", "fc-[a-f0-9]{32}", r"fc-" + HEX + r"{32}" + E),
    ("Pinecone key", "pcsk_", r"pcsk_[A-Za-z0-9]{4,8}_[A-Za-z0-9]{40,}" + E),
    ("Google OAuth token", r"ya29\.", r"ya29\.[A-Za-z0-9_\-]{30,}" + E),
    ("PlanetScale token", "pscale_", r"pscale_(?:tkn|oauth|pw)_[A-Za-z0-9_=.\-]{32,64}" + E),
    ("RubyGems key", "rubygems_", r"rubygems_" + HEX + r"{48}" + E),
    (
        "Brevo key",
        "xkeysib-|xsmtpsib-",
        r"x(?:keysib|smtpsib)-" + HEX + r"{64}-[A-Za-z0-9]{16}" + E,
    ),
    # Sentry: org auth tokens (sntrys_ + base64 JSON + _ + secret), user tokens (sntryu_).
    ("Sentry token", "sntrys_eyJ", r"sntrys_eyJ[A-Za-z0-9+/=_\-]{60,}"),
    ("Sentry token", "sntryu_", r"sntryu_" + HEX + r"{64}" + E),
    # Square: production access tokens EAAA + 60, sandbox too; Facebook's EAA[BCM...].
    ("Square token", "EAAA", r"EAAA[A-Za-z0-9_\-+=]{60,}" + E),
    ("Facebook token", "EAA[BCDM]", r"EAA[BCDM][A-Za-z0-9]{80,}" + E),
    # HashiCorp Vault legacy service tokens: s. + 24 base62 (hold a digit and a letter).
    (
        "Vault token",
        r"s\.[A-Za-z0-9]{24}",
        r"s\.(?=[A-Za-z]*[0-9])(?=[0-9]*[A-Za-z])[A-Za-z0-9]{24}" + E,
    ),
    ("Vault token", r"hvr\.", r"hvr\.[A-Za-z0-9_\-]{20,}" + E),
    # Adobe client secrets, Clojars, Defined Networking, Duffel, EasyPost, Flutterwave.
    ("Adobe client secret", "p8e-", r"p8e-[A-Za-z0-9\-]{32}" + E),
    ("Clojars token", "CLOJARS_", r"CLOJARS_[a-z0-9]{60}" + E),
    ("Defined Networking token", "dnkey-", r"dnkey-[a-z0-9=_\-]{26}-[a-z0-9=_\-]{52}" + E),
    ("Duffel token", "duffel_(?:test|live)_", r"duffel_(?:test|live)_[A-Za-z0-9_\-=]{43}" + E),
    ("EasyPost key", "EZ[AT]K", r"EZ[AT]K[A-Za-z0-9]{54}" + E),
    (
        "Flutterwave key",
        "FLW(?:PUBK|SECK)",
        r"FLW(?:PUBK|SECK)_TEST-?[A-Za-z0-9]{12,32}(?:-X)?" + E,
    ),
    # Fly.io macaroons (fm1_/fm2_ base64), org tokens (fo1_).
    (
        "Fly.io token",
        "fm[12][ar]?_|fo1_",
        r"(?:fm[12][ar]?_" + B64 + r"{40,}={0,2}|fo1_[\w\-]{43})",
    ),
    ("Frame.io token", "fio-u-", r"fio-u-[A-Za-z0-9_=\-]{64}" + E),
    ("GitLab token", "GR1348941", r"GR1348941[A-Za-z0-9_\-]{20}" + E),
    ("GitLab session", "_gitlab_session=", r"_gitlab_session=(?P<s>[0-9a-z]{32})" + E),
    ("Hugging Face token", "api_org_", r"api_org_[A-Za-z]{34}" + E),
    (
        "Harness token",
        r"(?:pat|sat)\.",
        r"(?:pat|sat)\.[A-Za-z0-9_\-]{22}\.[A-Za-z0-9]{24}\.[A-Za-z0-9]{20}" + E,
    ),
    ("Infracost key", "ico-", r"ico-[A-Za-z0-9]{32}" + E),
    ("Intra42 secret", "s-s4t2", r"s-s4t2(?:ud|af)-" + HEX + r"{64}" + E),
    ("Mailchimp key", "-us[0-9]", HEX + r"{32}-us[0-9]{1,2}" + E),
    ("Mailgun key", "pubkey-", r"pubkey-" + HEX + r"{32}" + E),
    (
        "Mapbox token",
        r"[ps]k\.eyJ|[ps]k\.[A-Za-z0-9]{60}",
        r"[ps]k\.[A-Za-z0-9]{60,}\.[A-Za-z0-9_\-]{20,}" + E,
    ),
    ("MaxMind key", "_mmk", r"[A-Za-z0-9]{6}_[A-Za-z0-9]{29}_mmk" + E),
    (
        "New Relic key",
        "NRJS-|NRII-|NRAA-",
        r"(?:NRJS-" + HEX + r"{19}|NRII-[A-Za-z0-9\-]{32}|NRAA-[a-f0-9]{27})" + E,
    ),
    ("Octopus key", "API-[A-Z0-9]", r"API-[A-Z0-9]{26}" + E),
    (
        "Plaid token",
        "access-(?:sandbox|development|production)-",
        r"access-(?:sandbox|development|production)-" + UUID + E,
    ),
    ("Prefect key", "pnu_", r"pnu_[A-Za-z0-9]{36}" + E),
    ("ReadMe key", "rdme_", r"rdme_[a-z0-9]{70}" + E),
    ("Scalingo token", "tk-us-", r"tk-us-[A-Za-z0-9_\-]{48}" + E),
    ("SettleMint token", "sm_[aps]at_", r"sm_(?:aat|pat|sat)_[A-Za-z0-9]{16}" + E),
    ("Shippo token", "shippo_(?:live|test)_", r"shippo_(?:live|test)_[a-fA-F0-9]{40}" + E),
    ("SonarQube token", "sq[apu]_", r"sq[apu]_[A-Za-z0-9_\-]{30,}" + E),
    ("Sourcegraph token", "sgp_", r"sgp_(?:" + HEX + r"{16}_)?" + HEX + r"{40}" + E),
    ("Twitter bearer token", "AAAAAAAAAAAAAAAAAAAAA", r"A{21,22}[A-Za-z0-9%]{60,}" + E),
    ("Typeform token", "tfp_", r"tfp_[A-Za-z0-9_=.\-]{50,}" + E),
    (
        "Yandex token",
        r"t1\.|AQVN|YC[A-Za-z0-9_\-]{38}",
        r"(?:t1\.[A-Za-z0-9_\-]+=*\.[A-Za-z0-9_\-]{80,}=*|AQVN[A-Za-z0-9_\-]{35,38})" + E,
    ),
    ("ClickHouse key", "4b1d", r"4b1d[A-Za-z0-9]{38}" + E),
    (
        "Lob key",
        "(?:live|test)_(?:pub_)?[a-f0-9]{31}",
        r"(?:live|test)_(?:pub_)?" + HEX + r"{31,35}" + E,
    ),
    # Slack: every xox* type (bot, user, app-level, configuration, refresh, legacy) and
    # the app tokens (xapp-).
    (
        "Slack token",
        "xox|xapp-",
        r"(?:xox[abposr]-(?:[0-9]+-)+[A-Za-z0-9]{8,}|xoxe(?:\.xox[bp])?-\d-[A-Za-z0-9]{40,}"
        r"|xoxe-(?:[0-9]+-)+[A-Za-z0-9]{8,}"
        r"|xapp-\d-[A-Z0-9]{8,}-\d{6,}-[A-Za-z0-9]{5,})" + E,
    ),
    (
        "Slack webhook",
        r"hooks\.slack\.com/",
        r"(?:https?://)?hooks\.slack\.com/(?:services|workflows|triggers)/[A-Za-z0-9_+/\-]{20,}",
    ),
    # Discord webhooks: the URL (the channel's id and the webhook's token) is the credential.
    (
        "Discord webhook",
        r"discord(?:app)?\.com/api/webhooks/",
        r"(?:https?://)?(?:[a-z]+\.)?discord(?:app)?\.com/api/webhooks/[0-9]{17,20}/"
        r"[A-Za-z0-9_\-]{60,68}" + E,
    ),
    # Cursor-style and other secrets with well-known prefixes of code hosts.
    ("Bitbucket token", "ATCTT3", r"ATCTT3[A-Za-z0-9_=\-]{24,}" + E),
)

NO_EDGE = frozenset(
    {"Django secret key", "1Password token", "AWS Bedrock key", "Sentry token", "Teams webhook"}
)

# Checks of a match beyond its edge: a Twitter bearer token opens with a run of "A"s, and
# so does base64 of zero bytes (test fixtures, empty images): a token's characters vary.
_MORE_CHECKS = {"Twitter bearer token": ("varied",), "API key (sk-)": ("hex-mix",)}

PROVIDERS: tuple[tuple[str, str, str, str | int, tuple[str, ...]], ...] = tuple(
    (
        kind,
        gate,
        pattern,
        "s" if "(?P<s>" in pattern else 0,
        (() if kind in NO_EDGE else ("edge",)) + _MORE_CHECKS.get(kind, ()),
    )
    for kind, gate, pattern in _ROWS
)
