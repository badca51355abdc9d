"""Token formats of the providers named in issue 20, written from each
provider's documented format (prefix, alphabet, length), as templates:
`{class:n}` is n random characters of a class, `{class:lo-hi}` lo to hi.

Each entry: (provider, format name, template). Only formats whose token
carries its own prefix or signature are listed: a bare UUID (Snyk, old
Heroku and HubSpot keys) or a bare hex string cannot be told from any other
without a telling name; those are measured with a name instead (NAMED).
"""

import base64
import json
import random

CLASSES = {
    "alnum": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789",
    "hex": "0123456789abcdef",
    "HEX": "0123456789ABCDEF",
    "upnum": "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789",
    "lownum": "abcdefghijklmnopqrstuvwxyz0123456789",
    "lower": "abcdefghijklmnopqrstuvwxyz",
    "letters": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
    "digit": "0123456789",
    "b64": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/",
    "b64url": "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_",
    "base32": "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567",
    "lbase32": "abcdefghijklmnopqrstuvwxyz234567",
    "AtoL": "ABCDEFGHIJKL",
}


def expand(template: str, rnd: random.Random) -> str:
    out, i = [], 0
    while i < len(template):
        if template[i] == "{":
            j = template.index("}", i)
            spec = template[i + 1 : j]
            if spec == "uuid":
                out.append(
                    "-".join(
                        "".join(rnd.choice(CLASSES["hex"]) for _ in range(n))
                        for n in (8, 4, 4, 4, 12)
                    )
                )
            elif spec == "jwt":
                out.append(jwt(rnd))
            else:
                cls, n = spec.split(":")
                lo, _, hi = n.partition("-")
                k = rnd.randint(int(lo), int(hi or lo))
                out.append("".join(rnd.choice(CLASSES[cls]) for _ in range(k)))
            i = j + 1
        else:
            out.append(template[i])
            i += 1
    return "".join(out)


def b64url(b: bytes) -> str:
    return base64.urlsafe_b64encode(b).decode().rstrip("=")


def jwt(rnd: random.Random) -> str:
    head = b64url(json.dumps({"alg": "HS256", "typ": "JWT"}).encode())
    body = b64url(
        json.dumps(
            {"sub": str(rnd.randint(10**9, 10**10)), "iat": rnd.randint(1.6e9, 1.8e9)}
        ).encode()
    )
    sig = b64url(bytes(rnd.randrange(256) for _ in range(32)))
    return f"{head}.{body}.{sig}"


PREFIXED = [
    ("anthropic", "api key", "sk-ant-api03-{b64url:93}AA"),
    ("anthropic", "admin key", "sk-ant-admin01-{b64url:93}AA"),
    ("aws", "access key id", "AKIA{base32:16}"),
    ("aws", "temporary access key id", "ASIA{base32:16}"),
    ("gcp", "api key", "AIza{b64url:35}"),
    ("gcp", "oauth client secret", "GOCSPX-{b64url:28}"),
    ("github", "personal access token", "ghp_{alnum:36}"),
    ("github", "oauth token", "gho_{alnum:36}"),
    ("github", "user-to-server token", "ghu_{alnum:36}"),
    ("github", "server-to-server token", "ghs_{alnum:36}"),
    ("github", "refresh token", "ghr_{alnum:36}"),
    ("github", "fine-grained pat", "github_pat_{alnum:22}_{alnum:59}"),
    ("gitlab", "personal access token", "glpat-{b64url:20}"),
    ("gitlab", "deploy token", "gldt-{b64url:20}"),
    ("gitlab", "runner authentication token", "glrt-{b64url:20}"),
    ("gitlab", "ci/cd job token", "glcbt-{alnum:2}_{b64url:20}"),
    ("gitlab", "pipeline trigger token", "glptt-{hex:40}"),
    ("gitlab", "feed token", "glft-{b64url:20}"),
    ("gitlab", "incoming mail token", "glimt-{b64url:25}"),
    ("gitlab", "agent token", "glagent-{b64url:50}"),
    ("gitlab", "oauth application secret", "gloas-{b64url:64}"),
    ("gitlab", "scim token", "glsoat-{b64url:20}"),
    ("gitlab", "feature flags client token", "glffct-{b64url:20}"),
    ("gitlab", "runner registration token", "GR1348941{b64url:20}"),
    ("jwt", "json web token", "{jwt}"),
    ("openai", "project key", "sk-proj-{b64url:74}T3BlbkFJ{b64url:74}"),
    ("openai", "service account key", "sk-svcacct-{b64url:74}T3BlbkFJ{b64url:74}"),
    ("openai", "legacy user key", "sk-{alnum:20}T3BlbkFJ{alnum:20}"),
    ("slack", "bot token", "xoxb-{digit:12}-{digit:13}-{alnum:24}"),
    ("slack", "user token", "xoxp-{digit:12}-{digit:12}-{digit:13}-{hex:32}"),
    ("slack", "app-level token", "xapp-1-A{upnum:10}-{digit:13}-{hex:64}"),
    ("slack", "webhook url", "https://hooks.slack.com/services/T{upnum:8}/B{upnum:10}/{alnum:24}"),
    ("slack", "webhook url without scheme", "hooks.slack.com/services/T{upnum:8}/B{upnum:10}/{alnum:24}"),
    ("slack", "config refresh token", "xoxe-1-{upnum:146}"),
    ("stripe", "live secret key", "sk_live_51{alnum:97}"),
    ("stripe", "test secret key", "sk_test_51{alnum:97}"),
    ("stripe", "prod secret key", "sk_prod_{alnum:24}"),
    ("stripe", "live restricted key", "rk_live_{alnum:99}"),
    ("stripe", "webhook signing secret", "whsec_{alnum:32}"),
    ("npm", "access token", "npm_{alnum:36}"),
    ("pypi", "upload token", "pypi-AgEIcHlwaS5vcmc{b64url:70-150}"),
    ("twilio", "api key sid", "SK{hex:32}"),
    ("sendgrid", "api key", "SG.{b64url:22}.{b64url:43}"),
    ("azure", "entra client secret", "{alnum:3}8Q~{b64url:34}"),
    ("azure", "storage account key (identifiable)", "{b64:76}+ASt{b64:5}A=="),
    ("azure", "function key (identifiable)", "{b64url:44}AzFu{b64url:5}A=="),
    ("azure", "devops pat / cask key", "{alnum:52}JQQJ99{alnum:1}{AtoL:1}{alnum:16}{letters:1}{alnum:7}"),
    ("huggingface", "access token", "hf_{letters:34}"),
    ("huggingface", "organization token", "api_org_{letters:34}"),
    ("shopify", "access token", "shpat_{hex:32}"),
    ("shopify", "custom app token", "shpca_{hex:32}"),
    ("shopify", "private app token", "shppa_{hex:32}"),
    ("shopify", "shared secret", "shpss_{hex:32}"),
    ("digitalocean", "personal access token", "dop_v1_{hex:64}"),
    ("digitalocean", "oauth token", "doo_v1_{hex:64}"),
    ("digitalocean", "refresh token", "dor_v1_{hex:64}"),
    ("vault", "service token", "hvs.{b64url:95}"),
    ("vault", "batch token", "hvb.{b64url:140}"),
    ("vault", "legacy service token", "s.{alnum:24}"),
    ("grafana", "cloud token", "glc_{b64:80}"),
    ("grafana", "service account token", "glsa_{alnum:32}_{hex:8}"),
    ("grafana", "legacy api key", "eyJrIjoi{alnum:72}"),
    ("linear", "api key", "lin_api_{alnum:40}"),
    ("doppler", "personal token", "dp.pt.{alnum:43}"),
    ("doppler", "service token", "dp.st.prd.{alnum:43}"),
    ("doppler", "cli token", "dp.ct.{alnum:43}"),
    ("doppler", "service account token", "dp.sa.{alnum:43}"),
    ("square", "access token", "EAAA{b64url:60}"),
    ("square", "legacy access token", "sq0atp-{b64url:22}"),
    ("square", "oauth secret", "sq0csp-{b64url:43}"),
    ("flutterwave", "secret key", "FLWSECK-{hex:32}-X"),
    ("flutterwave", "test secret key", "FLWSECK_TEST-{hex:32}-X"),
    ("flutterwave", "encryption key", "FLWSECK_TEST{hex:12}"),
    ("hashicorp", "terraform cloud token", "{alnum:14}.atlasv1.{b64url:67}"),
    ("typeform", "personal access token", "tfp_{b64url:44}_{alnum:14}"),
    ("hubspot", "private app token", "pat-na1-{uuid}"),
    ("rubygems", "api key", "rubygems_{hex:48}"),
    ("nuget", "api key", "oy2{lbase32:43}"),
    ("microsoft teams", "incoming webhook", "https://acme.webhook.office.com/webhookb2/{uuid}@{uuid}/IncomingWebhook/{hex:32}/{uuid}"),
    ("sentry", "user token", "sntryu_{hex:64}"),
    ("readme", "api key", "rdme_{lownum:70}"),
    ("shippo", "live token", "shippo_live_{hex:40}"),
    ("dynatrace", "api token", "dt0c01.{upnum:24}.{upnum:64}"),
    ("heroku", "api key v2", "HRKU-AA{b64url:58}"),
    ("twitter", "bearer token", "AAAAAAAAAAAAAAAAAAAAA{alnum:4}AAAAAAAA{alnum:76}"),
    ("dropbox", "short-lived token", "sl.{b64url:135}"),
    ("dropbox", "long-lived token", "{lownum:11}AAAAAAAAAA{b64url:43}"),
    ("settlemint", "personal access token", "sm_pat_{alnum:16}"),
    ("jfrog", "api key", "AKCp{alnum:69}"),
    ("jfrog", "reference token", "cmVmd{alnum:59}"),
]

# A bare UUID is a secret only next to its name.
NAMED = [
    ("snyk", "api token", 'SNYK_TOKEN = "{uuid}"'),
    ("heroku", "api key", 'HEROKU_API_KEY = "{uuid}"'),
    ("hubspot", "legacy api key", 'hubspotApiKey = "{uuid}"'),
]
